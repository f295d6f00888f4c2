import Foundation

extension BinaryStoreReader {
  /// Checks every byte of the store file at `url` and the invariants of the graph it holds,
  /// without changing the file, and reports what it checked and the first problem.
  ///
  /// ```swift
  /// let report = try BinaryStoreReader.verify(fileAt: url)
  /// if let problem = report.problem {
  ///   print("byte \(problem.offset): \(problem.message)")
  /// }
  /// ```
  ///
  /// Problems of the file (damage, a torn tail, a newer format) are reported in the result,
  /// not thrown; see ``BinaryStoreVerification`` for the checks and their order. A torn tail
  /// is reported only when the graph before it passes every check.
  ///
  /// - Parameter url: The store file, opened read-only with a shared lock, as by
  ///   ``init(url:)``.
  /// - Returns: What was checked, and the first problem, if any, with its byte offset.
  /// - Throws: ``ObjectGraphError`` when the file cannot be checked at all:
  ///   ``ObjectGraphError/Code/io`` when it cannot be read (with an underlying
  ///   `POSIXError(.ENOENT)` when it does not exist), ``ObjectGraphError/Code/storeInUse``
  ///   when a ``BinaryStore`` has it open.
  /// - Complexity: O(*n*) in the size of the file and the number of values; a broken
  ///   invariant costs one more pass over the records, to find the one that wrote it.
  public static func verify(fileAt url: URL) throws -> BinaryStoreVerification {
    let (file, bytes) = try openShared(url)
    defer { file.close() }
    var report = BinaryStoreVerification(fileBytes: bytes.count)
    bytes.withUnsafeBytes { verify($0, into: &report) }
    return report
  }

  private static func verify(
    _ buffer: UnsafeRawBufferPointer, into report: inout BinaryStoreVerification
  ) {
    typealias Problem = BinaryStoreVerification.Problem
    let header: BinaryStoreHeader
    do {
      header = try BinaryStoreHeader.decode(buffer)
    } catch {
      report.problem = Problem(
        kind: error.kind == .unsupportedVersion ? .unsupportedFormat : .damagedHeader,
        offset: error.offset, message: error.message)
      return
    }
    report.formatVersion = header.formatVersion
    report.schema = header.schema
    report.headerBytes = header.byteCount
    report.checksumCount = 1

    let replayer = StoreReplayer(file: buffer, start: header.byteCount, schema: header.schema)
    var outcome = StoreReplayer.Outcome()
    defer {
      report.recordCount = outcome.records
      report.snapshotRecordCount = outcome.snapshotRecords
      report.checksumCount = 1 + 2 * outcome.records
    }
    do {
      try replayer.replay(into: &outcome)
    } catch {
      report.problem = Problem(kind: .damagedRecord, offset: error.offset, message: error.message)
      return
    }

    var checker = GraphInvariantChecker(
      schema: header.schema, objects: outcome.graph.sortedObjects, graph: outcome.graph,
      nextObjectNumber: outcome.graph.nextObjectNumber)
    do {
      try checker.check(counting: &report)
    } catch {
      let offset =
        error.offset ?? lastRecordOffset(touching: Set(error.objects), replayer)
        ?? header.byteCount
      report.problem = Problem(kind: .brokenInvariant, offset: offset, message: error.message)
      return
    }
    if let tail = outcome.tornTail {
      report.problem = Problem(
        kind: .tornTail, offset: tail.offset,
        message: "the file ends in a torn save of \(buffer.count - tail.offset) bytes "
          + "(\(tail.reason)); the store opens at the save before it and cuts it off")
    }
  }

  /// The offset of the last record that inserts, updates or deletes one of `ids` (or holds
  /// one in a snapshot).
  private static func lastRecordOffset(touching ids: Set<ObjectID>, _ replayer: StoreReplayer)
    -> Int?
  {
    var found: Int?
    _ = try? replayer.forEachRecord { frame, decoded in
      let touches: Bool
      switch decoded.record {
      case .changeset(let changeset):
        touches =
          changeset.inserted.contains { ids.contains($0.id) }
          || changeset.updated.contains { ids.contains($0.id) }
          || changeset.deleted.contains { ids.contains($0) }
      case .snapshot(let objects, _):
        touches = objects.ids.contains { ids.contains($0) }
      }
      if touches { found = frame.offset }
    }
    return found
  }
}
