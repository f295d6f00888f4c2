/// Snapshots by object id, as a ``ChangesetApplier`` reads and writes them.
///
/// Besides whole snapshots, the applier reads and writes single values of stored objects
/// (an update changes a property or two); the defaults go through the snapshot, and storage
/// that keeps values another way answers without making one.
public protocol SnapshotStorage {
  /// The snapshot of an object, or `nil`; setting `nil` removes the object.
  subscript(id: ObjectID) -> ObjectSnapshot? { get set }

  /// Whether an object is stored. The default reads its snapshot; storage that makes
  /// snapshots on demand answers without one.
  func contains(_ id: ObjectID) -> Bool

  /// The entity and number of values of a stored object, or `nil` if it is not stored.
  func shape(of id: ObjectID) -> (entity: Int, valueCount: Int)?

  /// The value of property `property` (below the object's value count) of a stored object.
  func value(of id: ObjectID, property: Int) -> PersistentValue

  /// Sets the value of property `property` (below the object's value count) of a stored
  /// object.
  mutating func setValue(_ value: PersistentValue, of id: ObjectID, property: Int)
}

extension SnapshotStorage {
  /// Changes the value of property `property` of a stored object in place: taken out while
  /// `body` changes it, so that a list it holds is not copied.
  mutating func modifyValue(
    of id: ObjectID, property: Int, _ body: (inout PersistentValue) -> Void
  ) {
    var value = self.value(of: id, property: property)
    setValue(.null, of: id, property: property)
    body(&value)
    setValue(value, of: id, property: property)
  }

  public func contains(_ id: ObjectID) -> Bool { self[id] != nil }

  public func shape(of id: ObjectID) -> (entity: Int, valueCount: Int)? {
    self[id].map { ($0.entity, $0.values.count) }
  }

  public func value(of id: ObjectID, property: Int) -> PersistentValue {
    self[id]!.values[property]
  }

  public mutating func setValue(_ value: PersistentValue, of id: ObjectID, property: Int) {
    var snapshot = self[id]!
    snapshot.values[property] = value
    self[id] = snapshot
  }
}

extension Dictionary: SnapshotStorage where Key == ObjectID, Value == ObjectSnapshot {
  /// Sets the value in place: the snapshot's values are not copied.
  public mutating func setValue(_ value: PersistentValue, of id: ObjectID, property: Int) {
    self[id]!.values[property] = value
  }
}
