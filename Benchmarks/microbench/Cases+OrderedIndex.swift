import BenchmarkSupport
import Foundation
import ObjectGraph

extension Cases {
  // MARK: Ordered indexes

  /// Range, top-k and page queries on indexed attributes, and the index's cost to changes,
  /// at 1,000 and 100,000 events, each beside the same query on an attribute without an
  /// index: the indexed figures should grow like log n (a few times at most), the scans a
  /// hundredfold.
  static func orderedIndexes() -> [MicroBenchmark] {
    [1_000, 100_000].flatMap { count -> [MicroBenchmark] in
      let label = "ordered index of \(count.formatted(.number.grouping(.automatic)))"
      let start = EventFixture.base + Double(count / 4)
      let end = EventFixture.base + Double(count / 2)
      let scanIterations = count == 1_000 ? 2_000 : 20
      return [
        MicroBenchmark("\(label): fetchCount of a date range", iterations: 20_000) {
          let fixture = try EventFixture(count: count)
          let descriptor = FetchDescriptor<Event>(
            predicate: #Predicate { $0.created >= start && $0.created < end })
          return { _ in blackHole(try fixture.context.fetchCount(descriptor)) }
        },
        MicroBenchmark("\(label): fetchCount of a date range, scan", iterations: scanIterations) {
          let fixture = try EventFixture(count: count)
          let descriptor = FetchDescriptor<Event>(
            predicate: #Predicate { $0.unindexedCreated >= start && $0.unindexedCreated < end })
          return { _ in blackHole(try fixture.context.fetchCount(descriptor)) }
        },
        MicroBenchmark("\(label): top 20 by created", iterations: 20_000) {
          let fixture = try EventFixture(count: count)
          var descriptor = FetchDescriptor<Event>(
            sortBy: [SortDescriptor(\.created, order: .reverse)])
          descriptor.fetchLimit = 20
          return { _ in blackHole(try fixture.context.fetch(descriptor)) }
        },
        MicroBenchmark("\(label): top 20 by created, scan", iterations: scanIterations) {
          let fixture = try EventFixture(count: count)
          var descriptor = FetchDescriptor<Event>(
            sortBy: [SortDescriptor(\.unindexedCreated, order: .reverse)])
          descriptor.fetchLimit = 20
          return { _ in blackHole(try fixture.context.fetch(descriptor)) }
        },
        MicroBenchmark("\(label): page of 20 by title at n/2", iterations: 20_000) {
          let fixture = try EventFixture(count: count)
          var descriptor = FetchDescriptor<Event>(sortBy: [SortDescriptor(\.title)])
          descriptor.fetchOffset = count / 2
          descriptor.fetchLimit = 20
          return { _ in blackHole(try fixture.context.fetch(descriptor)) }
        },
        MicroBenchmark("\(label): page of 20 by title at n/2, scan", iterations: scanIterations) {
          let fixture = try EventFixture(count: count)
          var descriptor = FetchDescriptor<Event>(sortBy: [SortDescriptor(\.unindexedTitle)])
          descriptor.fetchOffset = count / 2
          descriptor.fetchLimit = 20
          return { _ in blackHole(try fixture.context.fetch(descriptor)) }
        },
        MicroBenchmark("\(label): set created (indexed)", iterations: 20_000) {
          let fixture = try EventFixture(count: count)
          var random = FixtureRandom(seed: 7)
          return { _ in
            let event = fixture.events[random.index(below: count)]
            event.created = EventFixture.randomValues(&random, count: count).0
          }
        },
        MicroBenchmark("\(label): set unindexedCreated", iterations: 20_000) {
          let fixture = try EventFixture(count: count)
          var random = FixtureRandom(seed: 7)
          return { _ in
            let event = fixture.events[random.index(below: count)]
            event.unindexedCreated = EventFixture.randomValues(&random, count: count).0
          }
        },
        MicroBenchmark("\(label): insert an event (2 ordered indexes)", iterations: 20_000) {
          let fixture = try EventFixture(count: count)
          var random = FixtureRandom(seed: 9)
          return { _ in
            let (created, title) = EventFixture.randomValues(&random, count: count)
            let event = Event()
            (event.created, event.title) = (created, title)
            fixture.context.insert(event)
          }
        },
        MicroBenchmark("\(label): insert a plain event (no index)", iterations: 20_000) {
          let fixture = try EventFixture(count: count)
          var random = FixtureRandom(seed: 9)
          return { _ in
            let (created, title) = EventFixture.randomValues(&random, count: count)
            let event = PlainEvent()
            (event.created, event.title) = (created, title)
            fixture.context.insert(event)
          }
        },
      ]
    }
  }
}
