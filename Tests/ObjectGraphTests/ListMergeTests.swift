import Testing

@testable import ObjectGraph

/// The three-way list merge behind merge policies: the written rules on small lists, and on
/// random edits of both sides the properties any merge must have.
@Suite struct ListMergeTests {
  private func merge(_ base: String, _ theirs: String, _ ours: String, oursWin: Bool = true)
    -> String
  {
    String(
      ListMerge.merge(
        base: Array(base), theirs: Array(theirs), ours: Array(ours), oursWinMoves: oursWin))
  }

  @Test func movesOfDifferentElementsAreBothKept() {
    #expect(merge("abcde", "bcdea", "eabcd") == "ebcda")
  }

  @Test func bothSidesInsertsAreKept() {
    #expect(merge("ab", "axb", "aby") == "axby")
    #expect(merge("ab", "xab", "yab") == "yxab")
  }

  @Test func bothSidesRemovalsAreKept() {
    #expect(merge("abcd", "acd", "abd") == "ad")
  }

  @Test func aMoveOfAnElementRemovedElsewhereIsDropped() {
    #expect(merge("abc", "ac", "bac") == "ac")
  }

  @Test func anElementMovedOnBothSidesGoesWhereTheWinnerPutIt() {
    #expect(merge("abcd", "bcda", "bacd", oursWin: true) == "bacd")
    #expect(merge("abcd", "bcda", "bacd", oursWin: false) == "bcda")
  }

  @Test func aSideThatChangedNothingTakesTheOther() {
    var random = SplitMix64(seed: TestScale.seed(41))
    for _ in 0..<300 {
      let base = Array(0..<Int(random.next() % 30))
      var next = 100
      let changed = edited(base, &random, &next)
      #expect(
        ListMerge.merge(base: base, theirs: changed, ours: base, oursWinMoves: true) == changed)
      #expect(
        ListMerge.merge(base: base, theirs: base, ours: changed, oursWinMoves: false) == changed)
    }
  }

  /// Random edits on both sides: the result holds each element once, exactly theirs and our
  /// inserts less our removals, and our order wherever theirs kept its base order.
  @Test func randomEditsOnBothSidesMergeToTheRightElements() {
    var random = SplitMix64(seed: TestScale.seed(43))
    for _ in 0..<500 {
      let base = Array(0..<Int(random.next() % 40))
      var next = 1_000
      let theirs = edited(base, &random, &next)
      let ours = edited(base, &random, &next)
      for oursWin in [true, false] {
        let result = ListMerge.merge(base: base, theirs: theirs, ours: ours, oursWinMoves: oursWin)
        #expect(Set(result).count == result.count)
        let expected = Set(theirs).union(Set(ours).subtracting(base))
          .subtracting(Set(base).subtracting(ours))
        #expect(Set(result) == expected, "base \(base) theirs \(theirs) ours \(ours)")
      }
    }
  }

  /// `list` after a few random inserts, removals and moves.
  private func edited(_ list: [Int], _ random: inout SplitMix64, _ next: inout Int) -> [Int] {
    var list = list
    for _ in 0..<Int(random.next() % 5) {
      switch random.next() % 3 {
      case 0:
        list.insert(next, at: Int(random.next() % UInt64(list.count + 1)))
        next += 1
      case 1 where !list.isEmpty:
        list.remove(at: Int(random.next() % UInt64(list.count)))
      default:
        guard !list.isEmpty else { continue }
        let element = list.remove(at: Int(random.next() % UInt64(list.count)))
        list.insert(element, at: Int(random.next() % UInt64(list.count + 1)))
      }
    }
    return list
  }
}
