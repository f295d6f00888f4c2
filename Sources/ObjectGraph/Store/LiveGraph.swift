/// Stored objects in memory, as replaying a store's saves builds them.
///
/// Objects live in ``PackedObjects`` (handed out by ``contents`` without copying) with an
/// ``ObjectIndex`` from id to position; a deleted object leaves a removed position behind,
/// so the order of the file is kept. Changesets are applied by the shared
/// ``ChangesetApplier`` (all or nothing) through the graph's ``SnapshotStorage``
/// conformance. Used to replay a file (``StoreReplayer``; an open ``BinaryStore`` keeps only
/// ``ObjectShapes``) and for the contents a container's contexts share (``SharedContents``).
///
/// A long list that the changesets edit is kept apart in chunks while they apply
/// (``ListsKeptApart``): replayed in the objects' values, the 3,000 saved edits of
/// appbench's list of 100,000 each shifted its tail, two thirds of opening that store.
/// ``joinListsKeptApart()`` puts them back; ``contents`` and ``sortedObjects`` are read
/// after it.
struct LiveGraph {
  /// Every object, in the order the file gave them, with removed positions; a list kept
  /// apart holds `.null` here until it is joined back.
  private(set) var objects = PackedObjects()
  /// The long lists the changesets edited, while they apply.
  private var listsKeptApart = ListsKeptApart()
  /// The position of each live object in ``objects``: made when first needed (a change
  /// applied, or ``makeIndex()``), so that opening a file that is one snapshot makes none.
  private var index: ObjectIndex? = ObjectIndex()
  /// The largest next object number recorded.
  private(set) var nextObjectNumber: UInt64 = 1
  /// Encoded bytes of the whole objects seen (inserted or in snapshots), to estimate the
  /// size of a compacted file.
  private(set) var sampledObjectBytes = 0
  /// The number of whole objects behind ``sampledObjectBytes``.
  private(set) var sampledObjectCount = 0

  /// An empty graph.
  init() {}

  /// A graph of `contents`' objects (which a store or an earlier graph checked against the
  /// schema).
  ///
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` when an id appears twice.
  /// - Complexity: O(*n*) in the objects, none of them copied.
  init(_ contents: StoreContents) throws {
    try replace(with: contents.packed, nextObjectNumber: contents.nextObjectNumber)
  }

  /// Whether the graph holds no object.
  var isEmpty: Bool { objects.liveCount == 0 }

  /// Every object and the next object number, as ``PersistentStore/load()`` returns them
  /// (its lists joined: ``joinListsKeptApart()``).
  ///
  /// - Complexity: O(1): the packed objects are shared, not copied.
  var contents: StoreContents {
    precondition(listsKeptApart.isEmpty, "ObjectGraph: a live graph read with lists apart")
    return StoreContents(packed: objects, nextObjectNumber: nextObjectNumber)
  }

  /// Every object, sorted by id (the order compaction writes them in; its lists joined).
  ///
  /// - Complexity: O(*n* log *n*) in the number of objects.
  var sortedObjects: [ObjectSnapshot] {
    precondition(listsKeptApart.isEmpty, "ObjectGraph: a live graph read with lists apart")
    return objects.snapshots.sorted { $0.id < $1.id }
  }

  /// Puts each list kept apart back into its object's values.
  ///
  /// - Complexity: O(*m*) in the objects of the lists kept apart.
  mutating func joinListsKeptApart() {
    guard !listsKeptApart.isEmpty else { return }
    var lists = listsKeptApart
    listsKeptApart = ListsKeptApart()
    lists.joinAll { key, ids in
      objects.replaceValue(
        at: objects.valueRange(indexed[key.id]!).lowerBound + key.property,
        with: .references(ids))
    }
  }

  /// The entity of the live object `id`, if there is one.
  func entity(of id: ObjectID) -> Int? {
    indexed[id].map { Int(objects.entities[$0]) }
  }

  /// The value of `property` of the live object `id`, if there is one and it has that many
  /// properties.
  func value(of id: ObjectID, _ property: Int) -> PersistentValue? {
    guard let position = indexed[id] else { return nil }
    let range = objects.valueRange(position)
    guard property >= 0, property < range.count else { return nil }
    return listsKeptApart.value(
      ListsKeptApart.Key(id: id, property: property),
      slot: objects.value(at: range.lowerBound + property))
  }

  /// Applies a changeset, all or nothing.
  ///
  /// - Throws: The applier's ``ObjectGraphError`` when the changeset does not fit; the graph
  ///   is then unchanged.
  /// - Complexity: O(*k*) in the size of the changeset.
  mutating func apply(_ changeset: Changeset, with applier: ChangesetApplier) throws {
    try makeIndex()
    try applier.apply(changeset, to: &self)
    nextObjectNumber = max(nextObjectNumber, changeset.nextObjectNumber)
  }

  /// Replaces everything with a snapshot's objects (which ``RecordReader`` checked against
  /// the schema).
  ///
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` when an id appears twice.
  /// - Complexity: O(*n*) in the number of objects.
  mutating func replace(with snapshot: PackedObjects, nextObjectNumber: UInt64) throws {
    listsKeptApart = ListsKeptApart()
    self.objects = snapshot
    self.nextObjectNumber = nextObjectNumber
    index = nil
    // Ids that increase cannot repeat; others are indexed now, which finds a repeated one.
    // (Object numbers start at 1, so an id 0 counts as not increasing.)
    let increases = snapshot.ids.withUnsafeBufferPointer { ids in
      snapshot.entities.withUnsafeBufferPointer { entities in
        var previous: UInt64 = 0
        for position in ids.indices where entities[position] != PackedObjects.removed {
          guard ids[position].rawValue > previous else { return false }
          previous = ids[position].rawValue
        }
        return true
      }
    }
    if !increases { try makeIndex() }
  }

  /// Indexes the live objects, if they are not yet.
  ///
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` when an id appears twice.
  mutating func makeIndex() throws {
    guard index == nil else { return }
    // Ids are below the next number the store hands out.
    var index = ObjectIndex(
      capacity: objects.liveCount, largestNumber: max(nextObjectNumber, 1) - 1)
    let objects = objects
    if let id = index.setNew(objects.ids, where: { objects.isLive($0) }) {
      throw ObjectGraphError(
        .corruptStore, "object \(id) appears twice in a snapshot", objectID: id)
    }
    self.index = index
  }

  /// The index, which reads by id need (``makeIndex()``); lent, not copied.
  private var indexed: ObjectIndex {
    _read {
      guard index != nil else {
        preconditionFailure("ObjectGraph: a live graph read by id before it was indexed")
      }
      yield index!
    }
  }

  /// Records how many bytes `count` whole objects took when encoded.
  mutating func sampleObjectSize(bytes: Int, count: Int) {
    sampledObjectBytes += bytes
    sampledObjectCount += count
  }
}

extension LiveGraph: SnapshotStorage {
  /// Whether the object `id` is live, without making its snapshot.
  func contains(_ id: ObjectID) -> Bool { indexed[id] != nil }

  /// The entity and value count of the live object `id`, without making its snapshot.
  func shape(of id: ObjectID) -> (entity: Int, valueCount: Int)? {
    indexed[id].map { (Int(objects.entities[$0]), objects.valueRange($0).count) }
  }

  /// A value of the live object `id`, without making its snapshot.
  func value(of id: ObjectID, property: Int) -> PersistentValue {
    value(of: id, property)!
  }

  /// Sets a value of the live object `id` in place.
  mutating func setValue(_ value: PersistentValue, of id: ObjectID, property: Int) {
    let slot = objects.valueRange(indexed[id]!).lowerBound + property
    if !listsKeptApart.isEmpty, case .null = objects.value(at: slot) {
      listsKeptApart.forget(ListsKeptApart.Key(id: id, property: property))
    }
    objects.replaceValue(at: slot, with: value)
  }

  /// The number of objects of list `property` of the live object `id`, without joining a
  /// list kept apart.
  func listCount(of id: ObjectID, property: Int) -> Int? {
    let slot = objects.valueRange(indexed[id]!).lowerBound + property
    return listsKeptApart.listCount(
      ListsKeptApart.Key(id: id, property: property), slot: objects.value(at: slot))
  }

  /// Edits list `property` of the live object `id`: in its chunks once kept apart (a long
  /// list moves apart at its first edit), in place when short.
  ///
  /// - Complexity: as ``ListsKeptApart/edit(_:slot:_:)``.
  mutating func editList(of id: ObjectID, property: Int, _ edits: [ListEdit]) {
    let key = ListsKeptApart.Key(id: id, property: property)
    let slot = objects.valueRange(indexed[id]!).lowerBound + property
    switch listsKeptApart.edit(key, slot: objects.value(at: slot), edits) {
    case .edited:
      break
    case .movedApart:
      objects.replaceValue(at: slot, with: .null)
    case .leftInPlace:
      modifyValue(of: id, property: property) { $0.editList(edits) }
    }
  }

  /// Appends objects none of which is live (``ChangesetApplier`` checked), in their order,
  /// indexing each at its new position.
  ///
  /// - Complexity: O(*n*) in the objects' values, amortized (the buffers grow geometrically).
  mutating func insert(contentsOf inserted: PackedObjects) {
    var position = objects.positionCount
    for (offset, id) in inserted.ids.enumerated() where inserted.isLive(offset) {
      index!.set(position, for: id)
      position += 1
    }
    objects.append(contentsOf: inserted)
  }

  /// The live object with this id (its lists kept apart joined); setting `nil` removes it.
  subscript(id: ObjectID) -> ObjectSnapshot? {
    get {
      guard let position = indexed[id] else { return nil }
      var snapshot = objects.snapshot(at: position)
      listsKeptApart.join(into: &snapshot.values, of: id)
      return snapshot
    }
    set {
      if !listsKeptApart.isEmpty, let position = indexed[id] {
        let objects = objects
        listsKeptApart.forgetLists(
          of: id, in: objects.valueRange(position).lazy.map { objects.value(at: $0) })
      }
      switch (indexed[id], newValue) {
      case (let position?, let snapshot?):
        objects.replaceValues(at: position, with: snapshot.values)
      case (let position?, nil):
        objects.remove(at: position)
        index!.remove(id)
      case (nil, let snapshot?):
        index!.set(objects.positionCount, for: id)
        objects.append(snapshot)
      case (nil, nil):
        break
      }
    }
  }
}
