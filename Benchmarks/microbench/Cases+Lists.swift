import BenchmarkSupport
import Foundation
import ObjectGraph

extension Cases {
  // MARK: Ordered to-many lists

  /// Every way a user edits a long ordered list, each followed by a save, in a list of
  /// 1,000 and one of 100,000 saved children: an edit must cost about the same in both
  /// (O(1) bookkeeping besides the array's own shift).
  static func lists() -> [MicroBenchmark] {
    let sizes = [1_000, 100_000]
    let inMemory = sizes.flatMap { size in
      listEdits.map { name, edit in
        MicroBenchmark("list of \(label(size)): \(name), saved", iterations: 2_000) {
          let list = try WideList(size: size)
          var random = FixtureRandom(seed: 7)
          return { number in
            try edit(list, &random, number)
            try list.context.save()
          }
        }
      }
    }
    // The same edits saved durably: what an app pays per drag, insert or delete.
    let durable = sizes.flatMap { size in
      listEdits.map { name, edit in
        MicroBenchmark("list of \(label(size)): \(name), binary store", iterations: 300) {
          let list = try WideList(size: size, durable: true)
          var random = FixtureRandom(seed: 7)
          return { number in
            try edit(list, &random, number)
            try list.context.save()
          }
        }
      }
    }
    let observed = sizes.map { size in
      MicroBenchmark("list of \(label(size)): append, observed, delivered", iterations: 2_000) {
        let list = try WideList(size: size)
        var heard = 0
        let token = list.context.observe(list.wide, relationship: \.children) { _ in heard += 1 }
        return { number in
          list.wide.children.append(list.newBox(number))
          list.context.processPendingChanges()
          withExtendedLifetime(token) {}
        }
      }
    }
    // A drag under a relationship observer: one edit between two deliveries is delivered as
    // that edit's change, without comparing the lists.
    // Two edits between deliveries (a swap is two moves): the lists are compared.
    let movedObserved = sizes.flatMap { size in
      [
        (
          "move",
          { (list: WideList, random: inout FixtureRandom) in
            list.wide.children.move(
              fromOffsets: [random.index(below: size)], toOffset: random.index(below: size + 1))
          }
        ),
        (
          "swapAt",
          { (list: WideList, random: inout FixtureRandom) in
            list.wide.children.swapAt(random.index(below: size), random.index(below: size))
          }
        ),
      ].map { name, edit in
        MicroBenchmark("list of \(label(size)): \(name), observed, delivered", iterations: 500) {
          let list = try WideList(size: size)
          var random = FixtureRandom(seed: 7)
          var heard = 0
          let token = list.context.observe(list.wide, relationship: \.children) { _ in
            heard += 1
          }
          return { _ in
            edit(list, &random)
            list.context.processPendingChanges()
            withExtendedLifetime(token) {}
          }
        }
      }
    }
    // A drag undone: `rollback()` gives the list its saved order back by the move's inverse,
    // in place, and the observer hears of that move.
    let rolledBack = sizes.map { size in
      MicroBenchmark(
        "list of \(label(size)): move, observed, rolled back, delivered", iterations: 2_000
      ) {
        let list = try WideList(size: size)
        var random = FixtureRandom(seed: 7)
        var heard = 0
        let token = list.context.observe(list.wide, relationship: \.children) { _ in heard += 1 }
        return { _ in
          list.wide.children.move(
            fromOffsets: [random.index(below: size)], toOffset: random.index(below: size + 1))
          list.context.rollback()
          withExtendedLifetime(token) {}
        }
      }
    }
    // Swift Array's own work in the edits whose cost grows with the list, on a plain `[Box]`
    // of the same size: what a 100,000-child list costs beyond these is the framework's
    // bookkeeping (``ListGrowth`` prints both).
    let plain = sizes.flatMap { size in
      plainEdits.map { name, edit in
        MicroBenchmark("plain [Box] of \(label(size)): \(name)", iterations: 2_000) {
          var boxes = (0..<size).map { _ in Box() }
          var random = FixtureRandom(seed: 7)
          return { _ in edit(&boxes, &random) }
        }
      }
    }
    return inMemory + observed + movedObserved + rolledBack + durable + plain
  }

  static func label(_ size: Int) -> String {
    size.formatted(.number.grouping(.automatic))
  }

  /// The edits, written as apps write them.
  private static var listEdits:
    [(String, @MainActor (WideList, inout FixtureRandom, Int) throws -> Void)]
  {
    [
      (
        "children.append(new)",
        { list, _, number in list.wide.children.append(list.newBox(number)) }
      ),
      (
        "children.insert(new, at: random)",
        { list, random, number in
          list.wide.children.insert(list.newBox(number), at: random.index(below: list.count + 1))
        }
      ),
      (
        "children.remove(at: random)",
        { list, random, number in
          list.wide.children.remove(at: random.index(below: list.count))
          list.wide.children.append(list.newBox(number))  // keeps the size
        }
      ),
      (
        "move: remove(at:) + insert(_:at:)",
        { list, random, _ in
          let child = list.wide.children.remove(at: random.index(below: list.count))
          list.wide.children.insert(child, at: random.index(below: list.count + 1))
        }
      ),
      (
        "children.move(fromOffsets:toOffset:)",
        { list, random, _ in
          list.wide.children.move(
            fromOffsets: [random.index(below: list.count)],
            toOffset: random.index(below: list.count + 1))
        }
      ),
      (
        "children.swapAt(random, random)",
        { list, random, _ in
          list.wide.children.swapAt(
            random.index(below: list.count), random.index(below: list.count))
        }
      ),
      (
        "children[random] = new",
        { list, random, number in
          list.wide.children[random.index(below: list.count)] = list.newBox(number)
        }
      ),
      (
        "child.parent = nil (random child)",
        { list, random, number in
          list.wide.children[random.index(below: list.count)].parent = nil
          list.newBox(number).parent = list.wide
        }
      ),
      (
        "context.delete(random child)",
        { list, random, number in
          list.context.delete(list.wide.children[random.index(below: list.count)])
          list.newBox(number).parent = list.wide
        }
      ),
      (
        "children.removeAll(where: is random child)",
        { list, random, number in
          let doomed = list.wide.children[random.index(below: list.count)]
          list.wide.children.removeAll { $0 === doomed }
          list.wide.children.append(list.newBox(number))  // keeps the size
        }
      ),
      (
        "children = copy with one replaced",
        { list, random, number in
          var children = list.wide.children
          children[random.index(below: list.count)] = list.newBox(number)
          list.wide.children = children
        }
      ),
    ]
  }
}

extension Cases {
  /// The array work of the list edits, on a plain `[Box]`, by the name ``ListGrowth``
  /// pairs them with the edits by.
  static var plainEdits: [(String, @MainActor (inout [Box], inout FixtureRandom) -> Void)] {
    [
      (
        "insert(_:at:)",
        { boxes, random in boxes.insert(Box(), at: random.index(below: boxes.count + 1)) }
      ),
      (
        "remove(at:) + append",
        { boxes, random in
          boxes.remove(at: random.index(below: boxes.count))
          boxes.append(Box())
        }
      ),
      (
        "remove(at:) + insert(_:at:)",
        { boxes, random in
          let box = boxes.remove(at: random.index(below: boxes.count))
          boxes.insert(box, at: random.index(below: boxes.count + 1))
        }
      ),
      // What a one-pass `removeAll(where:)` of one object must do: test every element, shift
      // those after it.
      (
        "a pass of the predicate, remove(at:) + append",
        { boxes, random in
          let doomed = boxes[random.index(below: boxes.count)]
          var positions: [Int] = []
          for (position, box) in boxes.enumerated() where box === doomed {
            positions.append(position)
          }
          for position in positions.reversed() { boxes.remove(at: position) }
          boxes.append(Box())
        }
      ),
      // Swift's own `removeAll(where:)`, for comparison: it swaps every element after the
      // first removed one.
      (
        "removeAll(where:) + append",
        { boxes, random in
          let doomed = boxes[random.index(below: boxes.count)]
          boxes.removeAll { $0 === doomed }
          boxes.append(Box())
        }
      ),
      // What assigning a copy with one object replaced must do: the copy (the app's), then
      // a comparison of the two lists' common ends, the whole list but the one replaced.
      (
        "copy with one replaced, compared with the original",
        { boxes, random in
          let original = boxes
          var copy = original
          let position = random.index(below: copy.count)
          copy[position] = Box()
          copy.withUnsafeBytes { new in
            original.withUnsafeBytes { old in
              let after = (position + 1) * MemoryLayout<Box>.stride
              let prefix = memcmp(
                new.baseAddress!, old.baseAddress!, after - MemoryLayout<Box>.stride)
              let suffix = memcmp(
                new.baseAddress! + after, old.baseAddress! + after, new.count - after)
              precondition(prefix == 0 && suffix == 0, "only one object differs")
            }
          }
          boxes = copy
        }
      ),
    ]
  }

  /// The plain-array twin (``plainEdits``) of each list edit whose array work grows with the
  /// list, by the edit's name.
  static let arrayWork: [String: String] = [
    "children.insert(new, at: random)": "insert(_:at:)",
    "children.remove(at: random)": "remove(at:) + append",
    "move: remove(at:) + insert(_:at:)": "remove(at:) + insert(_:at:)",
    "child.parent = nil (random child)": "remove(at:) + append",
    "context.delete(random child)": "remove(at:) + append",
    "children.removeAll(where: is random child)": "a pass of the predicate, remove(at:) + append",
    "children = copy with one replaced": "copy with one replaced, compared with the original",
  ]

  /// The names of the list edits, in order.
  static var listEditNames: [String] { listEdits.map(\.0) }
}

/// One saved box with `size` saved children, in an in-memory store or a binary store file.
@MainActor
final class WideList {
  let container: ObjectContainer
  let wide: Box

  /// Where a durable list's store lives; removed with the list.
  private let file: URL?

  init(size: Int, durable: Bool = false) throws {
    if durable {
      let file = FileManager.default.temporaryDirectory
        .appendingPathComponent("microbench-list-\(getpid())-\(UUID().uuidString).ogstore")
      self.file = file
      container = try ObjectContainer(for: Box.self, store: BinaryStore(url: file))
    } else {
      file = nil
      container = try ObjectContainer(for: Box.self, store: InMemoryStore())
    }
    wide = Box()
    wide.title = "Wide"
    container.mainContext.insert(wide)
    for number in 0..<size { wide.children.append(newBox(number)) }
    try container.mainContext.save()
  }

  deinit {
    if let file { try? FileManager.default.removeItem(at: file) }
  }

  var context: ObjectContext { container.mainContext }
  var count: Int { wide.$children.count }

  /// A new box, not yet related.
  func newBox(_ number: Int) -> Box {
    let box = Box()
    box.title = "Child \(number)"
    return box
  }
}
