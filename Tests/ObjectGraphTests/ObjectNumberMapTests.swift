import Testing

@testable import ObjectGraph

/// The identity map and the store's shapes key objects by number in an array; numbers far
/// from the population go to a dictionary. Both must behave as one map.
@Suite struct ObjectNumberMapTests {
  private func id(_ number: UInt64) -> ObjectID { ObjectID(rawValue: number) }

  @Test func denseNumbersBehaveLikeADictionary() {
    var map = ObjectNumberMap<Int32>()
    var reference: [UInt64: Int32] = [:]
    var random = SplitMix64(seed: 7)
    for step in 0..<5_000 {
      let number = UInt64.random(in: 0..<3_000, using: &random)
      if step % 3 == 0 {
        #expect(map.updateValue(nil, for: id(number)) == reference.removeValue(forKey: number))
      } else {
        let value = Int32(step)
        #expect(
          map.updateValue(value, for: id(number)) == reference.updateValue(value, forKey: number))
      }
      #expect(map.count == reference.count)
    }
    for number in 0..<3_100 { #expect(map[id(UInt64(number))] == reference[UInt64(number)]) }
    #expect(map.values.sorted() == reference.values.sorted())
    #expect(
      map.pairs.map { [$0.0.rawValue: $0.1] }.reduce(into: [:]) { $0.merge($1) { a, _ in a } }
        == reference)
  }

  @Test func insertAddsOnlyNewKeysInTheArrayAndTheDictionary() {
    var map = ObjectNumberMap<String>()
    let inserted = [
      map.insert("one", for: id(1)), map.insert("again", for: id(1)),
      map.insert("far", for: id(1 << 40)), map.insert("again", for: id(1 << 40)),
    ]
    #expect(inserted == [true, false, true, false], "new keys only, in the array and beyond")
    #expect(map.count == 2)
    #expect(map[id(1)] == "one" && map[id(1 << 40)] == "far")
    let removed = map.updateValue(nil, for: id(1))
    let insertedAgain = map.insert("back", for: id(1))
    #expect(removed == "one" && insertedAgain && map.count == 2)
  }

  @Test func aFarNumberGoesToTheDictionaryAndComesBackWhenTheArrayGrows() {
    var map = ObjectNumberMap<String>()
    map[id(1 << 40)] = "far"
    map[id(200_000)] = "beyond the margin"
    #expect(map.count == 2)
    #expect(map[id(1 << 40)] == "far")
    #expect(map[id(200_000)] == "beyond the margin")
    // Filling the numbers below grows the array past 200,000: the value moves into it.
    for number in 0..<140_000 { map[id(UInt64(number))] = "near" }
    #expect(map[id(200_000)] == "beyond the margin")
    #expect(map[id(1 << 40)] == "far")
    #expect(map.count == 140_002)
    map[id(1 << 40)] = nil
    #expect(map[id(1 << 40)] == nil)
    #expect(map.count == 140_001)
  }

  @Test func aForgedHugeNumberAllocatesNoHugeArray() {
    var map = ObjectNumberMap<Int32>()
    map.reserve(upTo: 1 << 50)
    map[id(UInt64.max)] = 1
    map[id(1 << 50)] = 2
    #expect(map.count == 2)
    #expect(map.values.sorted() == [1, 2])
    #expect(map[id(7)] == nil)
  }
}
