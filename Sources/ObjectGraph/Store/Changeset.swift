/// What one save hands to a ``PersistentStore``: exactly what changed since the last save.
///
/// A changeset never carries the whole graph. Inserted objects come with every property
/// value; updated objects with only the properties that changed, and an ordered to-many
/// relationship that was edited by index with the edits themselves (``ListEdit``), so that
/// a journaling store can append them as they are and a move costs O(1), not a rewrite of
/// every sibling. Deleted objects come by identifier; the relationships that pointed at them
/// have already been changed (by the delete rules) in the `updated` part of the same changeset.
///
/// Property values are indexed by the property's position in its ``EntityDescription``.
public struct Changeset: Sendable, Hashable {
  /// Objects new to the store, with all their values: packed when a context made the
  /// changeset (saving 100,000 new objects then makes no array per object).
  var insertedObjects: ObjectList

  /// Objects new to the store, with all their values.
  ///
  /// - Complexity: O(1) for a changeset made from snapshots; O(*n*) in the number of values
  ///   for one a context saved, on every read.
  public var inserted: [ObjectSnapshot] {
    get { insertedObjects.snapshots }
    _modify { yield &insertedObjects.snapshots }
    set { insertedObjects.snapshots = newValue }
  }

  /// Objects already in the store whose properties changed.
  public var updated: [ObjectUpdate]
  /// Objects to remove from the store.
  public var deleted: [ObjectID]
  /// The smallest object number not yet handed out; the store records the largest it sees.
  public var nextObjectNumber: UInt64
  /// The version of the store's contents the saving context's objects were at (its
  /// ``ObjectContext/storeVersion``): the changeset applies to the contents as they were
  /// after that many saves of the container's contexts. A container hands a store only
  /// changesets based on the latest version (a context that is behind merges, then makes its
  /// changeset again); a store may use it to check that nothing else wrote in between. 0 for
  /// a changeset made by hand.
  public var baseVersion: UInt64 = 0

  /// Creates a changeset.
  public init(
    inserted: [ObjectSnapshot] = [], updated: [ObjectUpdate] = [], deleted: [ObjectID] = [],
    nextObjectNumber: UInt64 = 1
  ) {
    self.init(
      insertedObjects: ObjectList(inserted), updated: updated, deleted: deleted,
      nextObjectNumber: nextObjectNumber)
  }

  init(
    insertedObjects: ObjectList, updated: [ObjectUpdate], deleted: [ObjectID],
    nextObjectNumber: UInt64
  ) {
    self.insertedObjects = insertedObjects
    self.updated = updated
    self.deleted = deleted
    self.nextObjectNumber = nextObjectNumber
  }

  /// The inserted objects, packed, as a store encodes them without a snapshot each.
  ///
  /// - Complexity: O(1) for a context's changeset (made packed); O(*n*) in the number of
  ///   values, on every read, for one made from snapshots.
  public var insertedPacked: PackedObjects { insertedObjects.packed }

  /// Whether the changeset changes nothing.
  public var isEmpty: Bool { insertedObjects.isEmpty && updated.isEmpty && deleted.isEmpty }

  /// Appends to `ids` the ids of the objects it inserts, updates or deletes, in that order
  /// (an object may appear more than once).
  func appendChangedIDs(to ids: inout [ObjectID]) {
    if !insertedObjects.isEmpty {
      insertedObjects.forEach(readsStrings: false) { id, _, _ in ids.append(id) }
    }
    for update in updated { ids.append(update.id) }
    ids += deleted
  }
}

/// One object with all its property values, as inserted into or loaded from a store.
public struct ObjectSnapshot: Sendable, Hashable {
  /// The object's identity.
  public var id: ObjectID
  /// The index of the object's entity in ``Schema/entities``.
  public var entity: Int
  /// One value per property of the entity, in the entity's property order.
  public var values: [PersistentValue]

  /// Creates a snapshot.
  public init(id: ObjectID, entity: Int, values: [PersistentValue]) {
    self.id = id
    self.entity = entity
    self.values = values
  }
}

/// The changed properties of one stored object.
public struct ObjectUpdate: Sendable, Hashable {
  /// The object's identity.
  public var id: ObjectID
  /// The index of the object's entity in ``Schema/entities``.
  public var entity: Int
  /// The changes, at most one per property, in property order.
  public var changes: [PropertyChange]

  /// Creates an update.
  public init(id: ObjectID, entity: Int, changes: [PropertyChange]) {
    self.id = id
    self.entity = entity
    self.changes = changes
  }
}

/// A change to one property of a stored object.
public struct PropertyChange: Sendable, Hashable {
  /// How the property changed.
  public enum Kind: Sendable, Hashable {
    /// The property now holds this value (for a to-many relationship, the whole list).
    case set(PersistentValue)
    /// The ordered to-many relationship was edited; applying the edits in order to the
    /// stored list gives the new list.
    case edit([ListEdit])
  }

  /// The index of the property in its entity.
  public var property: Int
  /// How it changed.
  public var kind: Kind

  /// Creates a property change.
  public init(property: Int, kind: Kind) {
    self.property = property
    self.kind = kind
  }
}

/// One index operation on an ordered to-many relationship, with Swift `Array` semantics.
public enum ListEdit: Sendable, Hashable {
  /// `list.insert(id, at: index)`.
  case insert(ObjectID, at: Int)
  /// `list.remove(at: index)`.
  case remove(at: Int)
  /// `list.insert(list.remove(at: from), at: to)`.
  case move(from: Int, to: Int)
}

extension Array where Element == ObjectID {
  /// Applies list edits in order.
  ///
  /// A remove followed by an insert at the same index (`list[i] = x`, as a context records
  /// it) is applied as the one assignment it is, and the two moves a context records for
  /// `swapAt(i, j)` as one exchange: O(1) each, not two shifts of the list.
  ///
  /// - Throws: ``ObjectGraphError`` with code ``ObjectGraphError/Code/corruptStore`` when an
  ///   edit's index is out of range for the list it applies to.
  /// - Complexity: O(*n*) per edit in the worst case, the cost of the array operation.
  public mutating func apply(_ edits: [ListEdit]) throws {
    try applyEdits(edits)
  }
}

/// A list of object ids that list edits apply to: a flat array, or a ``ChunkedList`` that
/// shifts one chunk per edit. The edits' meaning is written once, in ``applyEdits(_:)``.
protocol ListEditTarget {
  var count: Int { get }
  subscript(index: Int) -> ObjectID { get set }
  mutating func insert(_ id: ObjectID, at index: Int)
  @discardableResult mutating func remove(at index: Int) -> ObjectID
  mutating func moveElement(from: Int, to: Int)
  mutating func swapAt(_ first: Int, _ second: Int)
}

extension Array: ListEditTarget where Element == ObjectID {}

extension ListEditTarget {
  /// Applies list edits in order, each pair a context records for `list[i] = x` or
  /// `swapAt(i, j)` as the one assignment or exchange it is (see `Array.apply(_:)`).
  ///
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` when an edit does not fit; the edits
  ///   before it stay applied.
  mutating func applyEdits(_ edits: [ListEdit]) throws {
    var next = edits.startIndex
    while next < edits.endIndex {
      let edit = edits[next]
      _ = try edit.count(after: count)
      let following = next + 1 < edits.endIndex ? edits[next + 1] : nil
      switch (edit, following) {
      case (.remove(let index), .insert(let id, let position)?) where position == index:
        self[index] = id
        next += 2
        continue
      case (.move(let high, let low), .move(let from, let to)?)
      where low < high && from == low + 1 && to == high:
        swapAt(low, high)
        next += 2
        continue
      case (.insert(let id, let index), _): insert(id, at: index)
      case (.remove(let index), _): remove(at: index)
      case (.move(let from, let to), _): moveElement(from: from, to: to)
      }
      next += 1
    }
  }
}

extension ListEdit {
  /// The length of a list of `count` objects after this edit.
  ///
  /// - Throws: ``ObjectGraphError`` with code ``ObjectGraphError/Code/corruptStore`` when
  ///   the edit's index is out of range for the list.
  public func count(after count: Int) throws -> Int {
    switch self {
    case .insert(_, let index) where index >= 0 && index <= count: return count + 1
    case .remove(let index) where index >= 0 && index < count: return count - 1
    case .move(let from, let to) where from >= 0 && from < count && to >= 0 && to < count:
      return count
    default:
      throw ObjectGraphError(
        .corruptStore, "list edit \(self) does not fit a list of \(count) objects")
    }
  }
}
