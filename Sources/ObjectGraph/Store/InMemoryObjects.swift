/// The objects of an ``InMemoryStore``: snapshots by id, with each long list that a save
/// edited kept apart in chunks (``ListsKeptApart``): an edit of a list of 100,000 in a
/// snapshot shifted its tail (400 KB on average) on every save, as much again as the
/// context's own array. Reads of the whole object (``subscript(_:)``, as a load makes them)
/// join its lists back.
///
/// Invariant (checked in debug builds): a list kept apart belongs to a stored object whose
/// slot for it holds `.null`.
struct InMemoryObjects: SnapshotStorage {
  private var snapshots: [ObjectID: ObjectSnapshot] = [:]
  private var listsKeptApart = ListsKeptApart()

  /// Every object, sorted by id, with its lists joined back.
  ///
  /// - Complexity: O(*n* log *n*) in the number of objects, plus the lists kept apart.
  var sortedSnapshots: [ObjectSnapshot] {
    snapshots.keys.sorted().map { self[$0]! }
  }

  subscript(id: ObjectID) -> ObjectSnapshot? {
    get {
      guard var snapshot = snapshots[id] else { return nil }
      listsKeptApart.join(into: &snapshot.values, of: id)
      return snapshot
    }
    set {
      if let old = snapshots[id] { listsKeptApart.forgetLists(of: id, in: old.values) }
      snapshots[id] = newValue
    }
  }

  func contains(_ id: ObjectID) -> Bool { snapshots[id] != nil }

  func shape(of id: ObjectID) -> (entity: Int, valueCount: Int)? {
    snapshots[id].map { ($0.entity, $0.values.count) }
  }

  func value(of id: ObjectID, property: Int) -> PersistentValue {
    listsKeptApart.value(
      ListsKeptApart.Key(id: id, property: property), slot: snapshots[id]!.values[property])
  }

  mutating func setValue(_ value: PersistentValue, of id: ObjectID, property: Int) {
    if case .null = snapshots[id]!.values[property] {
      listsKeptApart.forget(ListsKeptApart.Key(id: id, property: property))
    }
    snapshots[id]!.values[property] = value
  }

  func listCount(of id: ObjectID, property: Int) -> Int? {
    listsKeptApart.listCount(
      ListsKeptApart.Key(id: id, property: property), slot: snapshots[id]!.values[property])
  }

  /// Edits a list kept apart in place, or a short list in its snapshot; a long list moves
  /// apart first.
  ///
  /// - Complexity: as ``ListsKeptApart/edit(_:slot:_:)``.
  mutating func editList(of id: ObjectID, property: Int, _ edits: [ListEdit]) {
    let key = ListsKeptApart.Key(id: id, property: property)
    switch listsKeptApart.edit(key, slot: snapshots[id]!.values[property], edits) {
    case .edited:
      break
    case .movedApart:
      snapshots[id]!.values[property] = .null
    case .leftInPlace:
      modifyValue(of: id, property: property) { $0.editList(edits) }
    }
    debugCheckInvariants(key)
  }

  /// Checks, in debug builds, that a list kept apart stands in for a `.null` slot of a
  /// stored object.
  private func debugCheckInvariants(_ key: ListsKeptApart.Key) {
    #if DEBUG
      if listsKeptApart.list(key, slot: .null) != nil {
        assert(
          snapshots[key.id]?.values[key.property] == .null,
          "InMemoryObjects: list \(key.property) of \(key.id) is kept twice, or outlived its object"
        )
      }
    #endif
  }
}
