import Foundation
import Synchronization

/// The durable store: one file in ObjectGraph's own versioned binary format.
///
/// The file starts with a header recording the ``Schema``; each ``save(_:)`` appends one
/// checksummed record holding just the ``Changeset`` and makes it durable (`fdatasync`)
/// before returning, so a save costs what changed, not the size of the store. When the file
/// grows past twice its live data (and past 1 MiB) it is compacted: the live graph is
/// written to a new file that atomically replaces the old one.
///
/// A crash at any byte of a save leaves the store at its last complete save: on open, a
/// record cut short at the end of the file is removed. Any other damage, a foreign or
/// newer-format file, or another schema is reported with an ``ObjectGraphError`` naming the
/// file and the byte offset, and the file is left untouched. While open, the store holds an
/// exclusive lock on the file: a second opener, in this process or another, gets
/// ``ObjectGraphError/Code/storeInUse``.
///
/// ```swift
/// let store = BinaryStore(url: URL(fileURLWithPath: "Boxes.store"))
/// let container = try ObjectContainer(for: Box.self, store: store)
/// ```
///
/// The format is described byte by byte in the project's design notes.
public final class BinaryStore: MigratableStore {
  private enum Phase {
    case unopened
    case open(OpenState)
    case closed
  }

  private struct OpenState {
    var file: StoreFile
    /// The schema, with the numbers the file's header gives its entities and properties.
    var schema: Schema
    var header: BinaryStoreHeader
    /// How the file's records name the schema's entities and properties.
    let numbering: FileNumbering
    /// Which objects exist and what their relationships refer to: enough to check a changeset.
    /// Opening a file builds them on another core while its objects are loaded
    /// (``ObjectShapes/build(schema:gathered:sampledObjectBytes:sampledObjectCount:)``);
    /// the first use takes them over or waits for them.
    var shapes: ObjectShapes {
      get { builtShapes ?? shapesBuild!.value }
      _modify {
        if builtShapes == nil {
          builtShapes = shapesBuild!.value
          shapesBuild = nil
        }
        yield &builtShapes!
      }
    }
    private var builtShapes: ObjectShapes?
    private var shapesBuild: BackgroundBuild<ObjectShapes>?
    /// The objects replayed when the file was opened, kept only until the first ``load()``
    /// (the container's); later loads and compactions replay the file again.
    var openedContents: StoreContents?
    var recordsSinceCompaction: Int
    /// Whether the next save must sync the file's directory first: the first save after
    /// opening does, so that a rename an earlier process could not sync is durable before
    /// anything is saved on top of it.
    var directoryNeedsSync: Bool
    /// Why saves are refused until the store is opened again (a directory sync failed, so
    /// the file's name may not survive a crash), if they are.
    var refusal: String?
    /// Why saves and compactions are refused until the store is opened again: ``refusal``,
    /// or a failed save that could not be undone, so that the file may hold it or not.
    var needsReopen: String? { refusal ?? file.unknownOutcome }
    /// What opening repaired, if anything.
    var recovery: String?

    /// The shapes of an opened file: built already, or being built.
    enum InitialShapes {
      case built(ObjectShapes)
      case building(BackgroundBuild<ObjectShapes>)
    }

    init(
      file: StoreFile, schema: Schema, numbering: FileNumbering, header: BinaryStoreHeader,
      shapes: InitialShapes, openedContents: StoreContents?, recordsSinceCompaction: Int,
      directoryNeedsSync: Bool, recovery: String?
    ) {
      self.file = file
      self.schema = schema
      self.numbering = numbering
      self.header = header
      switch shapes {
      case .built(let shapes): builtShapes = shapes
      case .building(let build): shapesBuild = build
      }
      self.openedContents = openedContents
      self.recordsSinceCompaction = recordsSinceCompaction
      self.directoryNeedsSync = directoryNeedsSync
      self.recovery = recovery
    }
  }

  /// The store file.
  public let url: URL
  private let options: BinaryStoreOptions
  private let probe: StoreIOProbe?
  // A pthread lock (`LockedBox`), not a `Mutex`: ThreadSanitizer does not see a contended
  // `Mutex` hand over, and saves from several threads contend for it.
  private let phase = LockedBox(Phase.unopened)

  /// Creates a store kept in the file at `url`; the file is created by the first
  /// ``open(schema:)`` if missing.
  public convenience init(url: URL) {
    self.init(url: url, options: .standard, probe: nil)
  }

  /// Creates a store with test options and an I/O probe.
  init(url: URL, options: BinaryStoreOptions, probe: StoreIOProbe?) {
    self.url = url
    self.options = options
    self.probe = probe
  }

  private var compactor: Compactor { Compactor(url: url, probe: probe) }

  /// Opens the file (creating it with `schema` if missing), locks it and reads it.
  ///
  /// A record cut short at the end of the file (a crash during a save) is removed; nothing
  /// else is ever changed by opening.
  ///
  /// - Throws: ``ObjectGraphError`` naming the file: ``ObjectGraphError/Code/schemaMismatch``
  ///   with what differs, ``ObjectGraphError/Code/storeInUse`` when it is open elsewhere (or
  ///   this store is open already),
  ///   ``ObjectGraphError/Code/corruptStore`` with the byte offset of damage,
  ///   ``ObjectGraphError/Code/unsupportedFormat`` for a newer format version,
  ///   ``ObjectGraphError/Code/io`` when the file cannot be read or created,
  ///   ``ObjectGraphError/Code/storeClosed`` after ``close()``.
  /// - Complexity: O(*n*) in the size of the file.
  public func open(schema: Schema) throws {
    try phase.withLock { phase in
      switch phase {
      case .closed:
        throw closedError()
      case .open:
        throw ObjectGraphError(
          .storeInUse, "\(url.path): store is in use: this store object is open already",
          file: url)
      case .unopened:
        do {
          phase = .open(try openFile(schema: schema))
        } catch {
          throw attributed(error)
        }
      }
    }
  }

  /// Every stored object and the next object number.
  ///
  /// - Throws: ``ObjectGraphError/Code/storeClosed`` when the store is not open.
  /// - Complexity: O(*n*) in the number of objects.
  public func load() throws -> StoreContents {
    try withOpenState { state in
      if let contents = state.openedContents {
        state.openedContents = nil
        return contents
      }
      return try replayFile(state).graph.contents
    }
  }

  /// Appends the changeset as one record and makes it durable before returning.
  ///
  /// - Throws: ``ObjectGraphError`` naming the file: ``ObjectGraphError/Code/corruptStore``
  ///   when the changeset does not fit the stored objects (an unknown object, a value of
  ///   another type than its property's, a reference to an object not stored or deleted by
  ///   the same changeset), ``ObjectGraphError/Code/io`` when writing or syncing fails (the
  ///   file is then cut back to where it was, and that is synced),
  ///   ``ObjectGraphError/Code/storeNeedsReopen`` after an earlier save's outcome became
  ///   unknown or a directory sync failed, ``ObjectGraphError/Code/storeClosed`` when not
  ///   open: then nothing changed. ``ObjectGraphError/Code/saveOutcomeUnknown`` when a write
  ///   or sync failed and cutting the file back failed too: a reopen may or may not show
  ///   this save, and the store refuses every later save until it is opened again.
  /// - Complexity: O(*k*) in the size of the changeset, plus one `fdatasync`; sometimes
  ///   followed by a compaction, O(*n*) in the live data.
  public func save(_ changeset: Changeset) throws {
    try withOpenState { state in
      if changeset.isEmpty && changeset.nextObjectNumber <= state.shapes.nextObjectNumber {
        return
      }
      // Before the changeset is checked: after an unknown outcome the shapes are those
      // before that save, which the file may not hold, so no check against them means much.
      try refuseIfNeedsReopen(state)
      if state.directoryNeedsSync {
        do {
          try StoreFile.synchronizeDirectory(of: url, probe: probe)
        } catch let error as ObjectGraphError {
          // Not retried: after a failed sync a retry's success says nothing.
          state.refusal = "syncing the store's directory failed: \(error.message)"
          throw ObjectGraphError(
            .io, "refused, nothing written: \(error.message)", file: url, underlying: error)
        }
        state.directoryNeedsSync = false
      }
      // Into an empty store, a save of inserts is the whole graph: it is written as a
      // snapshot, which opens faster than replayed inserts.
      let isWholeGraph =
        state.shapes.isEmpty && changeset.updated.isEmpty && changeset.deleted.isEmpty
      let inserted = changeset.insertedPacked
      let undo: ObjectShapes.Undo
      do {
        undo = try state.shapes.apply(changeset, inserted: inserted)
      } catch var error as ObjectGraphError {
        error.message = "save refused, nothing written: \(error.message)"
        throw error
      }
      do {
        let record =
          isWholeGraph
          ? try RecordWriter.encodeSnapshot(
            inserted, nextObjectNumber: state.shapes.nextObjectNumber,
            numbering: state.numbering, inParts: state.header.formatVersion >= 2)
          : try RecordWriter.encode(changeset, inserted: inserted, numbering: state.numbering)
        try record.withBytes {
          try state.file.append(
            $0, synchronize: options.synchronizesSaves, reservingRoom: options.reservedRoom)
        }
        state.shapes.sampleObjectSize(bytes: record.objectBytes, count: record.objectCount)
      } catch {
        state.shapes.revert(undo)
        throw error
      }
      state.openedContents = nil  // a later load replays the file, this save included
      state.recordsSinceCompaction += 1
      if needsCompaction(state) {
        // The save is durable already; a failed compaction only leaves the file larger.
        try? compact(&state)
      }
    }
  }

  /// Closes the file and releases its lock. Idempotent.
  public func close() {
    phase.withLock { phase in
      if case .open(let state) = phase { state.file.close() }
      phase = .closed
    }
  }

  /// Rewrites the file with only the live objects, now.
  ///
  /// - Throws: ``ObjectGraphError`` naming the file (``ObjectGraphError/Code/io``,
  ///   ``ObjectGraphError/Code/storeClosed``, or ``ObjectGraphError/Code/storeNeedsReopen``
  ///   when saves are refused); the old file is then untouched.
  /// - Complexity: O(*n* log *n*) in the number of live objects.
  public func compact() throws {
    try withOpenState { try compact(&$0) }
  }

  /// Replaces the file with one holding no objects (the header and an empty snapshot that
  /// records the next object number: the stored one or `reserved`, whichever is larger, so
  /// no number handed out before is handed out again), written and installed as a compaction is: beside the
  /// store as `<name>.partial`, synced, renamed over the store, the directory synced. The
  /// store stays open and locked throughout, so no other opener sees the old file or no
  /// file; the old file's bytes go with its last name, and the `.partial` is the new file.
  ///
  /// - Throws: ``ObjectGraphError`` naming the file: ``ObjectGraphError/Code/io`` when a
  ///   step before the rename fails (the old file is then untouched),
  ///   ``ObjectGraphError/Code/storeNeedsReopen`` when saves are refused,
  ///   ``ObjectGraphError/Code/storeClosed`` when not open, and
  ///   ``ObjectGraphError/Code/saveOutcomeUnknown`` when the directory sync after the rename
  ///   fails: the store is empty now, but a crash could bring the old file back, so it
  ///   refuses saves until it is opened again.
  /// - Complexity: O(1), plus two syncs.
  func removeAllObjects(nextObjectNumber reserved: UInt64) throws {
    try withOpenState { state in
      try refuseIfNeedsReopen(state)
      let nextObjectNumber = max(state.shapes.nextObjectNumber, reserved)
      let header = try BinaryStoreHeader.encode(schema: state.schema)
      let record = try RecordWriter.encodeSnapshot(
        [ObjectSnapshot](), nextObjectNumber: nextObjectNumber, numbering: state.numbering)
      let installed = try compactor.installCompactedFile(header: header, snapshot: record)
      state.file.close()
      state.file = installed.file
      state.header.byteCount = header.count
      state.header.formatVersion = Int(BinaryFormat.version(for: state.schema))
      state.shapes = ObjectShapes(
        schema: state.schema,
        contents: StoreContents(objects: [], nextObjectNumber: nextObjectNumber))
      state.openedContents = nil
      state.recordsSinceCompaction = 1
      state.recovery = nil
      if !installed.directorySynced {
        state.refusal = "syncing the store's directory after emptying it failed"
        throw ObjectGraphError(
          .saveOutcomeUnknown,
          "emptied the store, but syncing its directory failed: a crash may bring its "
            + "objects back; open the store again", file: url)
      }
    }
  }

  // MARK: - Migration

  /// The schema in the file's header, or nil when there is no file.
  ///
  /// - Throws: As ``BinaryStoreHeader/read(from:)``.
  public func storedSchema() throws -> Schema? {
    guard FileManager.default.fileExists(atPath: url.path) else { return nil }
    return try BinaryStoreHeader.read(from: url).schema
  }

  /// Opens the file with its schema, `stored`, has `migrate` make the new contents, and
  /// replaces the file with them, written with `schema`: a new file beside the store
  /// (`<name>.partial`), synced; the old file linked as `<name>.pre-migration`, the
  /// directory synced; the new file renamed over the store, the directory synced. The store
  /// is then open with the new file, its contents the migrated ones (``load()`` returns them
  /// without reading the file).
  ///
  /// The old file stays as `<name>.pre-migration` until the store is next opened (the
  /// migrated file then opened whole); a crash or failure at any step before the rename
  /// leaves the store as it was, and one after it the migrated store and that copy.
  ///
  /// - Throws: What `migrate` throws, or ``ObjectGraphError`` naming the file: as
  ///   ``open(schema:)`` when the file cannot be read with `stored`, and
  ///   ``ObjectGraphError/Code/io`` when a step before the rename fails. The store is then
  ///   unchanged and not open.
  /// - Complexity: O(*n*) in the size of the file, plus three syncs.
  public func migrate(
    from stored: Schema, to schema: Schema,
    _ migrate: (consuming StoreContents) throws -> StoreContents
  ) throws {
    try self.migrate(from: stored, to: schema, keepingRecords: false, readingAs: nil) {
      contents, _ in try migrate(contents)
    }
  }

  /// Migrates as ``migrate(from:to:_:)`` does; with `keepingRecords`, the new file holds the
  /// old file's records as they are after the new header, which `schema`'s numbers read as
  /// the migrated contents (a lightweight migration that changes no stored value: see
  /// ``StoreMigration``), instead of a snapshot of the migrated contents.
  ///
  /// With `readingAs` (a schema numbered after `stored`, with the value each property it
  /// adds starts with), the old file's records are read with its numbers, and so come out
  /// migrated by the inferred migration that keeps every stored value
  /// (``StoreMigration/readsStoredRecordsMigrated``): `migrate` is handed those contents,
  /// and a function that reads the file again as stored (for a custom stage that asks for
  /// the old objects).
  func migrate(
    from stored: Schema, to schema: Schema, keepingRecords: Bool, readingAs: Schema?,
    _ migrate:
      (consuming StoreContents, _ readStored: @escaping () throws -> StoreContents) throws
      -> StoreContents
  ) throws {
    try phase.withLock { phase in
      guard case .unopened = phase else {
        if case .closed = phase { throw closedError() }
        throw ObjectGraphError(
          .storeInUse, "\(url.path): store is in use: migrate it before opening it", file: url)
      }
      do {
        // Read only for its objects: the old file's shapes are never used.
        var old = try openFile(schema: stored, buildsShapes: false, replayingAs: readingAs)
        defer { old.file.close() }
        let (file, start, storedSchema) = (old.file, old.header.byteCount, old.schema)
        let readStored = { [self] () throws -> StoreContents in
          let bytes = try file.readAll()
          return try bytes.withUnsafeBytes {
            try replay($0, from: start, schema: storedSchema).graph.contents
          }
        }
        // Taken out, so the migration holds the only reference to the values and moves them.
        let migrated = try migrate(old.openedContents.take()!, readStored)
        let header = try BinaryStoreHeader.encode(schema: schema)
        let numbering = try checked { () throws(FormatError) in try FileNumbering(schema) }
        let installed: Compactor.Installed
        let sample: (bytes: Int, count: Int)
        var records = 1
        if keepingRecords {
          // The records stay as they are: no snapshot to encode (a third of a lightweight
          // migration's own time).
          let bytes = try old.file.readAll()
          installed = try bytes.withUnsafeBytes {
            try compactor.installMigratedFile(
              header: header,
              records: UnsafeRawBufferPointer(rebasing: $0[old.header.byteCount..<old.file.end]))
          }
          sample = (old.file.end - old.header.byteCount, migrated.packed.liveCount)
          records = old.recordsSinceCompaction
        } else {
          let record = try RecordWriter.encodeSnapshot(
            migrated.packed, nextObjectNumber: migrated.nextObjectNumber, numbering: numbering)
          installed = try record.withBytes {
            try compactor.installMigratedFile(header: header, records: $0)
          }
          sample = (record.objectBytes, record.objectCount)
        }
        let shapes = ObjectShapes.build(
          schema: schema, gathered: ObjectShapes.Gathered(schema: schema, contents: migrated),
          sampledObjectBytes: sample.bytes, sampledObjectCount: sample.count)
        var state = OpenState(
          file: installed.file, schema: schema, numbering: numbering,
          header: BinaryStoreHeader(
            formatVersion: Int(BinaryFormat.version(for: schema)), schema: schema,
            byteCount: header.count),
          shapes: .building(shapes), openedContents: migrated,
          recordsSinceCompaction: records, directoryNeedsSync: false, recovery: old.recovery)
        if !installed.directorySynced {
          // As after a compaction: the new name may not survive a crash, and a retried sync
          // that succeeds says nothing, so no save is acknowledged until a reopen.
          state.refusal = "syncing the store's directory after migrating it failed"
        }
        phase = .open(state)
      } catch {
        throw attributed(error)
      }
    }
  }

  /// Figures about the file; all zero when the store is not open.
  public var statistics: BinaryStoreStatistics {
    phase.withLock { phase in
      guard case .open(let state) = phase else {
        return BinaryStoreStatistics(
          fileBytes: 0, liveBytes: 0, objectCount: 0, recordsSinceCompaction: 0,
          formatVersion: Int(BinaryFormat.currentVersion), recovery: nil)
      }
      return BinaryStoreStatistics(
        fileBytes: state.file.size, liveBytes: liveBytes(state),
        objectCount: state.shapes.count,
        recordsSinceCompaction: state.recordsSinceCompaction,
        formatVersion: state.header.formatVersion, recovery: state.recovery,
        reservedBytes: state.file.size - state.file.end)
    }
  }

  // MARK: - Opening

  /// Opens the store's file with `schema` (creating it when there is none), its records
  /// replayed with `replayingAs`'s numbers when given (see
  /// ``migrate(from:to:keepingRecords:readingAs:_:)``).
  private func openFile(schema: Schema, buildsShapes: Bool = true, replayingAs: Schema? = nil)
    throws -> OpenState
  {
    for _ in 0..<3 {
      if let file = try StoreFile.openIfPresent(url, mode: .readWrite, probe: probe) {
        do {
          try file.lock()
          // A compaction may have renamed a new file over the one we opened.
          guard file.isLinked(at: url) else {
            file.close()
            continue
          }
          let state = try read(
            file, schema: schema, buildsShapes: buildsShapes, replayingAs: replayingAs)
          compactor.removeStaleTemporaryFile()
          compactor.removeMigrationBackup()
          return state
        } catch {
          file.close()
          throw error
        }
      }
      // A new file numbers entities and properties by position.
      var schema = schema
      schema.removeNumbers()
      let header = try BinaryStoreHeader.encode(schema: schema)
      if let installed = try compactor.createStore(header: header) {
        return OpenState(
          file: installed.file, schema: schema, numbering: try FileNumbering(schema),
          header: BinaryStoreHeader(
            formatVersion: Int(BinaryFormat.version(for: schema)), schema: schema,
            byteCount: header.count),
          shapes: .built(ObjectShapes(schema: schema)), openedContents: nil,
          recordsSinceCompaction: 0, directoryNeedsSync: !installed.directorySynced,
          recovery: nil)
      }
    }
    throw ObjectGraphError(
      .storeInUse, "\(url.path): store is in use: it keeps being replaced while opening",
      file: url)
  }

  /// Reads and checks the header, replays every record (with `replayingAs`'s numbers when
  /// given), and cuts off a torn tail.
  private func read(
    _ file: StoreFile, schema requested: Schema, buildsShapes: Bool, replayingAs: Schema? = nil
  ) throws -> OpenState {
    // The store's schema is the requested one with the file's migration history (and its
    // version, when the request has none), which the headers of files written later
    // (compactions) keep.
    var schema = requested
    let bytes = try file.readAll()
    let expected = (schema: schema, bytes: try BinaryStoreHeader.encodedSchema(schema))
    let (header, replay) = try bytes.withUnsafeBytes { buffer in
      let header = try checked { () throws(FormatError) in
        try BinaryStoreHeader.decode(buffer, expecting: expected)
      }
      guard schema.matches(stored: header.schema) else {
        throw mismatchError(stored: header.schema, schema)
      }
      schema.history = header.schema.history
      if schema.version == nil { schema.version = header.schema.version }
      schema.adoptNumbers(of: header.schema)
      return (
        header, try self.replay(buffer, from: header.byteCount, schema: replayingAs ?? schema)
      )
    }
    let numbering = try checked { () throws(FormatError) in try FileNumbering(schema) }
    var recovery: String?
    if let tornTail = replay.tornTail {
      recovery =
        "cut off a torn tail of \(bytes.count - tornTail.offset) bytes at byte offset "
        + "\(tornTail.offset): \(tornTail.reason)"
      try file.truncate(to: tornTail.offset)
      try file.synchronizeData()
    } else {
      file.adoptRoom(after: replay.recordsEnd)
    }
    let contents = replay.graph.contents
    guard buildsShapes else {
      return OpenState(
        file: file, schema: schema, numbering: numbering, header: header,
        shapes: .built(ObjectShapes(schema: schema)),
        openedContents: contents, recordsSinceCompaction: replay.records,
        directoryNeedsSync: true, recovery: recovery)
    }
    // What the shapes need is read now (noted by the decoder, with the objects changed
    // after the snapshot read again); they are built on another core while the caller
    // loads the contents (which takes their values), and the first save waits for them.
    let gathered =
      replay.snapshotRelations.map {
        ObjectShapes.Gathered(
          schema: schema, graph: replay.graph, snapshotRelations: $0,
          changed: replay.changedSinceSnapshot)
      } ?? ObjectShapes.Gathered(schema: schema, contents: contents)
    let shapes = ObjectShapes.build(
      schema: schema, gathered: gathered,
      sampledObjectBytes: replay.graph.sampledObjectBytes,
      sampledObjectCount: replay.graph.sampledObjectCount)
    return OpenState(
      file: file, schema: schema, numbering: numbering, header: header,
      shapes: .building(shapes),
      openedContents: contents, recordsSinceCompaction: replay.records,
      directoryNeedsSync: true, recovery: recovery)
  }

  /// Reads the open file again and replays it: the live objects as saved.
  private func replayFile(_ state: OpenState) throws -> StoreReplayer.Outcome {
    let bytes = try state.file.readAll()
    return try bytes.withUnsafeBytes { buffer in
      try replay(buffer, from: state.header.byteCount, schema: state.schema)
    }
  }

  /// Applies every record after the header, stopping at the end or at a torn tail.
  /// Replays a whole file's records (the walk tools use too: ``StoreReplayer``).
  /// Snapshots' strings stay bytes until read (see ``StoredStrings``): the objects go to a
  /// context, or are read as snapshots, which decode them.
  private func replay(_ buffer: UnsafeRawBufferPointer, from start: Int, schema: Schema) throws
    -> StoreReplayer.Outcome
  {
    try checked { () throws(FormatError) in
      try StoreReplayer(
        file: buffer, start: start, schema: schema, defersStrings: true, indexesGraph: false
      ).replay()
    }
  }

  // MARK: - Compaction

  private func liveBytes(_ state: OpenState) -> Int {
    state.header.byteCount + BinaryFormat.frameOverhead + 12 + state.shapes.estimatedObjectBytes
  }

  private func needsCompaction(_ state: OpenState) -> Bool {
    state.file.end > options.compactionMinimumBytes
      && Double(state.file.end) > options.compactionGrowthFactor * Double(liveBytes(state))
  }

  private func compact(_ state: inout OpenState) throws {
    // A file whose last save's outcome is unknown may hold that save or not, while the shapes
    // do not: a compaction would make whatever it holds durable on a new file that accepts
    // saves again, checked against shapes that may not match it.
    try refuseIfNeedsReopen(state)
    let header = try BinaryStoreHeader.encode(schema: state.schema)
    let graph = try replayFile(state).graph
    let record = try RecordWriter.encodeSnapshot(
      graph.sortedObjects, nextObjectNumber: state.shapes.nextObjectNumber,
      numbering: state.numbering)
    let installed = try compactor.installCompactedFile(header: header, snapshot: record)
    state.file.close()
    state.file = installed.file
    if !installed.directorySynced {
      // The new file's name may not survive a crash, which would bring the old file back
      // (holding every save so far): a later save must not be acknowledged on the new one.
      state.refusal = "syncing the store's directory after compacting it failed"
    }
    state.header.byteCount = header.count
    state.header.formatVersion = Int(BinaryFormat.version(for: state.schema))
    state.recordsSinceCompaction = 1
    state.shapes.resetObjectSizeSample(bytes: record.objectBytes, count: record.objectCount)
  }

  // MARK: - Support

  /// Throws ``ObjectGraphError/Code/storeNeedsReopen`` if the store refuses to write.
  private func refuseIfNeedsReopen(_ state: OpenState) throws {
    if let reason = state.needsReopen {
      throw ObjectGraphError(
        .storeNeedsReopen, "refused, nothing written: \(reason); open the store again")
    }
  }

  private func withOpenState<Result>(_ body: (inout OpenState) throws -> Result) throws -> Result {
    try phase.withLock { phase in
      guard case .open(var state) = phase else { throw closedError() }
      phase = .unopened  // hand the state over without copying it
      defer { phase = .open(state) }
      do {
        return try body(&state)
      } catch {
        throw attributed(error)
      }
    }
  }

  /// The error, naming the file if it does not yet.
  private func attributed(_ error: any Error) -> any Error {
    guard var error = error as? ObjectGraphError, error.file == nil else { return error }
    error.message = "\(url.path): \(error.message)"
    error.file = url
    return error
  }

  /// Runs `body`, reporting a format problem as an error naming the file.
  private func checked<Result>(_ body: () throws(FormatError) -> Result) throws -> Result {
    do {
      return try body()
    } catch {
      throw error.error(file: url)
    }
  }

  private func closedError() -> ObjectGraphError {
    ObjectGraphError(.storeClosed, "\(url.path): the store is closed or not open", file: url)
  }

  private func mismatchError(stored: Schema, _ requested: Schema) -> ObjectGraphError {
    ObjectGraphError(
      .schemaMismatch,
      "\(url.path): the store was written with another schema: "
        + SchemaDifference(stored: stored, requested: requested).summary, file: url)
  }
}
