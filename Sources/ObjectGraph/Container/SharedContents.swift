/// The stored objects as a container's contexts load them, kept in memory once contexts
/// keep being made, so that later ones load from memory instead of asking the store to read
/// everything again.
///
/// A container's main context takes what the store opened; each other context
/// (``ObjectContainer/newContext()``) asks the store for every object, which for a
/// ``BinaryStore`` means reading and decoding its whole file again. An app with one
/// background context does that once, and keeps nothing more. From the second context made
/// after the main one on (a model actor made per job, say), the load is kept here, with
/// the version it is at; each save after it is noted (not applied: an app that saves a lot
/// and makes no more contexts pays nothing for it), and the next context's load applies the
/// saves noted since, with the same ``ChangesetApplier`` a store's replay uses, then hands
/// out the objects without copying them (the context copies the values it keeps; stored
/// strings left as bytes stay shared). The contents cost about what the values of the
/// objects do (about 165 bytes a box of the seedbench store).
///
/// The contents are dropped, and the next context asks the store again, when the saves
/// noted outgrow them (more changes than half the objects, and at least 1,024), when one
/// does not apply, and when ``StoreCoordinator/removeAllObjects()`` empties the store.
///
/// Kept by ``SaveHistory``, under the coordinator's lock, which serializes saves and loads.
struct SharedContents {
  /// The loads of other contexts from the store after which the contents are kept.
  static let storeLoadsBeforeSharing = 2

  /// The objects as of the last load.
  private var graph: LiveGraph
  /// The saves made since, in order, not yet applied.
  private var noted: [Changeset] = []
  /// The objects and values the noted saves insert, change or delete.
  private var notedChanges = 0
  private let applier: ChangesetApplier

  /// Contents as `contents` holds them (a store's load, which it shares, not copies).
  ///
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` when an id appears twice.
  init(_ contents: StoreContents, schema: Schema) throws {
    graph = try LiveGraph(contents)
    applier = ChangesetApplier(schema: schema)
  }

  /// Notes a save, to apply at the next load; returns false when the saves noted have
  /// outgrown the contents (which should then be dropped).
  ///
  /// - Complexity: O(1).
  mutating func note(_ changeset: Changeset) -> Bool {
    noted.append(changeset)
    notedChanges +=
      changeset.insertedObjects.count + changeset.deleted.count
      + changeset.updated.reduce(0) { $0 + $1.changes.count }
    return notedChanges <= max(1_024, graph.objects.liveCount / 2)
  }

  /// The objects now: the saves noted so far applied.
  ///
  /// - Throws: The applier's ``ObjectGraphError`` when a noted save does not apply (the
  ///   contents should then be dropped).
  /// - Complexity: O(*k*) in the changes noted, plus O(*n*) to index the objects the first
  ///   time a save is applied; the objects are shared, not copied.
  mutating func load() throws -> StoreContents {
    for changeset in noted { try graph.apply(changeset, with: applier) }
    noted = []
    notedChanges = 0
    graph.joinListsKeptApart()  // after a throw, the coordinator drops the contents
    return graph.contents
  }
}
