import Testing

@testable import ObjectGraph

/// The equality index is its own hash table: probing, growth and backward-shift deletion
/// must keep it equal to a plain dictionary of sets, even when every key collides.
@Suite struct ValueIndexTests {
  /// A key whose hash sends many keys to the same slots.
  struct CollidingKey: IndexKey {
    let value: Int
    var indexHash: Int { value % 3 }
  }

  @Test(arguments: [0, 1, 2])
  func randomEditsMatchADictionaryOfSets(seed: UInt64) {
    var random = SplitMix64(seed: TestScale.seed(seed))
    let objects = (0..<40).map { _ in Box() }
    var index = ValueIndex<CollidingKey>()
    var reference: [Int: Set<ObjectIdentifier>] = [:]
    for _ in 0..<4_000 {
      let object = objects[Int.random(in: 0..<objects.count, using: &random)]
      let key = Int.random(in: 0..<60, using: &random)
      if Bool.random(using: &random) {
        index.add(object, for: CollidingKey(value: key))
        reference[key, default: []].insert(ObjectIdentifier(object))
      } else {
        index.remove(object, for: CollidingKey(value: key))
        reference[key]?.remove(ObjectIdentifier(object))
        if reference[key]?.isEmpty == true { reference[key] = nil }
      }
      #expect(index.sharedKeyCount == reference.values.filter { $0.count > 1 }.count)
    }
    for key in 0..<60 {
      let expected = reference[key] ?? []
      #expect(index.count(for: CollidingKey(value: key)) == expected.count)
      #expect(
        Set(index.objects(for: CollidingKey(value: key)).map(ObjectIdentifier.init)) == expected)
    }
  }

  /// Thousands of keys: the table is rebuilt as it grows, and removals move the last entry
  /// into the hole, whose slot must follow it.
  @Test func manyKeysGrowAndShrinkLikeADictionary() {
    var random = SplitMix64(seed: TestScale.seed(11))
    let objects = (0..<8).map { _ in Box() }
    var index = ValueIndex<PersistentValue>()
    var reference: [Int64: Set<ObjectIdentifier>] = [:]
    for step in 0..<20_000 {
      let object = objects[Int.random(in: 0..<objects.count, using: &random)]
      // Mostly adds at first, mostly removes later, so the index grows then empties.
      let key = Int64.random(in: 0..<3_000, using: &random)
      if Int.random(in: 0..<20_000, using: &random) > step {
        index.add(object, for: .int(key))
        reference[key, default: []].insert(ObjectIdentifier(object))
      } else {
        index.remove(object, for: .int(key))
        reference[key]?.remove(ObjectIdentifier(object))
        if reference[key]?.isEmpty == true { reference[key] = nil }
      }
    }
    #expect(index.sharedKeyCount == reference.values.filter { $0.count > 1 }.count)
    for key in Int64(0)..<3_000 {
      let expected = reference[key] ?? []
      #expect(Set(index.objects(for: .int(key)).map(ObjectIdentifier.init)) == expected)
    }
  }

  /// Adding many keys at once (in the order of their slots) must build the same index as
  /// adding them one by one, repeated keys and colliding hashes included, and the index
  /// must then change like any other.
  @Test(arguments: [0, 1, 2])
  func addingAllAtOnceMatchesAddingOneByOne(seed: UInt64) {
    var random = SplitMix64(seed: TestScale.seed(seed))
    let objects = (0..<2_000).map { _ in Box() }
    let keys = objects.indices.map { _ in CollidingKey(value: Int(random.next() % 1_500)) }
    var bulk = ValueIndex<CollidingKey>()
    bulk.add(objects.map(Unmanaged.passUnretained), for: keys)
    var reference: [Int: Set<ObjectIdentifier>] = [:]
    for (object, key) in zip(objects, keys) {
      reference[key.value, default: []].insert(ObjectIdentifier(object))
    }
    func expectMatches() {
      #expect(bulk.sharedKeyCount == reference.values.filter { $0.count > 1 }.count)
      for key in 0..<1_500 {
        #expect(
          Set(bulk.objects(for: CollidingKey(value: key)).map(ObjectIdentifier.init))
            == reference[key] ?? [])
      }
    }
    expectMatches()
    for (object, key) in zip(objects, keys).shuffled(using: &random).prefix(1_200) {
      bulk.remove(object, for: key)
      reference[key.value]?.remove(ObjectIdentifier(object))
      if reference[key.value]?.isEmpty == true { reference[key.value] = nil }
    }
    expectMatches()
    // Into an index that already holds keys, adding many is adding one by one.
    bulk.add(objects.prefix(300).map(Unmanaged.passUnretained), for: Array(keys.prefix(300)))
    for (object, key) in zip(objects, keys).prefix(300) {
      reference[key.value, default: []].insert(ObjectIdentifier(object))
    }
    expectMatches()
  }

  @Test func persistentValuesThatAreEqualHashAlike() {
    let pairs: [(PersistentValue, PersistentValue)] = [
      (.double(0), .double(-0.0)),
      (
        .date(.init(timeIntervalSinceReferenceDate: 0)),
        .date(.init(timeIntervalSinceReferenceDate: -0.0))
      ),
      (.string("é"), .string("e\u{301}")),
    ]
    for (first, second) in pairs {
      #expect(first == second)
      #expect(first.indexHash == second.indexHash)
    }
    var index = ValueIndex<PersistentValue>()
    let box = Box()
    index.add(box, for: .string("é"))
    #expect(index.count(for: .string("e\u{301}")) == 1)
  }
}
