import BenchmarkSupport
import Foundation
import ObjectGraph

extension Cases {
  // MARK: Queries without an index

  /// appbench's queries on the attributes no index covers, at 1 root (1,011 boxes) and 99
  /// roots (100,089 boxes): each scans every box, so a query costs O(n) and the figures
  /// should grow a hundredfold, no more.
  static func queries() -> [MicroBenchmark] {
    [1, 99].flatMap { roots in
      let count = roots * 1011
      let label = count.formatted(.number.grouping(.automatic))
      let iterations = roots == 1 ? 2_000 : 20
      let start = Date(timeIntervalSince1970: 1_700_000_000 + Double(count / 4))
      let end = Date(timeIntervalSince1970: 1_700_000_000 + Double(count / 2))
      return [
        MicroBenchmark("query of \(label): title == x", iterations: iterations) {
          let fixture = try BoxFixture(roots: roots)
          return { number in
            let title = "Box \((number &* 7919) % count)"
            blackHole(
              try fixture.context.fetch(
                FetchDescriptor<Box>(predicate: #Predicate { $0.title == title })))
          }
        },
        MicroBenchmark("query of \(label): title.contains(\"42\")", iterations: iterations) {
          let fixture = try BoxFixture(roots: roots)
          let descriptor = FetchDescriptor<Box>(predicate: #Predicate { $0.title.contains("42") })
          return { _ in blackHole(try fixture.context.fetch(descriptor)) }
        },
        MicroBenchmark("query of \(label): compound", iterations: iterations) {
          let fixture = try BoxFixture(roots: roots)
          let descriptor = FetchDescriptor<Box>(
            predicate: #Predicate {
              ($0.title.contains("7") && $0.created < end) || $0.parent == nil
            })
          return { _ in blackHole(try fixture.context.fetch(descriptor)) }
        },
        MicroBenchmark("query of \(label): fetchCount of a date range", iterations: iterations) {
          let fixture = try BoxFixture(roots: roots)
          let descriptor = FetchDescriptor<Box>(
            predicate: #Predicate { $0.created >= start && $0.created < end })
          return { _ in blackHole(try fixture.context.fetchCount(descriptor)) }
        },
        MicroBenchmark("query of \(label): top 20 by created", iterations: iterations) {
          let fixture = try BoxFixture(roots: roots)
          var descriptor = FetchDescriptor<Box>(sortBy: [SortDescriptor(\.created, order: .reverse)]
          )
          descriptor.fetchLimit = 20
          return { _ in blackHole(try fixture.context.fetch(descriptor)) }
        },
        MicroBenchmark("query of \(label): page of 20 by title at n/2", iterations: iterations) {
          let fixture = try BoxFixture(roots: roots)
          var descriptor = FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)])
          descriptor.fetchOffset = count / 2
          descriptor.fetchLimit = 20
          return { _ in blackHole(try fixture.context.fetch(descriptor)) }
        },
      ]
    }
  }
}
