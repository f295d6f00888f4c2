/// Stored objects in memory, as replaying a store's saves builds them.
///
/// Objects live in ``PackedObjects`` (handed out by ``contents`` without copying) with an
/// ``ObjectIndex`` from id to position; a deleted object leaves a removed position behind,
/// so the order of the file is kept. Changesets are applied by the shared
/// ``ChangesetApplier`` (all or nothing) through the graph's ``SnapshotStorage``
/// conformance. Used to replay a file (``StoreReplayer``; an open ``BinaryStore`` keeps only
/// ``ObjectShapes``) and for the contents a container's contexts share (``SharedContents``).
struct LiveGraph {
  /// Every object, in the order the file gave them, with removed positions.
  private(set) var objects = PackedObjects()
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

  /// Every object and the next object number, as ``PersistentStore/load()`` returns them.
  ///
  /// - Complexity: O(1): the packed objects are shared, not copied.
  var contents: StoreContents {
    StoreContents(packed: objects, nextObjectNumber: nextObjectNumber)
  }

  /// Every object, sorted by id (the order compaction writes them in).
  ///
  /// - Complexity: O(*n* log *n*) in the number of objects.
  var sortedObjects: [ObjectSnapshot] {
    objects.snapshots.sorted { $0.id < $1.id }
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
    return objects.value(at: range.lowerBound + property)
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
    objects.replaceValue(at: objects.valueRange(indexed[id]!).lowerBound + property, with: value)
  }

  /// The live object with this id; setting `nil` removes it.
  subscript(id: ObjectID) -> ObjectSnapshot? {
    get { indexed[id].map { objects.snapshot(at: $0) } }
    set {
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
