import Dispatch
import Synchronization

/// What every context of one container shares: the store, the schema, the model classes and
/// the object-number allocator. Contexts hold it strongly; the container only owns it, so no
/// context keeps its container alive.
///
/// Saves, loads for a new context and ``removeAllObjects()`` are serialized by one lock,
/// which also guards the ``SaveHistory``: the store's generation (the number of times
/// ``removeAllObjects()`` emptied the store), its version (the saves since), and the saves
/// the other live contexts have yet to merge. A context remembers the generation its objects
/// came from; a save from an earlier generation is refused, since the objects it changes are
/// gone. A context that has not merged the latest save merges first (see
/// ``ObjectContext/mergeSavedChanges()``).
final class StoreCoordinator: Sendable {
  let store: any PersistentStore
  let schema: Schema
  let models: [EntityModel]
  /// The configurations the container was made with (or that describe its store).
  let configurations: Set<ModelConfiguration>
  private let nextObjectNumber: LockedBox<UInt64>
  /// The store's generation, version and saves to merge; held while a save, a load or an
  /// erasure runs, so each store sees one of them at a time.
  /// (A pthread lock, not a `Mutex`: dormant contexts are merged under it from several
  /// threads, and ThreadSanitizer sees a contended `Mutex` hand over to no one.)
  private let history = LockedBox(SaveHistory())
  /// The version of the latest save, readable without the lock: a context that has merged
  /// up to it has nothing to merge.
  private let latestVersion = Atomic<UInt64>(0)

  init(
    store: any PersistentStore, schema: Schema, models: [EntityModel], nextObjectNumber: UInt64,
    configurations: Set<ModelConfiguration>
  ) {
    self.store = store
    self.schema = schema
    self.models = models
    self.configurations = configurations
    self.nextObjectNumber = LockedBox(max(nextObjectNumber, 1))
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
  var generation: UInt64 { history.withLock { $0.generation } }

  /// The version of the latest save of any context (changes with every save).
  var version: UInt64 { latestVersion.load(ordering: .acquiring) }

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

  /// Everything the store holds, with the generation it belongs to, for a new context that
  /// joins the history (as `reference`) at the version loaded: from the contents the
  /// contexts share (``SharedContents``) once kept, from the store before.
  ///
  /// - Complexity: O(*k*) in the changes saved since the last load, when the contents are
  ///   shared; the store's load otherwise.
  func load(joiningAs reference: ContextReference) throws -> (
    contents: StoreContents, generation: UInt64, member: Int, version: UInt64
  ) {
    try history.withLock { history in
      let contents = try sharedContents(&history)
      let member = history.join(mergesOnMainQueue: false, reference: reference)
      return (contents, history.generation, member, history.version)
    }
  }

  /// The objects now, from the shared contents, or from the store (then kept to share).
  private func sharedContents(_ history: inout SaveHistory) throws -> StoreContents {
    if history.sharedContents != nil {
      do {
        return try history.sharedContents!.load()
      } catch {
        // A noted save that does not apply (which the store took) leaves the store to say.
        history.sharedContents = nil
      }
    }
    let contents = try store.load()
    history.storeLoads += 1
    if history.storeLoads >= SharedContents.storeLoadsBeforeSharing {
      history.sharedContents = try? SharedContents(contents, schema: schema)
    }
    return contents
  }

  /// Adds a context whose objects are the store's at the current version: returns its key
  /// and that version.
  func join(mergingOnMainQueue: Bool, as reference: ContextReference) -> (
    member: Int, version: UInt64
  ) {
    history.withLock { history in
      (history.join(mergesOnMainQueue: mergingOnMainQueue, reference: reference), history.version)
    }
  }

  /// Removes a context that went away: its unmerged saves need not be kept for it.
  func leave(_ member: Int) {
    history.withLock { $0.leave(member) }
  }

  /// How many saves are kept for contexts that have not merged them.
  var keptSaveCount: Int { history.withLock { $0.entries.count } }

  /// Whether new contexts load from the contents the contexts share (``SharedContents``).
  var hasSharedContents: Bool { history.withLock { $0.sharedContents != nil } }

  /// Wakes a dormant main context: the app asked for it.
  func wake(_ member: Int) {
    history.withLock { $0.wake(member) }
  }

  /// Moves a context emptied by ``removeAllObjects()`` to the new generation; returns the
  /// version it is at.
  func renew(_ member: Int) -> UInt64 {
    history.withLock { history in
      history.renew(member)
      return history.version
    }
  }

  /// The saves of other contexts that `member` has not merged, in order.
  func saves(missedBy member: Int) -> [SaveHistory.Entry] {
    history.withLock { Array($0.saves(missedBy: member)) }
  }

  /// Notes that `member` merged every save up to `version`.
  func noteMerged(_ member: Int, upTo version: UInt64) {
    history.withLock { $0.noteMerged(member, upTo: version) }
  }

  /// What became of a save.
  enum SaveOutcome {
    /// The store took it; it is this version.
    case saved(version: UInt64)
    /// Another context saved since the saving one last merged: nothing was written; it must
    /// merge and make its changeset again.
    case outdated
  }

  /// Saves a changeset made by context `member`, whose objects come from `generation`.
  ///
  /// Other live contexts of the main queue are told on it.
  ///
  /// - Throws: ``ObjectGraphError/Code/storeClosed`` when the store was emptied since that
  ///   generation (nothing is written), or the store's error.
  func save(_ changeset: Changeset, generation: UInt64, by member: Int) throws -> SaveOutcome {
    let (outcome, mainQueueContexts) = try history.withLock {
      history -> (SaveOutcome, [ContextReference]) in
      guard generation == history.generation else {
        throw ObjectGraphError(
          .storeClosed,
          "cannot save to \(MisuseMessage.name(of: store)): the container's data was "
            + "deleted (deleteAllData()) after this context loaded it, so the objects it "
            + "changes are gone; make a new context")
      }
      // A save says the version it is based on: only the latest is taken.
      guard changeset.baseVersion == history.version, history.isCurrent(member) else {
        return (.outdated, [])
      }
      try store.save(changeset)
      let (version, dormant, mainQueue) = history.record(changeset, by: member)
      latestVersion.store(version, ordering: .releasing)
      for reference in dormant { reference.context?.mergeWhileDormant(changeset, version: version) }
      return (.saved(version: version), mainQueue)
    }
    for reference in mainQueueContexts {
      // The main context is used on the main queue only.
      DispatchQueue.main.async { reference.context?.processPendingChanges() }
    }
    return outcome
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
    try history.withLock { history in
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
        history.startGeneration()
        latestVersion.store(0, ordering: .releasing)
        throw error
      }
      history.startGeneration()
      latestVersion.store(0, ordering: .releasing)
    }
  }
}
