/// The objects of a store file, in memory, as replaying its records builds them.
///
/// Objects live in one array (handed out by ``contents`` without copying) with an
/// ``ObjectIndex`` from id to position. Changesets are applied by the shared
/// ``ChangesetApplier`` (all or nothing) through the graph's ``SnapshotStorage`` conformance.
/// Used to replay a file (``StoreReplayer``); an open ``BinaryStore`` keeps only
/// ``ObjectShapes``.
struct LiveGraph {
  /// Every live object, in no particular order.
  private(set) var objects: [ObjectSnapshot] = []
  /// The position of each live object in ``objects``.
  private var index = ObjectIndex()
  /// The largest next object number recorded.
  private(set) var nextObjectNumber: UInt64 = 1
  /// Encoded bytes of the whole objects seen (inserted or in snapshots), to estimate the
  /// size of a compacted file.
  private(set) var sampledObjectBytes = 0
  /// The number of whole objects behind ``sampledObjectBytes``.
  private(set) var sampledObjectCount = 0

  /// Whether the graph holds no object.
  var isEmpty: Bool { objects.isEmpty }

  /// Every object and the next object number, as ``PersistentStore/load()`` returns them.
  ///
  /// - Complexity: O(1): the object array is shared, not copied.
  var contents: StoreContents {
    StoreContents(objects: objects, nextObjectNumber: nextObjectNumber)
  }

  /// Every object, sorted by id (the order compaction writes them in).
  ///
  /// - Complexity: O(*n* log *n*) in the number of objects.
  var sortedObjects: [ObjectSnapshot] {
    objects.sorted { $0.id < $1.id }
  }

  /// Applies a changeset, all or nothing.
  ///
  /// - Throws: The applier's ``ObjectGraphError`` when the changeset does not fit; the graph
  ///   is then unchanged.
  /// - Complexity: O(*k*) in the size of the changeset.
  mutating func apply(_ changeset: Changeset, with applier: ChangesetApplier) throws {
    objects.reserveCapacity(objects.count + changeset.inserted.count)
    try applier.apply(changeset, to: &self)
    nextObjectNumber = max(nextObjectNumber, changeset.nextObjectNumber)
  }

  /// Replaces everything with a snapshot's objects (which ``RecordReader`` checked against
  /// the schema).
  ///
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` when an id appears twice.
  /// - Complexity: O(*n*) in the number of objects.
  mutating func replace(with snapshot: [ObjectSnapshot], nextObjectNumber: UInt64) throws {
    var index = ObjectIndex(capacity: snapshot.count)
    for (position, object) in snapshot.enumerated() {
      guard index[object.id] == nil else {
        throw ObjectGraphError(
          .corruptStore, "object \(object.id) appears twice in a snapshot", objectID: object.id)
      }
      index.set(position, for: object.id)
    }
    self.objects = snapshot
    self.index = index
    self.nextObjectNumber = nextObjectNumber
  }

  /// Records how many bytes `count` whole objects took when encoded.
  mutating func sampleObjectSize(bytes: Int, count: Int) {
    sampledObjectBytes += bytes
    sampledObjectCount += count
  }

  /// Stores `snapshot` as the object `id` (removing it when `nil`); returns what was there.
  @discardableResult
  private mutating func put(_ snapshot: ObjectSnapshot?, for id: ObjectID) -> ObjectSnapshot? {
    guard let position = index[id] else {
      if let snapshot {
        index.set(objects.count, for: id)
        objects.append(snapshot)
      }
      return nil
    }
    let previous = objects[position]
    if let snapshot {
      objects[position] = snapshot
    } else {
      // Move the last object into the hole.
      let last = objects.removeLast()
      index.remove(id)
      if position < objects.count {
        objects[position] = last
        index.set(position, for: last.id)
      }
    }
    return previous
  }
}

extension LiveGraph: SnapshotStorage {
  /// The live object with this id; setting `nil` removes it.
  subscript(id: ObjectID) -> ObjectSnapshot? {
    get { index[id].map { objects[$0] } }
    set { put(newValue, for: id) }
  }
}
