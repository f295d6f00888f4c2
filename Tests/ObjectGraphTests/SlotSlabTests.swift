import Foundation
import Testing

@testable import ObjectGraph

/// A slab hands out runs of slots one after another until it is full, and the objects the
/// app creates take their slots from such slabs, kept alive by the objects in them.
@Suite struct SlotSlabTests {
  @Test func carvesRunsOneAfterAnotherUntilFull() {
    var random = SplitMix64(seed: TestScale.seed(7))
    for _ in 0..<50 {
      let capacity = Int(random.next() % 64) + 1
      let slab = SlotSlab(roomFor: capacity)
      guard let first = slab.carve(1) else {
        Issue.record("a new slab had no room for one slot")
        return
      }
      var used = 1  // the model: slots handed out so far, from `first` on
      for _ in 0..<20 {
        let count = Int(random.next() % 8) + 1
        let carved = slab.carve(count)
        if used + count <= capacity {
          #expect(carved == first + used)
          used += count
        } else {
          #expect(carved == nil)
        }
      }
    }
  }

  @Test func objectsCreatedInARowShareSlabsAndKeepTheirValues() {
    // More objects than one slab has room for, so that they span several.
    let count = 3 * SlotSlab.creationCapacity / 6 + 17
    var boxes = (0..<count).map { number in
      let box = Box()
      box.title = "Box \(number)"
      box.detail = String(repeating: "detail \(number) ", count: 3)
      return box
    }
    #expect(boxes.allSatisfy { !$0.ownsSlots })
    let adjacent = zip(boxes, boxes.dropFirst()).filter { $1.slots == $0.slots + $0.slotCount }
    // Only the first object of each new slab is not right after the one before it.
    #expect(adjacent.count >= count - 1 - count * 6 / SlotSlab.creationCapacity - 1)
    #expect(adjacent.count < count - 1)

    // Freeing most of them, and creating more, leaves the kept ones' values as they were.
    let kept = stride(from: 0, to: count, by: 97).map { boxes[$0] }
    boxes = []
    let more = (0..<count).map { number in
      let box = Box()
      box.title = "More \(number)"
      return box
    }
    for (position, box) in zip(stride(from: 0, to: count, by: 97), kept) {
      #expect(box.title == "Box \(position)")
      #expect(box.detail == String(repeating: "detail \(position) ", count: 3))
    }
    #expect(more.last?.title == "More \(count - 1)")
  }

  /// A created object that outlives its context moves its slots out of the slab it shares
  /// with the objects created with it (ASan would catch a read of the freed slab).
  @Test func aCreatedSurvivorKeepsNoMemoryOfTheObjectsCreatedWithIt() throws {
    let stack = try Stack()
    var kept: Box?
    try {
      let temporary = try ObjectContext(stack.container)
      let root = Box()
      root.title = "root"
      temporary.insert(root)
      for number in 0..<200 {
        let child = Box()
        child.title = "child \(number)"
        child.parent = root
      }
      try temporary.save()
      kept = root.children[150]
      #expect(kept?.ownsSlots == false)
    }()
    #expect(kept?.context == nil)
    #expect(kept?.ownsSlots == true)
    #expect(kept?.title == "child 150")
    #expect(kept?.parent?.title == "root")
    #expect(kept?.parent?.children.count == 200)
  }
}
