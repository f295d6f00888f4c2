import BenchmarkSupport
import Foundation
import ObjectGraph

extension Cases {
  // MARK: Several contexts

  /// What a save costs another context of the container, at 1,000 and at 100,000 saved
  /// boxes: each save in one context (a renamed box, or a child appended to a wide list) is
  /// merged by the other when it is next used; the saving context pays for recording it.
  /// Both must cost the same at both sizes. A dormant main context (one the app never asked
  /// for) merges each save on the saving thread instead.
  static func merges() -> [MicroBenchmark] {
    [1_000, 100_000].flatMap { size -> [MicroBenchmark] in
      let label = size.formatted(.number.grouping(.automatic))
      return [
        MicroBenchmark(
          "merge: rename + save, merged by another context, in \(label)", iterations: 2_000
        ) {
          let (container, saving, boxes) = try mergeFixture(size: size)
          let other = try container.newContext()
          var random = FixtureRandom(seed: 5)
          return { number in
            boxes[random.index(below: boxes.count)].title = "Renamed \(number)"
            try saving.save()
            other.processPendingChanges()
          }
        },
        MicroBenchmark(
          "merge: append + save, merged by another context, in \(label)", iterations: 2_000
        ) {
          let (container, saving, boxes) = try mergeFixture(size: size)
          let other = try container.newContext()
          let wide = boxes[0].parent!
          return { number in
            let box = Box()
            box.title = "Appended \(number)"
            wide.children.append(box)
            try saving.save()
            other.processPendingChanges()
          }
        },
        // A save of 1,000 changed boxes, merged or not: the difference is the merge's cost,
        // which must be that of the changes, not of the store.
        MicroBenchmark(
          "merge: 1,000 renames + save, merged by another context, in \(label)", iterations: 100
        ) {
          let (container, saving, boxes) = try mergeFixture(size: size)
          let other = try container.newContext()
          var random = FixtureRandom(seed: 5)
          return { number in
            renameThousand(of: boxes, &random, number)
            try saving.save()
            other.processPendingChanges()
          }
        },
        MicroBenchmark(
          "merge: 1,000 renames + save, merged by the dormant main context only, in \(label)",
          iterations: 100
        ) {
          let (_, saving, boxes) = try mergeFixture(size: size)
          var random = FixtureRandom(seed: 5)
          return { number in
            renameThousand(of: boxes, &random, number)
            try saving.save()
          }
        },
        // What a context costs in memory (kept B/op): each a copy of every object today.
        MicroBenchmark("memory: one more context of a store of \(label)", iterations: 2) {
          let (container, _, _) = try mergeFixture(size: size)
          var contexts: [ObjectContext] = []
          return { _ in
            contexts.append(try container.newContext())
            _ = try contexts.last!.fetchCount(FetchDescriptor<Box>())
          }
        },
        // Conflicts a merge policy resolves: a box both contexts renamed, and a list both
        // reordered (merged three ways), each saved by one and then by the other.
        MicroBenchmark(
          "merge policy: a rename on both sides, object trump, in \(label)", iterations: 500
        ) {
          let (container, first, boxes) = try mergeFixture(size: size)
          let second = try container.newContext()
          second.mergePolicy = .mergeByPropertyObjectTrump
          var random = FixtureRandom(seed: 5)
          return { number in
            let box = boxes[random.index(below: boxes.count)]
            box.title = "First's \(number)"
            try first.save()
            let theirs = second.model(for: box.persistentModelID!) as! Box
            theirs.title = "Second's \(number)"
            try second.save()
            first.processPendingChanges()
          }
        },
        MicroBenchmark(
          "merge policy: a move on both sides of a list of \(label), merged", iterations: 100
        ) {
          let (container, first, boxes) = try mergeFixture(size: size)
          let second = try container.newContext()
          second.mergePolicy = .mergeByPropertyObjectTrump
          let wide = boxes[0].parent!
          let theirWide = second.model(for: wide.persistentModelID!) as! Box
          var random = FixtureRandom(seed: 5)
          return { _ in
            wide.children.move(
              fromOffsets: [random.index(below: size)], toOffset: random.index(below: size + 1))
            try first.save()
            theirWide.children.move(
              fromOffsets: [random.index(below: size)], toOffset: random.index(below: size + 1))
            try second.save()
            first.processPendingChanges()
          }
        },
        MicroBenchmark(
          "merge: rename + save, merged into the dormant main context, in \(label)",
          iterations: 2_000
        ) {
          let (_, saving, boxes) = try mergeFixture(size: size)
          var random = FixtureRandom(seed: 5)
          return { number in
            boxes[random.index(below: boxes.count)].title = "Renamed \(number)"
            try saving.save()
          }
        },
      ]
    }
  }

  /// Renames 1,000 distinct boxes of `boxes` (at least 1,000), spread evenly over them from a
  /// random start: the same number of changed objects whatever the store's size, each
  /// anywhere in it.
  private static func renameThousand(
    of boxes: [Box], _ random: inout FixtureRandom, _ number: Int
  ) {
    let step = boxes.count / 1_000
    let start = random.index(below: step)
    for offset in 0..<1_000 {
      boxes[start + offset * step].title = "Renamed \(number).\(offset)"
    }
  }

  /// A container whose store holds one box with `size` children, a context of its own
  /// (beside the container's main context, which stays dormant), and the children.
  private static func mergeFixture(size: Int) throws -> (ObjectContainer, ObjectContext, [Box]) {
    let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
    let context = try container.newContext()
    let wide = Box()
    wide.title = "Wide"
    context.insert(wide)
    for number in 0..<size {
      let box = Box()
      box.title = "Child \(number)"
      wide.children.append(box)
    }
    try context.save()
    return (container, context, wide.children)
  }
}
