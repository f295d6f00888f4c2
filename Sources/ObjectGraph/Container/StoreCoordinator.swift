import Synchronization

/// What every context of one container shares: the store, the schema, the model classes and
/// the object-number allocator. Contexts hold it strongly; the container only owns it, so no
/// context keeps its container alive.
///
/// Saves, loads for a new context and ``removeAllObjects()`` are serialized by one lock,
/// which also guards the store's generation: the number of times ``removeAllObjects()``
/// emptied the store. A context remembers the generation its objects came from; a save from
/// an earlier generation is refused, since the objects it changes are gone.
final class StoreCoordinator: Sendable {
  let store: any PersistentStore
  let schema: Schema
  let models: [EntityModel]
  /// The configurations the container was made with (or that describe its store).
  let configurations: Set<ModelConfiguration>
  private let nextObjectNumber: Mutex<UInt64>
  /// The store's generation; held while a save, a load or an erasure runs, so each store
  /// sees one of them at a time.
  private let generationLock = Mutex<UInt64>(0)

  init(
    store: any PersistentStore, schema: Schema, models: [EntityModel], nextObjectNumber: UInt64,
    configurations: Set<ModelConfiguration>
  ) {
    self.store = store
    self.schema = schema
    self.models = models
    self.configurations = configurations
    self.nextObjectNumber = Mutex(max(nextObjectNumber, 1))
  }

  /// Reserves `count` consecutive object numbers.
  func reserveObjectNumbers(_ count: UInt64) -> Range<UInt64> {
    nextObjectNumber.withLock { next in
      let start = next
      next += count
      return start..<next
    }
  }

  /// The next unreserved number, recorded by the store with each save.
  var reservedUpTo: UInt64 { nextObjectNumber.withLock { $0 } }

  /// The number of times ``removeAllObjects()`` emptied the store.
  var generation: UInt64 { generationLock.withLock { $0 } }

  private let isClosed = Mutex(false)

  deinit {
    close()
  }

  /// Closes the store, once: a store reopened by a later container stays open.
  func close() {
    let wasClosed = isClosed.withLock { closed in
      defer { closed = true }
      return closed
    }
    if !wasClosed { store.close() }
  }

  /// Everything the store holds, with the generation it belongs to.
  func load() throws -> (contents: StoreContents, generation: UInt64) {
    try generationLock.withLock { generation in (try store.load(), generation) }
  }

  /// Saves a changeset made by a context whose objects come from `generation`.
  ///
  /// - Throws: ``ObjectGraphError/Code/storeClosed`` when the store was emptied since that
  ///   generation (nothing is written), or the store's error.
  func save(_ changeset: Changeset, generation: UInt64) throws {
    try generationLock.withLock { current in
      guard generation == current else {
        throw ObjectGraphError(
          .storeClosed,
          "cannot save to \(MisuseMessage.name(of: store)): the container's data was "
            + "deleted (deleteAllData()) after this context loaded it, so the objects it "
            + "changes are gone; make a new context")
      }
      try store.save(changeset)
    }
  }

  /// Empties the store and starts its next generation.
  ///
  /// The built-in stores are emptied in place: a ``BinaryStore`` replaces its file with an
  /// empty one (as a compaction does: the store stays open and locked throughout), an
  /// ``InMemoryStore`` drops its objects. Any other store is saved a changeset deleting
  /// every object it holds. The next object number recorded is the one this coordinator
  /// reserved up to, so no number a context handed out is handed out again.
  ///
  /// - Throws: The store's error; the generation is unchanged then, unless the store
  ///   throws ``ObjectGraphError/Code/saveOutcomeUnknown`` (it is empty now, but a crash may
  ///   bring its data back).
  /// - Complexity: O(1) for the built-in stores, plus a file sync; a load and a save of
  ///   every object for another store.
  func removeAllObjects() throws {
    try generationLock.withLock { generation in
      do {
        switch store {
        case let binary as BinaryStore:
          try binary.removeAllObjects(nextObjectNumber: reservedUpTo)
        case let memory as InMemoryStore:
          try memory.removeAllObjects(nextObjectNumber: reservedUpTo)
        default:
          var changeset = Changeset(nextObjectNumber: reservedUpTo)
          changeset.deleted = try store.load().objects.map(\.id).sorted()
          try store.save(changeset)
        }
      } catch let error as ObjectGraphError where error.code == .saveOutcomeUnknown {
        generation += 1
        throw error
      }
      generation += 1
    }
  }
}
