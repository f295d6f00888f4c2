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
    // Swift Array's own work in the edits whose cost grows with the list: what a
    // 100,000-child list costs beyond these is the framework's bookkeeping.
    let plain = sizes.flatMap { size in
      [
        MicroBenchmark(
          "plain [Box] of \(label(size)): remove(at:) + insert(_:at:)", iterations: 2_000
        ) {
          var boxes = (0..<size).map { _ in Box() }
          var random = FixtureRandom(seed: 7)
          return { _ in
            let box = boxes.remove(at: random.index(below: size))
            boxes.insert(box, at: random.index(below: size))
          }
        },
        MicroBenchmark(
          "plain [Box] of \(label(size)): removeAll(where:) + append", iterations: 2_000
        ) {
          var boxes = (0..<size).map { _ in Box() }
          var random = FixtureRandom(seed: 7)
          return { _ in
            let doomed = boxes[random.index(below: size)]
            boxes.removeAll { $0 === doomed }
            boxes.append(Box())
          }
        },
        MicroBenchmark("plain [Box] of \(label(size)): copy with one replaced", iterations: 2_000) {
          var boxes = (0..<size).map { _ in Box() }
          var random = FixtureRandom(seed: 7)
          return { _ in
            var copy = boxes
            copy[random.index(below: size)] = Box()
            boxes = copy
          }
        },
      ]
    }
    return inMemory + observed + movedObserved + rolledBack + durable + plain
  }

  private static func label(_ size: Int) -> String {
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
