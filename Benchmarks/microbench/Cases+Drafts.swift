import BenchmarkSupport
import Foundation
import ObjectGraph

extension Cases {
  // MARK: Objects related before any is inserted

  /// A tree built before it is inserted (its relationships kept apart from the instances,
  /// so that a tree the app drops is freed): each child must cost about the same under a
  /// root of 1,000 children and one of 100,000, and what a box keeps is beside a box in no
  /// relation's ("Box() detached").
  static func drafts() -> [MicroBenchmark] {
    [1_000, 100_000].flatMap { (size: Int) -> [MicroBenchmark] in
      let label = size.formatted(.number.grouping(.automatic))
      return [
        MicroBenchmark(
          "draft: child.parent = new root, \(label) children", iterations: size
        ) {
          let root = Box()
          return { number in
            child(number).parent = root
            withExtendedLifetime(root) {}
          }
        },
        MicroBenchmark("draft: root.children.append(Box()), \(label) children", iterations: size) {
          let root = Box()
          return { number in
            root.children.append(child(number))
          }
        },
        MicroBenchmark("draft: insert a new tree of \(label) children (per box)", batchOf: size) {
          let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
          let root = Box()
          for number in 0..<size { child(number).parent = root }
          return { _ in
            container.mainContext.insert(root)
          }
        },
        MicroBenchmark("draft: drop a new tree of \(label) children (per box)", batchOf: size) {
          var root: Box? = Box()
          for number in 0..<size { child(number).parent = root }
          return { _ in
            root = nil
          }
        },
      ]
    }
  }

  /// A new box with a title, in no context.
  private static func child(_ number: Int) -> Box {
    let box = Box()
    box.title = "Box \(number)"
    return box
  }
}
