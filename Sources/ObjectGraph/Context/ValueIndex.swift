/// An equality index: for each key, the live objects whose property holds it.
///
/// Used for unique and indexed attributes (keyed by ``PersistentValue``) and for to-one
/// relationships (keyed by the target's identity, `nil` for none), and kept up to date on
/// every change of the property, so equality fetches never scan. A key held by one object
/// (the common case, and the only one for a unique attribute once saved) costs one entry,
/// no bucket.
///
/// It is its own open-addressing hash table (linear probing, at most three quarters full,
/// backward-shift deletion) rather than a `Dictionary`, because keys hash with
/// ``IndexKey/indexHash``: a UUID is two multiplications instead of a SipHash of 16 bytes,
/// and every insert, load and fetch by id hashes one.
struct ValueIndex<Key: IndexKey> {
  private enum Bucket {
    case one(ManagedObject)
    case many([ObjectIdentifier: ManagedObject])
  }

  /// Per slot: the key's hash with the low bit set, or 0 for an empty slot.
  private var hashes: [Int] = []
  private var keys: [Key?] = []
  private var buckets: [Bucket?] = []
  /// The number of keys held.
  private var count = 0
  /// The number of keys held by more than one object: zero means every value is unique,
  /// which lets a save skip looking for clashes.
  private(set) var sharedKeyCount = 0

  /// Makes room for `additional` more keys without growing.
  mutating func reserveCapacity(_ additional: Int) {
    let needed = count + additional
    if needed * 4 > hashes.count * 3 { resize(toHold: needed) }
  }

  /// The objects holding `key`.
  ///
  /// - Complexity: O(*m*) in the objects holding it.
  func objects(for key: Key) -> [ManagedObject] {
    guard let slot = slot(of: key) else { return [] }
    switch buckets[slot]! {
    case .one(let object): return [object]
    case .many(let objects): return Array(objects.values)
    }
  }

  /// The number of objects holding `key`.
  ///
  /// - Complexity: O(1).
  func count(for key: Key) -> Int {
    guard let slot = slot(of: key) else { return 0 }
    switch buckets[slot]! {
    case .one: return 1
    case .many(let objects): return objects.count
    }
  }

  /// - Complexity: Amortized O(1): a bucket is taken out while it changes, so it is never
  ///   copied.
  mutating func add(_ object: ManagedObject, for key: Key) {
    if (count + 1) * 4 > hashes.count * 3 { resize(toHold: count + 1) }
    let (slot, hash, found) = probe(key)
    guard found else {
      hashes[slot] = hash
      keys[slot] = key
      buckets[slot] = .one(object)
      count += 1
      return
    }
    switch buckets[slot].take()! {
    case .one(let existing):
      if existing === object {
        buckets[slot] = .one(existing)
      } else {
        buckets[slot] = .many([
          ObjectIdentifier(existing): existing, ObjectIdentifier(object): object,
        ])
        sharedKeyCount += 1
      }
    case .many(var objects):
      objects[ObjectIdentifier(object)] = object
      buckets[slot] = .many(objects)
    }
  }

  /// - Complexity: Amortized O(1).
  mutating func remove(_ object: ManagedObject, for key: Key) {
    guard let slot = slot(of: key) else { return }
    switch buckets[slot].take()! {
    case .one(let existing):
      if existing === object {
        removeSlot(slot)
      } else {
        buckets[slot] = .one(existing)
      }
    case .many(var objects):
      objects[ObjectIdentifier(object)] = nil
      if objects.count == 1, let last = objects.values.first {
        buckets[slot] = .one(last)
        sharedKeyCount -= 1
      } else {
        buckets[slot] = .many(objects)
      }
    }
  }

  // MARK: Table

  /// The slot holding `key`, if any.
  private func slot(of key: Key) -> Int? {
    guard !hashes.isEmpty else { return nil }
    let found = probe(key)
    return found.found ? found.slot : nil
  }

  /// The slot holding `key` (found), or the empty slot where it would go. The table must
  /// have slots.
  private func probe(_ key: Key) -> (slot: Int, hash: Int, found: Bool) {
    let hash = key.indexHash | 1
    let mask = hashes.count - 1
    var slot = hash & mask
    while true {
      let stored = hashes[slot]
      if stored == 0 { return (slot, hash, false) }
      if stored == hash, keys[slot]! == key { return (slot, hash, true) }
      slot = (slot + 1) & mask
    }
  }

  /// Empties a slot and shifts back the entries after it that probed past it, so every
  /// key stays reachable from its home slot without tombstones.
  private mutating func removeSlot(_ removed: Int) {
    let mask = hashes.count - 1
    var hole = removed
    hashes[hole] = 0
    keys[hole] = nil
    buckets[hole] = nil
    count -= 1
    var slot = (hole + 1) & mask
    while hashes[slot] != 0 {
      let home = hashes[slot] & mask
      // The entry may fill the hole if its home is not in the cyclic range (hole, slot].
      let distanceToSlot = (slot - home) & mask
      let distanceToHole = (hole - home) & mask
      if distanceToHole < distanceToSlot {
        hashes[hole] = hashes[slot]
        keys[hole] = keys[slot].take()
        buckets[hole] = buckets[slot].take()
        hashes[slot] = 0
        hole = slot
      }
      slot = (slot + 1) & mask
    }
  }

  private mutating func resize(toHold needed: Int) {
    var capacity = max(hashes.count, 8)
    while needed * 4 > capacity * 3 { capacity *= 2 }
    let oldHashes = hashes
    var oldKeys = keys
    var oldBuckets = buckets
    hashes = Array(repeating: 0, count: capacity)
    keys = Array(repeating: nil, count: capacity)
    buckets = Array(repeating: nil, count: capacity)
    let mask = capacity - 1
    for index in oldHashes.indices where oldHashes[index] != 0 {
      var slot = oldHashes[index] & mask
      while hashes[slot] != 0 { slot = (slot + 1) & mask }
      hashes[slot] = oldHashes[index]
      keys[slot] = oldKeys[index].take()
      buckets[slot] = oldBuckets[index].take()
    }
  }
}

/// A key of a ``ValueIndex``: equatable, with a cheap hash of good spread.
protocol IndexKey: Equatable {
  var indexHash: Int { get }
}

/// Spreads the bits of a word (the finalizer of SplitMix64).
@inline(__always)
func mixedHash(_ word: UInt64) -> Int {
  var z = word &+ 0x9E37_79B9_7F4A_7C15
  z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
  z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
  return Int(bitPattern: UInt(z ^ (z >> 31)))
}

extension PersistentValue: IndexKey {
  var indexHash: Int {
    switch self {
    case .null: return 0
    case .bool(let value): return mixedHash(value ? 1 : 2)
    case .int(let value): return mixedHash(UInt64(bitPattern: value))
    case .double(let value): return mixedHash((value == 0 ? 0 : value).bitPattern)
    case .date(let value):
      let seconds = value.timeIntervalSinceReferenceDate
      return mixedHash((seconds == 0 ? 0 : seconds).bitPattern)
    case .uuid(let value):
      return withUnsafeBytes(of: value.uuid) { bytes in
        mixedHash(
          bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
            ^ mixedHash64(bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
      }
    case .reference(let id): return mixedHash(id.rawValue)
    case .string, .data, .url, .references: return hashValue
    }
  }
}

@inline(__always)
private func mixedHash64(_ word: UInt64) -> UInt64 {
  UInt64(UInt(bitPattern: mixedHash(word)))
}

extension Optional: IndexKey where Wrapped == ObjectIdentifier {
  var indexHash: Int {
    guard let identifier = self else { return 0 }
    return mixedHash(UInt64(UInt(bitPattern: identifier)))
  }
}
