import Testing

@testable import ObjectGraph

/// ``ChunkedList`` against a plain array: random inserts, removes and moves, at the ends and
/// in the middle, on lists that start empty, short, or longer than a chunk (as a loaded list
/// is: one chunk sharing the loaded array, split by its first edit).
@Suite struct ChunkedListTests {
  @Test(arguments: [0, 7, 5_000] as [Int])
  func randomEditsMatchAnArray(initialCount: Int) {
    var random = SplitMix64(seed: TestScale.seed(UInt64(initialCount) + 11))
    var model = Array(0..<initialCount)
    var list = ChunkedList(model)
    var next = initialCount
    for step in 0..<6_000 {
      let choice = random.next() % 10
      if choice < 4 || model.isEmpty {
        let index = Int(random.next() % UInt64(model.count + 1))
        let at = choice == 0 ? model.count : choice == 1 ? 0 : index
        model.insert(next, at: at)
        list.insert(next, at: at)
        next += 1
      } else if choice < 7 {
        let index = Int(random.next() % UInt64(model.count))
        #expect(list.remove(at: index) == model.remove(at: index), "step \(step)")
      } else {
        let from = Int(random.next() % UInt64(model.count))
        let to = Int(random.next() % UInt64(model.count))
        model.moveElement(from: from, to: to)
        list.moveElement(from: from, to: to)
      }
      if step % 500 == 0 || model.count < 40 {
        #expect(list.elements == model, "step \(step)")
        #expect(Array(list) == model)
      }
      #expect(list.count == model.count)
    }
    #expect(list.elements == model)
    if !model.isEmpty {
      for index in [0, model.count / 2, model.count - 1] { #expect(list[index] == model[index]) }
    }
  }

  @Test func emptyingAListLeavesItUsable() {
    var list = ChunkedList(Array(0..<1_500))
    while !list.isEmpty { list.remove(at: list.count / 2) }
    #expect(list.elements == [])
    list.insert(42, at: 0)
    #expect(list.elements == [42])
  }
}
