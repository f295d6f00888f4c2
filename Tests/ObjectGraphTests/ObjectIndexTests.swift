import Testing

@testable import ObjectGraph

/// The store's index from id to position behaves as a dictionary, whether its array was made
/// up front for a snapshot's numbers or grows, and when ids also live beyond the array.
@Suite struct ObjectIndexTests {
  private func id(_ number: UInt64) -> ObjectID { ObjectID(rawValue: number) }

  @Test(arguments: [nil, 500, 4_000] as [UInt64?])
  func setAndRemoveBehaveLikeADictionary(largestNumber: UInt64?) {
    var index = ObjectIndex(capacity: 1_000, largestNumber: largestNumber)
    var reference: [UInt64: Int] = [:]
    var random = SplitMix64(seed: TestScale.seed(11))
    for step in 0..<6_000 {
      // Mostly dense numbers, some far beyond any array. Early ones beyond the young array
      // go to the dictionary and must stay found there once the array grows past them.
      let number =
        step % 50 == 0
        ? UInt64.random(in: 1 << 20..<1 << 21, using: &random)
        : UInt64.random(in: 1..<5_000, using: &random)
      if step % 4 == 0 {
        index.remove(id(number))
        reference[number] = nil
      } else {
        index.set(step, for: id(number))
        reference[number] = step
      }
      #expect(index.count == reference.count)
    }
    for number in 0..<5_100 { #expect(index[id(UInt64(number))] == reference[UInt64(number)]) }
    for (number, position) in reference { #expect(index[id(number)] == position) }
  }
}
