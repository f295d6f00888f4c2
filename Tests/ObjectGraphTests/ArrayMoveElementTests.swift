import Testing

@testable import ObjectGraph

/// `moveElement(from:to:)` shifts memory in place (`moveInitialize`): it must do exactly what
/// `insert(remove(at: from), at: to)` does, for values and for references (which it moves
/// without retaining: a lost or doubled reference would show under AddressSanitizer).
@Suite struct ArrayMoveElementTests {
  private final class Token {
    let number: Int
    init(_ number: Int) { self.number = number }
  }

  @Test func movesLikeRemoveThenInsertForValuesAndReferences() {
    var random = SplitMix64(seed: TestScale.seed(5))
    for count in [1, 2, 3, 17, 1_000] {
      var values = Array(0..<count)
      var model = values
      var tokens = (0..<count).map(Token.init)
      var tokenModel = tokens
      for _ in 0..<200 {
        let from = Int(random.next() % UInt64(count))
        let to = Int(random.next() % UInt64(count))
        values.moveElement(from: from, to: to)
        model.insert(model.remove(at: from), at: to)
        tokens.moveElement(from: from, to: to)
        tokenModel.insert(tokenModel.remove(at: from), at: to)
      }
      #expect(values == model, "\(count) values")
      #expect(tokens.map(\.number) == tokenModel.map(\.number), "\(count) references")
      #expect(zip(tokens, tokenModel).allSatisfy { $0 === $1 })
    }
  }

  @Test func aSharedArrayIsCopiedFirst() {
    var list = [1, 2, 3, 4]
    let kept = list
    list.moveElement(from: 0, to: 3)
    #expect(list == [2, 3, 4, 1] && kept == [1, 2, 3, 4])
  }
}
