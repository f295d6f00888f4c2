import BenchmarkSupport
import Foundation
import ObjectGraph

extension Cases {
  // MARK: Notifications

  /// What keeping observers current costs: one change delivered to many object observers,
  /// and a live query of 101,100 results kept current against re-running its fetch.
  static func notifications() -> [MicroBenchmark] {
    [
      MicroBenchmark("deliver: one change to 1,000 object observers", iterations: 10_000) {
        let fixture = try BoxFixture(roots: 1)
        let boxes = try fixture.context.fetch(FetchDescriptor<Box>())
        let observed = Array(boxes.prefix(1_000))
        var heard = 0
        let tokens = observed.map { box in
          fixture.context.observe(box, keyPaths: [\.title]) { _ in heard += 1 }
        }
        return { number in
          observed[number % observed.count].title = "Changed \(number)"
          fixture.context.processPendingChanges()
          withExtendedLifetime(tokens) {}
        }
      },
      MicroBenchmark(
        "live query: 101,100 sorted results, one change kept current", iterations: 1_000
      ) {
        let fixture = try BoxFixture(roots: 100)
        let boxes = try fixture.context.fetch(FetchDescriptor<Box>())
        let query = try fixture.context.liveQuery(
          FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)]))
        return { number in
          boxes[(number &* 7919) % boxes.count].title = "Renamed \(number)"
          fixture.context.processPendingChanges()
          blackHole(query.results.count)
        }
      },
      MicroBenchmark("re-fetch: 101,100 sorted results after one change", iterations: 20) {
        let fixture = try BoxFixture(roots: 100)
        let boxes = try fixture.context.fetch(FetchDescriptor<Box>())
        let descriptor = FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)])
        return { number in
          boxes[(number &* 7919) % boxes.count].title = "Renamed \(number)"
          blackHole(try fixture.context.fetch(descriptor))
        }
      },
    ]
  }
}
