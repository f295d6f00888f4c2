import Synchronization

/// What every context of one container shares: the store, the schema, the model classes and
/// the object-number allocator. Contexts hold it strongly; the container only owns it, so no
/// context keeps its container alive.
final class StoreCoordinator: Sendable {
  let store: any PersistentStore
  let schema: Schema
  let models: [EntityModel]
  private let nextObjectNumber: Mutex<UInt64>
  /// Serializes saves so each store sees one changeset at a time.
  private let saveLock = Mutex(())

  init(store: any PersistentStore, schema: Schema, models: [EntityModel], nextObjectNumber: UInt64)
  {
    self.store = store
    self.schema = schema
    self.models = models
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

  func save(_ changeset: Changeset) throws {
    try saveLock.withLock { _ in try store.save(changeset) }
  }
}
