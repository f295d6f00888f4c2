/// An equality index: for each key, the live objects whose property holds it.
///
/// Used for unique and indexed attributes (keyed by ``PersistentValue``) and for to-one
/// relationships (keyed by the target's identity, `nil` for none), and kept up to date on
/// every change of the property, so equality fetches never scan.
struct ValueIndex<Key: Hashable> {
  private(set) var buckets: [Key: [ObjectIdentifier: ManagedObject]] = [:]

  /// The objects holding `key`.
  ///
  /// - Complexity: O(1) to find the bucket.
  func objects(for key: Key) -> Dictionary<ObjectIdentifier, ManagedObject>.Values? {
    buckets[key]?.values
  }

  /// The number of objects holding `key`.
  func count(for key: Key) -> Int { buckets[key]?.count ?? 0 }

  mutating func add(_ object: ManagedObject, for key: Key) {
    buckets[key, default: [:]][ObjectIdentifier(object)] = object
  }

  mutating func remove(_ object: ManagedObject, for key: Key) {
    guard var bucket = buckets.removeValue(forKey: key) else { return }
    bucket[ObjectIdentifier(object)] = nil
    if !bucket.isEmpty { buckets[key] = bucket }
  }
}
