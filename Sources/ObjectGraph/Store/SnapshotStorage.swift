/// Snapshots by object id, as a ``ChangesetApplier`` reads and writes them.
public protocol SnapshotStorage {
  /// The snapshot of an object, or `nil`; setting `nil` removes the object.
  subscript(id: ObjectID) -> ObjectSnapshot? { get set }
}

extension Dictionary: SnapshotStorage where Key == ObjectID, Value == ObjectSnapshot {}
