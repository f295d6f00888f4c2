/// An equality index: for each key, the live objects whose property holds it.
///
/// Used for unique and indexed attributes (keyed by ``PersistentValue``) and for to-one
/// relationships (keyed by the target's identity, `nil` for none), and kept up to date on
/// every change of the property, so equality fetches never scan. A key held by one object
/// (the common case, and the only one for a unique attribute once saved) costs one
/// dictionary entry, no bucket.
struct ValueIndex<Key: Hashable> {
  private enum Bucket {
    case one(ManagedObject)
    case many([ObjectIdentifier: ManagedObject])
  }

  private var buckets: [Key: Bucket] = [:]
  /// The number of keys held by more than one object: zero means every value is unique,
  /// which lets a save skip looking for clashes.
  private(set) var sharedKeyCount = 0

  mutating func reserveCapacity(_ count: Int) {
    buckets.reserveCapacity(buckets.count + count)
  }

  /// The objects holding `key`.
  ///
  /// - Complexity: O(*m*) in the objects holding it.
  func objects(for key: Key) -> [ManagedObject] {
    switch buckets[key] {
    case nil: []
    case .one(let object): [object]
    case .many(let objects): Array(objects.values)
    }
  }

  /// The number of objects holding `key`.
  ///
  /// - Complexity: O(1).
  func count(for key: Key) -> Int {
    switch buckets[key] {
    case nil: 0
    case .one: 1
    case .many(let objects): objects.count
    }
  }

  /// - Complexity: Amortized O(1): a bucket is taken out while it changes, so it is never
  ///   copied.
  mutating func add(_ object: ManagedObject, for key: Key) {
    // One hash in the common case: the key was free.
    switch buckets.updateValue(.one(object), forKey: key) {
    case nil:
      return
    case .one(let existing):
      if existing !== object {
        buckets[key] = .many([
          ObjectIdentifier(existing): existing, ObjectIdentifier(object): object,
        ])
        sharedKeyCount += 1
      }
    case .many(var objects):
      objects[ObjectIdentifier(object)] = object
      buckets[key] = .many(objects)
    }
  }

  /// - Complexity: Amortized O(1).
  mutating func remove(_ object: ManagedObject, for key: Key) {
    switch buckets.removeValue(forKey: key) {
    case nil:
      return
    case .one(let existing):
      if existing !== object { buckets[key] = .one(existing) }
    case .many(var objects):
      objects[ObjectIdentifier(object)] = nil
      if objects.count == 1, let last = objects.values.first {
        buckets[key] = .one(last)
        sharedKeyCount -= 1
      } else if !objects.isEmpty {
        buckets[key] = .many(objects)
      } else {
        sharedKeyCount -= 1
      }
    }
  }
}
