import Testing

@testable import ObjectGraph

/// ``SortedChunks`` against a sorted array: the same elements, ranks and walks after every
/// kind of change, through splits and joins of chunks.
@Suite struct SortedChunksTests {
  /// One seed under a sanitizer.
  @Test(arguments: (TestScale.isSanitized ? [1] : [1, 2, 3]) as [UInt64])
  func randomChangesMatchASortedArray(seed: UInt64) {
    var random = SplitMix64(seed: TestScale.seed(seed))
    var chunks = SortedChunks<Int>()
    var model: [Int] = []
    // Grows to a few thousand elements (many chunks), then shrinks to few (joins).
    for step in 0..<12_000 {
      let growing = step < 7_000
      let value = Int(random.next() % 6_000)
      if random.next() % 100 < (growing ? 70 : 25) {
        let inserted = chunks.insert(value)
        #expect(inserted == !model.contains(value))
        if inserted { model.insert(value, at: model.firstIndex { $0 > value } ?? model.count) }
      } else {
        let removed = chunks.remove(value)
        #expect(removed == model.contains(value))
        model.removeAll { $0 == value }
      }
      if step % 500 == 0 || step > 11_900 {
        chunks.checkInvariants()
        check(chunks, against: model, &random)
      }
    }
  }

  @Test func aBulkBuildHoldsItsElementsAndTakesChanges() {
    let sorted = Array(stride(from: 0, to: 10_000, by: 2))
    var chunks = SortedChunks(sorted: sorted)
    chunks.checkInvariants()
    var random = SplitMix64(seed: TestScale.seed(9))
    check(chunks, against: sorted, &random)
    var model = sorted
    for value in [-1, 1, 9_999, 10_001, 5_000] {
      chunks.insert(value)
      model.insert(value, at: model.firstIndex { $0 > value } ?? model.count)
    }
    for value in [0, 5_000, 9_998, 3] {
      chunks.remove(value)
      model.removeAll { $0 == value }
    }
    chunks.checkInvariants()
    check(chunks, against: model, &random)
    #expect(SortedChunks<Int>(sorted: []).isEmpty)
  }

  @Test func ascendingInsertionsAndRemovalsFromTheFrontKeepChunksBounded() {
    var chunks = SortedChunks<Int>()
    for value in 0..<3_000 { chunks.insert(value) }
    chunks.checkInvariants()
    for value in 0..<2_990 { chunks.remove(value) }
    chunks.checkInvariants()
    var random = SplitMix64(seed: TestScale.seed(4))
    check(chunks, against: Array(2_990..<3_000), &random)
  }

  /// Compares every element by rank, partition points, and walks of random ranges both ways.
  private func check(_ chunks: SortedChunks<Int>, against model: [Int], _ random: inout SplitMix64)
  {
    #expect(chunks.count == model.count)
    var all: [Int] = []
    chunks.forEach(in: 0..<chunks.count) {
      all.append($0)
      return true
    }
    #expect(all == model)
    for _ in 0..<40 {
      let bound = Int(random.next() % 6_100) - 50
      #expect(chunks.rank { $0 >= bound } == (model.firstIndex { $0 >= bound } ?? model.count))
      guard !model.isEmpty else { continue }
      let rank = Int(random.next() % UInt64(model.count))
      #expect(chunks[rank] == model[rank])
      let start = Int(random.next() % UInt64(model.count + 1))
      let end = start + Int(random.next() % UInt64(model.count - start + 1))
      var forward: [Int] = []
      chunks.forEach(in: start..<end) {
        forward.append($0)
        return true
      }
      #expect(forward == Array(model[start..<end]))
      var backward: [Int] = []
      let wanted = Int(random.next() % 50)
      chunks.forEach(in: start..<end, reversed: true) {
        backward.append($0)
        return backward.count < wanted
      }
      #expect(backward == Array(model[start..<end].reversed().prefix(max(wanted, 1))))
    }
  }
}
