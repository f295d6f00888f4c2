import Synchronization

/// A store that keeps its objects in memory, for tests and previews.
///
/// It follows every rule of ``PersistentStore`` except durability: its contents live as long
/// as the store instance. Saves are atomic: a changeset that does not fit what the store
/// holds is refused whole.
///
/// ```swift
/// let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
/// ```
public final class InMemoryStore: MigratableStore {
  private struct State {
    var schema: Schema?
    var objects = InMemoryObjects()
    var nextObjectNumber: UInt64 = 1
    var isOpen = false
  }

  // A pthread lock (`LockedBox`), not a `Mutex`: ThreadSanitizer does not see a contended
  // `Mutex` hand over, and saves from several threads contend for it.
  private let state = LockedBox(State())

  /// Creates an empty in-memory store.
  public init() {}

  public func open(schema: Schema) throws {
    try state.withLock { state in
      guard !state.isOpen else {
        throw ObjectGraphError(
          .storeInUse, "the in-memory store is in use: close its container before opening it again")
      }
      if let existing = state.schema, !schema.matches(stored: existing) {
        throw ObjectGraphError(
          .schemaMismatch,
          "the in-memory store holds data of another schema: "
            + SchemaDifference(stored: existing, requested: schema).summary)
      }
      var recorded = schema
      recorded.history = state.schema?.history
      if recorded.version == nil { recorded.version = state.schema?.version }
      state.schema = recorded
      state.isOpen = true
    }
  }

  /// The schema of the objects, or nil before the store was first opened.
  public func storedSchema() throws -> Schema? {
    state.withLock { $0.schema }
  }

  /// Replaces the objects, of schema `stored`, with what `migrate` makes of them, of
  /// `schema`, checked as a save's inserts are (every reference to an object held), and
  /// opens the store with `schema`.
  ///
  /// - Throws: What `migrate` throws; ``ObjectGraphError/Code/storeInUse`` when the store is
  ///   open, ``ObjectGraphError/Code/schemaMismatch`` when its objects are not of `stored`,
  ///   ``ObjectGraphError/Code/corruptStore`` when the migrated objects do not fit `schema`.
  ///   The store is then unchanged.
  /// - Complexity: O(*n* log *n*) in the number of objects.
  public func migrate(
    from stored: Schema, to schema: Schema,
    _ migrate: (consuming StoreContents) throws -> StoreContents
  ) throws {
    try state.withLock { state in
      guard !state.isOpen else {
        throw ObjectGraphError(
          .storeInUse, "the in-memory store is in use: migrate it before opening it")
      }
      guard let existing = state.schema, stored.matches(stored: existing) else {
        throw ObjectGraphError(
          .schemaMismatch, "the in-memory store holds no data of the schema to migrate from")
      }
      let migrated = try migrate(
        StoreContents(
          objects: state.objects.sortedSnapshots, nextObjectNumber: state.nextObjectNumber))
      var objects = InMemoryObjects()
      var changeset = Changeset(nextObjectNumber: migrated.nextObjectNumber)
      changeset.inserted = migrated.objects  // snapshots: strings left as bytes decoded
      try ChangesetApplier(schema: schema).apply(changeset, to: &objects)
      state.objects = objects
      state.nextObjectNumber = max(state.nextObjectNumber, migrated.nextObjectNumber)
      state.schema = schema
      state.isOpen = true
    }
  }

  public func load() throws -> StoreContents {
    try state.withLock { state in
      guard state.isOpen else { throw Self.closedError() }
      return StoreContents(
        objects: state.objects.sortedSnapshots,
        nextObjectNumber: state.nextObjectNumber)
    }
  }

  /// The stored objects among `ids`, found by id (the others are not read).
  ///
  /// - Complexity: O(*k* log *k*) in the number of ids, plus the values of those stored.
  public func load(ids: Set<ObjectID>) throws -> StoreContents {
    try state.withLock { state in
      guard state.isOpen else { throw Self.closedError() }
      var packed = PackedObjects()
      for id in ids.sorted() {
        if let snapshot = state.objects[id] { packed.append(snapshot) }
      }
      return StoreContents(packed: packed, nextObjectNumber: state.nextObjectNumber)
    }
  }

  public func save(_ changeset: Changeset) throws {
    try state.withLock { state in
      guard state.isOpen, let schema = state.schema else { throw Self.closedError() }
      try ChangesetApplier(schema: schema).apply(changeset, to: &state.objects)
      state.nextObjectNumber = max(state.nextObjectNumber, changeset.nextObjectNumber)
    }
  }

  /// Drops every object, keeping the schema; the next object number becomes the stored one
  /// or `reserved`, whichever is larger.
  ///
  /// - Throws: ``ObjectGraphError/Code/storeClosed`` when the store is not open.
  /// - Complexity: O(*n*) in the number of objects, to free them.
  func removeAllObjects(nextObjectNumber reserved: UInt64) throws {
    try state.withLock { state in
      guard state.isOpen else { throw Self.closedError() }
      state.objects = InMemoryObjects()
      state.nextObjectNumber = max(state.nextObjectNumber, reserved)
    }
  }

  public func close() {
    state.withLock { $0.isOpen = false }
  }

  private static func closedError() -> ObjectGraphError {
    ObjectGraphError(.storeClosed, "the in-memory store is closed")
  }
}
