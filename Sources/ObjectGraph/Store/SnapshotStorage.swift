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

  /// The number of objects in list property `property` of a stored object, or `nil` when
  /// its value is not a list (`.null` counts as an empty list). The default reads the value;
  /// storage that keeps lists apart answers from them.
  ///
  /// - Complexity: O(1) for the default over a dictionary of snapshots.
  func listCount(of id: ObjectID, property: Int) -> Int?

  /// Applies list edits, already checked to fit, to list property `property` of a stored
  /// object. The default takes the value out, edits its array in place and puts it back;
  /// storage that keeps long lists in chunks edits a chunk (an edit of a list of 100,000
  /// then shifts at most a chunk, not the list's tail).
  ///
  /// - Complexity: O(*e* × *n*) at worst for the default (each edit an array's shift of a
  ///   list of *n*); no copy of the list.
  mutating func editList(of id: ObjectID, property: Int, _ edits: [ListEdit])

  /// Stores objects none of which is stored yet (the caller checked), in their order. The
  /// default sets each one's snapshot; storage that keeps packed objects appends them
  /// whole (a save of 100,000 new objects replayed then makes no snapshot per object).
  ///
  /// - Complexity: O(*n*) in the objects' values for the default.
  mutating func insert(contentsOf objects: PackedObjects)
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

  public func listCount(of id: ObjectID, property: Int) -> Int? {
    value(of: id, property: property).listCount
  }

  public mutating func editList(of id: ObjectID, property: Int, _ edits: [ListEdit]) {
    modifyValue(of: id, property: property) { $0.editList(edits) }
  }

  public mutating func insert(contentsOf objects: PackedObjects) {
    for snapshot in objects.snapshots { self[snapshot.id] = snapshot }
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

extension PersistentValue {
  /// The number of objects of a list value (`.null` is an empty list), or `nil` for a value
  /// that is not a list.
  var listCount: Int? {
    switch self {
    case .references(let ids): ids.count
    case .null: 0
    default: nil
    }
  }

  /// Applies list edits, already checked to fit, to this list value (`.null` is an empty
  /// list), editing its array in place.
  mutating func editList(_ edits: [ListEdit]) {
    var ids: [ObjectID] = []
    if case .references(let stored) = self {
      ids = stored
      self = .null  // lets go of the array: `ids` is then its only holder
    }
    try! ids.applyEdits(edits)  // checked to fit when the changeset was checked
    self = .references(ids)
  }
}
