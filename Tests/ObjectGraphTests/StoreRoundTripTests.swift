import Foundation
import Testing

@testable import ObjectGraph

/// Random edits of a box tree, saved and reloaded: what a new context loads from the store
/// is always exactly the graph the editing context holds.
@Suite struct StoreRoundTripTests {
  /// The graph as plain values: each box's title, parent and children in order.
  private func picture(of context: ObjectContext) throws -> [UUID: (String, UUID?, [UUID])] {
    let boxes = try context.fetch(FetchDescriptor<Box>())
    return Dictionary(
      uniqueKeysWithValues: boxes.map { ($0.id, ($0.title, $0.parent?.id, $0.children.map(\.id))) })
  }

  private func expectSame(
    _ left: [UUID: (String, UUID?, [UUID])], _ right: [UUID: (String, UUID?, [UUID])]
  ) {
    #expect(left.count == right.count)
    for (id, value) in left {
      guard let other = right[id] else {
        Issue.record("box \(id) is missing after reload")
        continue
      }
      #expect(value.0 == other.0)
      #expect(value.1 == other.1)
      #expect(value.2 == other.2)
    }
  }

  @Test(arguments: StoreKind.allCases)
  func randomEditsAlwaysReloadAsTheyWereSaved(store: StoreKind) throws {
    var random = SplitMix64(seed: TestScale.seed(store == .binary ? 11 : 12))
    let stack = try Stack(store)
    var live: [Box] = []
    for index in 0..<20 {
      let box = Box(title: "\(index)")
      box.id = UUID(uuid: (UInt8(index), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))
      stack.context.insert(box)
      live.append(box)
    }
    try stack.context.save()
    var made = 20
    for round in 0..<120 {
      for _ in 0..<Int(random.next() % 8) {
        live.removeAll { $0.isDeleted || $0.context == nil }
        guard let box = live.randomElement(using: &random) else { break }
        switch random.next() % 9 {
        case 0:
          let child = Box(title: "\(made)")
          child.id = UUID(
            uuid: (UInt8(made & 255), UInt8(made >> 8), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2))
          made += 1
          box.$children.insert(child, at: Int(random.next() % UInt64(box.children.count + 1)))
          live.append(child)
        case 1:
          let target = live.randomElement(using: &random)!
          if target !== box, !isAncestor(box, of: target) { box.parent = target }
        case 2:
          if box.children.count > 1 {
            let count = UInt64(box.children.count)
            box.$children.move(from: Int(random.next() % count), to: Int(random.next() % count))
          }
        case 3:
          if !box.children.isEmpty {
            box.$children.remove(at: Int(random.next() % UInt64(box.children.count)))
          }
        case 4:
          if box.children.count > 1 {
            box.children.move(fromOffsets: [0], toOffset: box.children.count)
          }
        case 5: box.children = box.children.reversed()
        case 6: if random.next() % 4 == 0 { stack.context.delete(box) }
        case 7: box.parent = nil
        default: box.title = "renamed \(round)"
        }
      }
      if random.next() % 6 == 0 {
        stack.context.rollback()
        live = try stack.context.fetch(FetchDescriptor<Box>())
        continue
      }
      try stack.context.save()
      let reloaded = try ObjectContext(stack.container)
      expectSame(try picture(of: stack.context), try picture(of: reloaded))
    }
    let reopened = try stack.reopened()
    expectSame(try picture(of: stack.context), try picture(of: reopened.context))
  }
}
