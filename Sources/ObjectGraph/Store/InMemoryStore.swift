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
public final class InMemoryStore: PersistentStore {
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
      if let existing = state.schema, existing != schema {
        throw ObjectGraphError(
          .schemaMismatch,
          "the in-memory store holds data of another schema: "
            + SchemaDifference(stored: existing, requested: schema).summary)
      }
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
