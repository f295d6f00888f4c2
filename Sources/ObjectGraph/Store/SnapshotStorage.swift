/// Snapshots by object id, as a ``ChangesetApplier`` reads and writes them.
public protocol SnapshotStorage {
  /// The snapshot of an object, or `nil`; setting `nil` removes the object.
  subscript(id: ObjectID) -> ObjectSnapshot? { get set }

  /// Whether an object is stored. The default reads its snapshot; storage that makes
  /// snapshots on demand answers without one.
  func contains(_ id: ObjectID) -> Bool
}

extension SnapshotStorage {
  public func contains(_ id: ObjectID) -> Bool { self[id] != nil }
}

extension Dictionary: SnapshotStorage where Key == ObjectID, Value == ObjectSnapshot {}
