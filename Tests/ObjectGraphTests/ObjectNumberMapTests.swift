import Testing

@testable import ObjectGraph

/// The identity map and the store's shapes key objects by number in an array; numbers far
/// from the population go to a dictionary. Both must behave as one map.
@Suite struct ObjectNumberMapTests {
  private func id(_ number: UInt64) -> ObjectID { ObjectID(rawValue: number) }

  /// A reference-typed value, to read the map's objects unretained.
  private final class Box {
    let number: UInt64
    init(_ number: UInt64) { self.number = number }
  }

  @Test func objectsReadUnretainedComeInNumberOrder() {
    var map = ObjectNumberMap<Box>()
    // Dense numbers, then some far beyond them (kept in the dictionary), in no order.
    let numbers: [UInt64] = [5, 1, 3, 9_000_000, 2, 7_000_000, 8_000_000_000, 4]
    for number in numbers {
      let inserted = map.insert(Box(number), for: id(number))
      #expect(inserted)
    }
    let removed = map.updateValue(nil, for: id(3))
    #expect(removed?.number == 3)
    let read = map.unretainedValuesInNumberOrder().map { $0.takeUnretainedValue().number }
    #expect(read == numbers.filter { $0 != 3 }.sorted())
  }

  @Test func denseNumbersBehaveLikeADictionary() {
    var map = ObjectNumberMap<Int32>()
    var reference: [UInt64: Int32] = [:]
    var random = SplitMix64(seed: TestScale.seed(7))
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

  /// The store's reference counts: added one at a time, in bulk, and changed in place, in
  /// the array and beyond it, a count that comes to zero removed.
  @Test func countsAddedOneByOneInBulkOrInPlaceMatchADictionary() {
    var map = ObjectNumberMap<Int32>()
    var reference: [UInt64: Int32] = [:]
    var random = SplitMix64(seed: TestScale.seed(11))
    func number() -> UInt64 {
      Bool.random(using: &random)
        ? UInt64.random(in: 0..<2_000, using: &random)
        : UInt64.random(in: 1 << 30..<(1 << 30) + 50, using: &random)
    }
    func expectEqual() {
      #expect(map.count == reference.count)
      #expect(map.pairs.map(\.0.rawValue).sorted() == reference.keys.sorted())
      for (key, count) in reference { #expect(map[id(key)] == count) }
    }
    func count(_ delta: Int32, _ key: UInt64) {
      let new = (reference[key] ?? 0) + delta
      reference[key] = new == 0 ? nil : new
    }
    for _ in 0..<2_000 {
      let (key, delta) = (number(), Int32.random(in: -2...2, using: &random))
      map.add(delta, to: id(key))
      count(delta, key)
    }
    expectEqual()
    let batch = (0..<3_000).map { _ in (number(), Int32.random(in: -1...1, using: &random)) }
    map.counting { counter in
      for (key, delta) in batch { counter.add(delta, to: id(key)) }
    }
    for (key, delta) in batch { count(delta, key) }
    expectEqual()
    for _ in 0..<500 {
      let key = number()
      let old = map.modifyValue(for: id(key)) { value -> Int32? in
        defer { value = value == nil ? 5 : nil }
        return value
      }
      #expect(old == reference[key])
      reference[key] = old == nil ? 5 : nil
    }
    expectEqual()
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
