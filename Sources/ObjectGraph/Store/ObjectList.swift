/// Objects with all their values, kept either as snapshots or packed: what a changeset
/// inserts and what a store's contents hold.
///
/// The framework makes and reads them packed (``PackedObjects``: one buffer of values, no
/// array per object), which is what saving and loading 100,000 objects can afford; the
/// public API (``Changeset/inserted``, ``StoreContents/objects``) shows snapshots. Reading
/// ``snapshots`` of a packed list makes them each time; changing it turns the list into
/// snapshots once, so building a list object by object stays linear.
struct ObjectList: Sendable {
  enum Storage {
    case snapshots([ObjectSnapshot])
    case packed(PackedObjects)
  }

  private(set) var storage: Storage

  init(_ snapshots: [ObjectSnapshot] = []) {
    storage = .snapshots(snapshots)
  }

  /// An empty list keeps no packed buffers: a changeset that inserts nothing (most saves)
  /// then copies one reference, not a dozen.
  init(packed: PackedObjects) {
    storage = packed.positionCount == 0 ? .snapshots([]) : .packed(packed)
  }

  /// The objects as snapshots, in order.
  ///
  /// - Complexity: O(1) for snapshots; O(*n*) in the number of values for a packed list,
  ///   on every read.
  var snapshots: [ObjectSnapshot] {
    get {
      switch storage {
      case .snapshots(let snapshots): snapshots
      case .packed(let packed): packed.snapshots
      }
    }
    _modify {
      var snapshots = takeSnapshots()
      defer { storage = .snapshots(snapshots) }
      yield &snapshots
    }
    set { storage = .snapshots(newValue) }
  }

  /// The number of objects.
  var count: Int {
    switch storage {
    case .snapshots(let snapshots): snapshots.count
    case .packed(let packed): packed.liveCount
    }
  }

  var isEmpty: Bool { count == 0 }

  /// Whether some string values are left as bytes (``PackedObjects/deferredStrings``).
  var hasDeferredStrings: Bool {
    guard case .packed(let packed) = storage else { return false }
    return !packed.deferredStrings.isEmpty
  }

  /// The number of positions: the objects, and for a packed list the removed ones among
  /// them.
  var positionCount: Int {
    switch storage {
    case .snapshots(let snapshots): snapshots.count
    case .packed(let packed): packed.positionCount
    }
  }

  /// The number of objects at `positions`.
  func count(in positions: Range<Int>) -> Int {
    switch storage {
    case .snapshots: positions.count
    case .packed(let packed): positions.lazy.filter { packed.isLive($0) }.count
    }
  }

  /// Calls `body` with each object's id, entity and values, in order, making no snapshot.
  ///
  /// Deferred strings (``PackedObjects/deferredStrings``) show as `.null`, so only a caller
  /// that reads no string attribute may pass `readsStrings: false`; otherwise the objects
  /// must have none.
  func forEach(
    readsStrings: Bool = true,
    _ body: (ObjectID, Int, UnsafeBufferPointer<PersistentValue>) throws -> Void
  ) rethrows {
    try forEach(in: 0..<positionCount, readsStrings: readsStrings, body)
  }

  /// Calls `body` with the id, entity and values of each object at `positions`, in order
  /// (see ``forEach(readsStrings:_:)``).
  func forEach(
    in positions: Range<Int>, readsStrings: Bool = true,
    _ body: (ObjectID, Int, UnsafeBufferPointer<PersistentValue>) throws -> Void
  ) rethrows {
    switch storage {
    case .snapshots(let snapshots):
      for snapshot in snapshots[positions] {
        try snapshot.values.withUnsafeBufferPointer { try body(snapshot.id, snapshot.entity, $0) }
      }
    case .packed(let packed):
      try packed.forEach(in: positions, readsStrings: readsStrings, body)
    }
  }

  /// The objects, packed: O(1) for a packed list; snapshots are packed on every read.
  var packed: PackedObjects {
    switch storage {
    case .packed(let packed): packed
    case .snapshots(let snapshots): PackedObjects(snapshots)
    }
  }

  /// The objects, packed; taken out of the list, which is left empty.
  mutating func takePacked() -> PackedObjects {
    let storage = self.storage
    self.storage = .snapshots([])
    switch storage {
    case .snapshots(let snapshots): return PackedObjects(snapshots)
    case .packed(let packed): return packed
    }
  }

  /// The objects as snapshots; taken out of the list, which is left empty.
  private mutating func takeSnapshots() -> [ObjectSnapshot] {
    let storage = self.storage
    self.storage = .snapshots([])  // let go, so the snapshots are unique
    switch storage {
    case .snapshots(let snapshots): return snapshots
    case .packed(let packed): return packed.snapshots
    }
  }
}

extension ObjectList: Hashable {
  /// Lists are equal when their snapshots are, however they are kept.
  static func == (lhs: ObjectList, rhs: ObjectList) -> Bool {
    lhs.snapshots == rhs.snapshots
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(snapshots)
  }
}
