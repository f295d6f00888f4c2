import Testing

@testable import ObjectGraph

/// `Array<ObjectID>.apply(_:)` applies the edit pairs a context records for `list[i] = x`
/// (remove at i, insert at i) and `swapAt(i, j)` (move j to i, move i + 1 to j) as one
/// assignment or exchange: the result must be what applying each edit in turn gives, for
/// those pairs, for pairs that only look like them, and for every other sequence.
@Suite struct ListEditApplyTests {
  @Test func pairedEditsApplyAsEachEditInTurn() throws {
    var random = SplitMix64(seed: TestScale.seed(11))
    var nextNumber: UInt64 = 1_000
    for _ in 0..<2_000 {
      let count = 1 + Int(random.next() % 12)
      var list = (0..<UInt64(count)).map(ObjectID.init(rawValue:))
      var edits: [ListEdit] = []
      var length = count
      for _ in 0..<(1 + Int(random.next() % 6)) {
        let pick = { (bound: Int) in Int(random.next() % UInt64(max(bound, 1))) }
        switch random.next() % 6 {
        case 0 where length > 0:  // a replacement, or one off by a place
          let at = pick(length)
          nextNumber += 1
          let to = random.next() % 4 == 0 ? min(at + 1, length - 1) : at
          edits += [.remove(at: at), .insert(ObjectID(rawValue: nextNumber), at: to)]
        case 1 where length > 1:  // a swap, or two moves that are not one
          let low = pick(length - 1)
          let upper = low + 1 + pick(length - low - 1)
          let back = random.next() % 4 == 0 ? max(upper - 1, low + 1) : upper
          edits += [.move(from: upper, to: low), .move(from: low + 1, to: back)]
        case 2:
          nextNumber += 1
          edits.append(.insert(ObjectID(rawValue: nextNumber), at: pick(length + 1)))
          length += 1
        case 3 where length > 0:
          edits.append(.remove(at: pick(length)))
          length -= 1
        case 4 where length > 0:
          edits.append(.move(from: pick(length), to: pick(length)))
        default:
          break
        }
      }
      var expected = list
      for edit in edits { try expected.apply([edit]) }
      try list.apply(edits)
      #expect(list == expected, "\(edits)")
    }
  }

  /// A chunked list (as the in-memory store keeps a long list) applies the same edits to
  /// the same result, pairs included, across its chunks' edges.
  @Test func aChunkedListAppliesEditsAsAnArrayDoes() throws {
    var random = SplitMix64(seed: TestScale.seed(23))
    var array = (0..<UInt64(1_500)).map(ObjectID.init(rawValue:))
    var chunked = ChunkedList(array)
    var nextNumber: UInt64 = 10_000
    for step in 0..<3_000 {
      let pick = { (bound: Int) in Int(random.next() % UInt64(max(bound, 1))) }
      let length = array.count
      nextNumber += 1
      let edits: [ListEdit]
      switch random.next() % 5 {
      case 0:
        let at = pick(length)
        edits = [.remove(at: at), .insert(ObjectID(rawValue: nextNumber), at: at)]
      case 1:
        let low = pick(length - 1)
        let high = low + 1 + pick(length - low - 1)
        edits = [.move(from: high, to: low), .move(from: low + 1, to: high)]
      case 2: edits = [.insert(ObjectID(rawValue: nextNumber), at: pick(length + 1))]
      case 3: edits = [.remove(at: pick(length))]
      default: edits = [.move(from: pick(length), to: pick(length))]
      }
      for edit in edits { try array.apply([edit]) }
      try chunked.applyEdits(edits)
      #expect(chunked.count == array.count)
      if step % 100 == 0 { #expect(chunked.elements == array, "step \(step)") }
    }
    #expect(chunked.elements == array)
  }

  @Test func anEditThatDoesNotFitIsAnErrorAlsoInAPair() {
    var list = (0..<3).map { ObjectID(rawValue: UInt64($0)) }
    #expect(throws: ObjectGraphError.self) {
      try list.apply([.remove(at: 3), .insert(ObjectID(rawValue: 9), at: 3)])
    }
    #expect(throws: ObjectGraphError.self) {
      try list.apply([.move(from: 3, to: 0), .move(from: 1, to: 3)])
    }
    #expect(list.map(\.rawValue) == [0, 1, 2])
  }
}
