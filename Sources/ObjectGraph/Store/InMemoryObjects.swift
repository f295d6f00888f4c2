/// The objects of an ``InMemoryStore``: snapshots by id, with each long list that a save
/// edited kept apart in chunks.
///
/// A snapshot keeps its lists as flat arrays, so an edit of a list of 100,000 shifted its
/// tail (400 KB on average) on every save, as much again as the context's own array. A list
/// longer than ``ChunkedList/maximumChunkCount`` moves out of its snapshot when a save first
/// edits it, into a ``ChunkedList``; its slot in the snapshot then holds `.null`, and the
/// chunked list answers for it until a save sets the property's whole value or deletes the
/// object. Reads of the whole object (``subscript(_:)``, as a load makes them) join it back.
///
/// Invariant (checked in debug builds): a list kept apart belongs to a stored object whose
/// slot for it holds `.null`.
struct InMemoryObjects: SnapshotStorage {
  /// A list property of an object.
  private struct ListKey: Hashable {
    var id: ObjectID
    var property: Int
  }

  private var snapshots: [ObjectID: ObjectSnapshot] = [:]
  /// The lists kept apart. One flat dictionary, edited through its `values` view: a write
  /// through a nested dictionary's optional subscript allocated coroutine frames.
  private var chunkedLists: [ListKey: ChunkedList<ObjectID>] = [:]

  /// Every object, sorted by id, with its lists joined back.
  ///
  /// - Complexity: O(*n* log *n*) in the number of objects, plus the lists kept apart.
  var sortedSnapshots: [ObjectSnapshot] {
    snapshots.keys.sorted().map { self[$0]! }
  }

  subscript(id: ObjectID) -> ObjectSnapshot? {
    get {
      guard var snapshot = snapshots[id] else { return nil }
      forEachListKeptApart(of: snapshot) { key, list in
        snapshot.values[key.property] = .references(list.elements)
      }
      return snapshot
    }
    set {
      if let old = snapshots[id] {
        forEachListKeptApart(of: old) { key, _ in chunkedLists[key] = nil }
      }
      snapshots[id] = newValue
    }
  }

  func contains(_ id: ObjectID) -> Bool { snapshots[id] != nil }

  func shape(of id: ObjectID) -> (entity: Int, valueCount: Int)? {
    snapshots[id].map { ($0.entity, $0.values.count) }
  }

  func value(of id: ObjectID, property: Int) -> PersistentValue {
    let value = snapshots[id]!.values[property]
    guard value == .null, let list = chunkedLists[ListKey(id: id, property: property)] else {
      return value
    }
    return .references(list.elements)
  }

  mutating func setValue(_ value: PersistentValue, of id: ObjectID, property: Int) {
    if snapshots[id]!.values[property] == .null {
      chunkedLists[ListKey(id: id, property: property)] = nil
    }
    snapshots[id]!.values[property] = value
  }

  func listCount(of id: ObjectID, property: Int) -> Int? {
    let value = snapshots[id]!.values[property]
    guard value == .null, let list = chunkedLists[ListKey(id: id, property: property)] else {
      return value.listCount
    }
    return list.count
  }

  /// Edits a list kept apart in place, or a short list in its snapshot; a long list moves
  /// apart first.
  ///
  /// - Complexity: O(*e* × (*m* / ``ChunkedList/maximumChunkCount`` +
  ///   ``ChunkedList/maximumChunkCount``)) for *e* edits of a list of *m* kept apart; the
  ///   first edit of a long list also copies it once into chunks.
  mutating func editList(of id: ObjectID, property: Int, _ edits: [ListEdit]) {
    let key = ListKey(id: id, property: property)
    let index: Dictionary<ListKey, ChunkedList<ObjectID>>.Index
    if let kept = chunkedLists.index(forKey: key) {
      index = kept
    } else {
      guard case .references(let ids) = snapshots[id]!.values[property],
        ids.count > ChunkedList<ObjectID>.maximumChunkCount
      else {
        return modifyValue(of: id, property: property) { $0.editList(edits) }
      }
      snapshots[id]!.values[property] = .null
      chunkedLists[key] = ChunkedList(ids)
      index = chunkedLists.index(forKey: key)!
    }
    try! chunkedLists.values[index].applyEdits(edits)  // checked to fit by the applier
    debugCheckInvariants(key)
  }

  /// Calls `body` with each list of `snapshot`'s object kept apart (their slots hold
  /// `.null`).
  private func forEachListKeptApart(
    of snapshot: ObjectSnapshot, _ body: (ListKey, ChunkedList<ObjectID>) -> Void
  ) {
    guard !chunkedLists.isEmpty else { return }
    for (property, value) in snapshot.values.enumerated() where value == .null {
      let key = ListKey(id: snapshot.id, property: property)
      if let list = chunkedLists[key] { body(key, list) }
    }
  }

  /// Checks, in debug builds, that a list kept apart stands in for a `.null` slot of a
  /// stored object.
  private func debugCheckInvariants(_ key: ListKey) {
    #if DEBUG
      assert(
        snapshots[key.id]?.values[key.property] == .null,
        "InMemoryObjects: list \(key.property) of \(key.id) is kept twice, or outlived its object")
    #endif
  }
}
