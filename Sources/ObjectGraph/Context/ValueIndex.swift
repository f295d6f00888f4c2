/// An equality index: for each key, the live objects whose property holds it.
///
/// Used for unique and indexed attributes (keyed by ``PersistentValue``) and for to-one
/// relationships (keyed by the target's identity, `nil` for none), and kept up to date on
/// every change of the property, so equality fetches never scan. A key held by one object
/// (the common case, and the only one for a unique attribute once saved) costs one entry,
/// no bucket.
///
/// It is its own hash table rather than a `Dictionary`, laid out like a compact dictionary:
/// - the *entries* (hash, key, objects) are kept dense, in the order keys arrived (a removed
///   entry's place is taken by the last one);
/// - the *slots* are an open-addressing table of 8-byte words (linear probing, at most three
///   quarters full, backward-shift deletion): the entry's position and the high half of its
///   key's hash, so a probe reads an entry only when the hash halves match.
///
/// Adding a key touches one random place in memory (its slot) and appends an entry; growing
/// rebuilds only the slots. Keys hash with ``IndexKey/indexHash``: a UUID is two
/// multiplications instead of a SipHash of 16 bytes, and every insert, load and fetch by id
/// hashes one.
struct ValueIndex<Key: IndexKey> {
  /// The objects holding one key. Unretained: the table that owns the index holds every
  /// object in it and takes an object out of the index before letting it go, so adding,
  /// removing and tearing down 100,000 entries touch no object's reference count.
  private enum Bucket {
    case one(Unmanaged<ManagedObject>)
    case many([ObjectIdentifier: Unmanaged<ManagedObject>])
  }

  private struct Entry {
    var hash: Int
    var key: Key
    var bucket: Bucket
  }

  private var entries: [Entry] = []
  /// Per slot: 0 when empty, else the entry's position + 1 in the low 32 bits and the high
  /// 32 bits of its key's hash in the high ones.
  private var slots: [UInt64] = []
  /// The number of keys held by more than one object: zero means every value is unique,
  /// which lets a save skip looking for clashes.
  private(set) var sharedKeyCount = 0

  private static var positionMask: UInt64 { 0xFFFF_FFFF }

  /// Makes room for `additional` more keys without growing.
  mutating func reserveCapacity(_ additional: Int) {
    let needed = entries.count + additional
    entries.reserveCapacity(needed)
    if needed * 4 > slots.count * 3 { rebuildSlots(toHold: needed) }
  }

  /// The objects holding `key`.
  ///
  /// - Complexity: O(*m*) in the objects holding it.
  func objects(for key: Key) -> [ManagedObject] {
    guard let position = position(of: key) else { return [] }
    switch entries[position].bucket {
    case .one(let object): return [object.takeUnretainedValue()]
    case .many(let objects): return objects.values.map { $0.takeUnretainedValue() }
    }
  }

  /// The number of objects holding `key`.
  ///
  /// - Complexity: O(1).
  func count(for key: Key) -> Int {
    guard let position = position(of: key) else { return 0 }
    switch entries[position].bucket {
    case .one: return 1
    case .many(let objects): return objects.count
    }
  }

  /// - Complexity: Amortized O(1): a bucket is taken out while it changes, so it is never
  ///   copied.
  mutating func add(_ object: ManagedObject, for key: Key) {
    if (entries.count + 1) * 4 > slots.count * 3 { rebuildSlots(toHold: entries.count + 1) }
    add(object, for: key, hash: key.indexHash)
  }

  /// Adds `objects[i]` for `keys[i]`, for every `i`, as ``add(_:for:)`` one by one would.
  ///
  /// Into an empty index, the entries are laid out in the order of their keys' home slots,
  /// and the slots are then written in one sweep: added one by one, each key would touch a
  /// random place of a table that, for 100,000 keys, no longer fits the faster caches.
  ///
  /// - Complexity: O(*n*) in the number of keys.
  mutating func add<Keys: RandomAccessCollection<Key>>(
    _ objects: [Unmanaged<ManagedObject>], for keys: Keys
  ) where Keys.Index == Int {
    precondition(objects.count == keys.count, "one key per object")
    guard entries.isEmpty else {
      for (object, key) in zip(objects, keys) { add(object.takeUnretainedValue(), for: key) }
      return
    }
    // Nothing to add. (Also: `Array(unsafeUninitializedCapacity: 0)` writes the count into
    // the standard library's shared empty array, a race between threads doing the same.)
    guard !keys.isEmpty else { return }
    let count = keys.count
    if count * 4 > slots.count * 3 { rebuildSlots(toHold: count) }
    let mask = slots.count - 1
    let hashes = keys.map(\.indexHash)
    // A counting sort on the home slot's range of 64 slots (512 bytes of the table).
    let rangeShift = 6
    var rangeStarts = [Int](repeating: 0, count: (mask >> rangeShift) + 2)
    for hash in hashes { rangeStarts[((hash & mask) >> rangeShift) + 1] += 1 }
    for range in 1..<rangeStarts.count { rangeStarts[range] += rangeStarts[range - 1] }
    // Keys and objects are read in their own order and each entry written to its place:
    // scattered writes cost little, scattered reads (a cache miss each) a lot.
    entries = [Entry](unsafeUninitializedCapacity: count) { buffer, initialized in
      for index in 0..<count {
        let range = (hashes[index] & mask) >> rangeShift
        (buffer.baseAddress! + rangeStarts[range]).initialize(
          to: Entry(
            hash: hashes[index], key: keys[index],
            bucket: .one(objects[index])))
        rangeStarts[range] += 1
      }
      initialized = count
    }
    var repeated: [Int] = []
    for position in entries.indices {
      let hash = entries[position].hash
      let (slot, found) = probe(entries[position].key, hash)
      if found {
        // A key held twice: the object joins the first entry's bucket.
        if case .one(let object) = entries[position].bucket {
          addToBucket(at: Self.position(in: slots[slot]), object.takeUnretainedValue())
        }
        repeated.append(position)
      } else {
        slots[slot] = Self.tag(of: hash) | UInt64(position + 1)
      }
    }
    for position in repeated.reversed() { removeUnslottedEntry(at: position) }
  }

  /// Adds an object for a key whose hash is known; the table must have room for one more.
  private mutating func add(_ object: ManagedObject, for key: Key, hash: Int) {
    let (slot, found) = probe(key, hash)
    guard found else {
      precondition(entries.count < Int(Self.positionMask), "ObjectGraph: index too large")
      slots[slot] = Self.tag(of: hash) | UInt64(entries.count + 1)
      entries.append(Entry(hash: hash, key: key, bucket: .one(Unmanaged.passUnretained(object))))
      return
    }
    addToBucket(at: Self.position(in: slots[slot]), object)
  }

  /// Adds an object to the bucket of the entry at `position`.
  private mutating func addToBucket(at position: Int, _ object: ManagedObject) {
    let added = Unmanaged.passUnretained(object)
    switch takeBucket(at: position) {
    case .one(let existing):
      if existing.toOpaque() == added.toOpaque() {
        entries[position].bucket = .one(existing)
      } else {
        entries[position].bucket = .many([
          ObjectIdentifier(existing.takeUnretainedValue()): existing,
          ObjectIdentifier(object): added,
        ])
        sharedKeyCount += 1
      }
    case .many(var objects):
      objects[ObjectIdentifier(object)] = added
      entries[position].bucket = .many(objects)
    }
  }

  /// - Complexity: Amortized O(1).
  mutating func remove(_ object: ManagedObject, for key: Key) {
    guard !slots.isEmpty else { return }
    let (slot, found) = probe(key, key.indexHash)
    guard found else { return }
    let position = Self.position(in: slots[slot])
    switch takeBucket(at: position) {
    case .one(let existing):
      if existing.toOpaque() == Unmanaged.passUnretained(object).toOpaque() {
        removeEntry(at: position, slot: slot)
      } else {
        entries[position].bucket = .one(existing)
      }
    case .many(var objects):
      objects[ObjectIdentifier(object)] = nil
      if objects.count == 1, let last = objects.values.first {
        entries[position].bucket = .one(last)
        sharedKeyCount -= 1
      } else {
        entries[position].bucket = .many(objects)
      }
    }
  }

  // MARK: Table

  /// The high half of a hash, as stored in a slot.
  @inline(__always)
  private static func tag(of hash: Int) -> UInt64 {
    UInt64(UInt(bitPattern: hash)) & ~positionMask
  }

  /// The entry position a non-empty slot refers to.
  @inline(__always)
  private static func position(in slot: UInt64) -> Int {
    Int(truncatingIfNeeded: slot & positionMask) - 1
  }

  /// The position of the entry holding `key`, if any.
  private func position(of key: Key) -> Int? {
    guard !slots.isEmpty else { return nil }
    let (slot, found) = probe(key, key.indexHash)
    return found ? Self.position(in: slots[slot]) : nil
  }

  /// The slot referring to `key`'s entry (found), or the empty slot where it would go. The
  /// table must have slots.
  private func probe(_ key: Key, _ hash: Int) -> (slot: Int, found: Bool) {
    let mask = slots.count - 1
    let tag = Self.tag(of: hash)
    var slot = hash & mask
    while true {
      let stored = slots[slot]
      if stored == 0 { return (slot, false) }
      if stored & ~Self.positionMask == tag {
        let position = Self.position(in: stored)
        if entries[position].hash == hash, entries[position].key == key { return (slot, true) }
      }
      slot = (slot + 1) & mask
    }
  }

  /// Takes a bucket out of its entry (an empty `.many` is left), so changing it does not
  /// copy it.
  private mutating func takeBucket(at position: Int) -> Bucket {
    var bucket = Bucket.many([:])
    swap(&bucket, &entries[position].bucket)
    return bucket
  }

  /// Removes the entry at `position`, which `slot` refers to: the slot is emptied (shifting
  /// back the slots after it), and the last entry moves into the entry's place.
  private mutating func removeEntry(at position: Int, slot: Int) {
    emptySlot(slot)
    removeUnslottedEntry(at: position)
  }

  /// Removes the entry at `position`, which no slot refers to: the last entry moves into its
  /// place.
  private mutating func removeUnslottedEntry(at position: Int) {
    let last = entries.count - 1
    if position != last {
      // The slot referring to the last entry now refers to `position`.
      let mask = slots.count - 1
      var lastSlot = entries[last].hash & mask
      while Self.position(in: slots[lastSlot]) != last { lastSlot = (lastSlot + 1) & mask }
      slots[lastSlot] = Self.tag(of: entries[last].hash) | UInt64(position + 1)
      entries.swapAt(position, last)
    }
    entries.removeLast()
  }

  /// Empties a slot and shifts back the slots after it that probed past it, so every key
  /// stays reachable from its home slot without tombstones.
  private mutating func emptySlot(_ removed: Int) {
    let mask = slots.count - 1
    var hole = removed
    slots[hole] = 0
    var slot = (hole + 1) & mask
    while slots[slot] != 0 {
      let home = entries[Self.position(in: slots[slot])].hash & mask
      // The slot may fill the hole if its home is not in the cyclic range (hole, slot].
      let distanceToSlot = (slot - home) & mask
      let distanceToHole = (hole - home) & mask
      if distanceToHole < distanceToSlot {
        slots[hole] = slots[slot]
        slots[slot] = 0
        hole = slot
      }
      slot = (slot + 1) & mask
    }
  }

  /// Makes a table for `needed` keys and refers every entry from it; entries do not move.
  private mutating func rebuildSlots(toHold needed: Int) {
    var capacity = max(slots.count, 8)
    while needed * 4 > capacity * 3 { capacity *= 2 }
    slots = Array(repeating: 0, count: capacity)
    let mask = capacity - 1
    for position in entries.indices {
      let hash = entries[position].hash
      var slot = hash & mask
      while slots[slot] != 0 { slot = (slot + 1) & mask }
      slots[slot] = Self.tag(of: hash) | UInt64(position + 1)
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
