/// Walks the records of a whole store file after its header, and replays them into a
/// ``LiveGraph``, without changing the file.
///
/// The walk is the one recovery defines (see ``RecordScanner``): it stops at the end of the
/// file or at a torn tail, which it reports instead of cutting off, and throws a
/// ``FormatError`` at the first damaged record or at a record that does not fit the objects
/// before it. ``BinaryStoreReader`` uses it for tools; ``BinaryStore`` walks the same
/// scanner, reader and graph when it opens a file.
struct StoreReplayer {
  /// A torn tail: where it starts and why it is one.
  struct TornTail {
    /// The file offset of the first byte of the tail.
    var offset: Int
    /// Why the rest of the file is a torn tail.
    var reason: String
  }

  /// Where a walk of the records stopped.
  struct Ending {
    /// The file offset just past the last complete record: where the next save goes.
    var recordsEnd: Int
    /// The torn tail from ``recordsEnd`` on, if the walk stopped at one.
    var tornTail: TornTail?
  }

  /// What replaying a file found.
  struct Outcome {
    /// The live objects after the last complete record.
    var graph = LiveGraph()
    /// The number of complete records.
    var records = 0
    /// How many of them were snapshot records.
    var snapshotRecords = 0
    /// The file offset just past the last complete record.
    var recordsEnd = 0
    /// The torn tail the walk stopped at, if any.
    var tornTail: TornTail?
    /// The relationship values of the last snapshot's objects (non-empty lists and to-one
    /// references), as decoded; `nil` before any snapshot.
    var snapshotRelations: [ObjectShapes.Gathered.Relations]?
    /// The objects that changes replayed after the last snapshot inserted, updated or
    /// deleted (whose relationships may differ from the snapshot's now).
    var changedSinceSnapshot: [ObjectID] = []
  }

  /// The whole file.
  let file: UnsafeRawBufferPointer
  /// The file offset of the first record (the header's size).
  let start: Int
  /// The schema from the file's header.
  let schema: Schema
  /// Whether snapshots' strings are left as bytes (see ``StoredStrings``): for the objects
  /// a store hands to the context opening it.
  var defersStrings = false
  /// Whether the replayed graph is indexed by id at the end, for readers that look objects
  /// up (tools); a store opening its file only takes its objects.
  var indexesGraph = true

  /// Calls `body` with each complete record, in file order.
  ///
  /// - Returns: Where the records end, and the torn tail there if the file does not end
  ///   cleanly (with nothing or only zero bytes after the last record).
  /// - Throws: ``FormatError`` at the first damaged record, or what `body` throws.
  /// - Complexity: O(*n*) in the size of the file.
  func forEachRecord(
    _ body: (RecordScanner.Frame, RecordReader.Decoded) throws(FormatError) -> Void
  ) throws(FormatError) -> Ending {
    let scanner = RecordScanner(file: file)
    let numbering = try FileNumbering(schema)
    var offset = start
    while true {
      switch try scanner.step(at: offset) {
      case .end:
        return Ending(recordsEnd: offset)
      case .tornTail(let tornOffset, let reason):
        return Ending(recordsEnd: offset, tornTail: TornTail(offset: tornOffset, reason: reason))
      case .record(let frame):
        let payload = UnsafeRawBufferPointer(rebasing: file[frame.payload])
        try body(
          frame,
          try RecordReader.decode(
            payload, at: frame.payload.lowerBound, numbering: numbering,
            defersStrings: defersStrings))
        offset = frame.end
      }
    }
  }

  /// Replays every complete record.
  ///
  /// - Throws: ``FormatError`` at the first damaged record or at the first record that does
  ///   not fit the objects before it (an update of an unknown object, an edit out of range,
  ///   a duplicate id), with the record's offset.
  /// - Complexity: O(*n*) in the size of the file.
  func replay() throws(FormatError) -> Outcome {
    var outcome = Outcome()
    try replay(into: &outcome)
    return outcome
  }

  /// Replays every complete record into `outcome`, which shows how far the replay got when
  /// it throws.
  ///
  /// - Throws: As ``replay()``.
  func replay(into outcome: inout Outcome) throws(FormatError) {
    // The long lists the saves edit stay apart until the end (see ``LiveGraph``).
    defer { outcome.graph.joinListsKeptApart() }
    let applier = ChangesetApplier(schema: schema)
    let ending = try forEachRecord { frame, decoded throws(FormatError) in
      do {
        switch decoded.record {
        case .changeset(let changeset):
          try outcome.graph.apply(changeset, with: applier)
          if outcome.snapshotRelations != nil {
            changeset.appendChangedIDs(to: &outcome.changedSinceSnapshot)
          }
        case .snapshot(let objects, let next):
          try outcome.graph.replace(with: objects, nextObjectNumber: next)
          outcome.snapshotRecords += 1
          outcome.snapshotRelations = decoded.relations
          outcome.changedSinceSnapshot = []
        }
      } catch {
        let message = (error as? ObjectGraphError)?.message ?? "\(error)"
        throw FormatError(
          offset: frame.offset,
          message: "the record does not fit the objects before it: \(message)")
      }
      outcome.graph.sampleObjectSize(bytes: decoded.objectBytes, count: decoded.objectCount)
      outcome.records += 1
    }
    outcome.recordsEnd = ending.recordsEnd
    outcome.tornTail = ending.tornTail
    if indexesGraph {
      do {
        try outcome.graph.makeIndex()
      } catch {
        // Never: a graph left unindexed has increasing ids, which cannot repeat.
        throw FormatError(offset: start, message: "\(error)")
      }
    }
  }
}
