import Foundation

/// Read-only access to a binary store file, for tools: its header, its records and the
/// objects they hold, without the app's model classes and without ever writing to the file.
///
/// The file records its own ``Schema``, so a reader needs nothing but the path:
///
/// ```swift
/// let reader = try BinaryStoreReader(url: url)
/// defer { reader.close() }
/// print(reader.header.schema.entities.map(\.name))
/// let replay = try reader.replay()
/// print(replay.contents.objects.count, "objects")
/// ```
///
/// Opening takes a *shared* lock on the file, which conflicts only with the exclusive lock a
/// ``BinaryStore`` holds while open: a reader refuses a file that an app has open (it could
/// be appending to it or replacing it by compaction while the reader reads), and an app
/// that tries to open the file while a reader holds it gets
/// ``ObjectGraphError/Code/storeInUse``, as with any second opener. Several readers may read
/// one file at once. Unlike ``BinaryStore/open(schema:)``, a reader never cuts off a torn
/// tail (a save interrupted by a crash): ``replay()`` stops before it and reports it.
///
/// The reader holds the whole file in memory (as ``BinaryStore`` does when it opens one);
/// ``replay()`` adds the live objects as ``ObjectSnapshot``s.
public final class BinaryStoreReader {
  /// The store file.
  public let url: URL
  /// The file's header: format version and schema.
  public let header: BinaryStoreHeader
  private let file: StoreFile
  private let bytes: [UInt8]

  /// Opens the store file at `url` read-only, takes a shared lock on it, reads it and checks
  /// its header.
  ///
  /// - Throws: ``ObjectGraphError`` naming the file: ``ObjectGraphError/Code/io`` when it
  ///   cannot be read (with an underlying `POSIXError(.ENOENT)` when it does not exist),
  ///   ``ObjectGraphError/Code/storeInUse`` when a ``BinaryStore`` has it open,
  ///   ``ObjectGraphError/Code/corruptStore`` when it is not a store file or its header is
  ///   damaged, ``ObjectGraphError/Code/unsupportedFormat`` for a newer format version.
  /// - Complexity: O(*n*) in the size of the file (it is read whole).
  public init(url: URL) throws {
    let (file, bytes) = try Self.openShared(url)
    let decoded = bytes.withUnsafeBytes { buffer in
      Result { () throws(FormatError) in try BinaryStoreHeader.decode(buffer) }
    }
    switch decoded {
    case .success(let header):
      self.header = header
    case .failure(let error):
      file.close()
      throw error.error(file: url)
    }
    self.url = url
    self.file = file
    self.bytes = bytes
  }

  deinit { file.close() }

  /// The size of the file in bytes, when it was opened.
  public var fileBytes: Int { bytes.count }

  /// Replays every complete record into the live objects, as ``BinaryStore`` would load
  /// them, without changing the file.
  ///
  /// - Returns: The live objects sorted by id, the number of records, and the torn tail
  ///   that the replay stopped before, if any.
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` naming the file and the byte offset of
  ///   the first damaged record, or of the first record that does not fit the objects
  ///   before it.
  /// - Complexity: O(*n*) in the size of the file, plus O(*m* log *m*) to sort *m* objects.
  public func replay() throws -> BinaryStoreReplay {
    let outcome = try withReplayer { replayer throws(FormatError) in try replayer.replay() }
    return BinaryStoreReplay(
      contents: StoreContents(
        objects: outcome.graph.sortedObjects, nextObjectNumber: outcome.graph.nextObjectNumber),
      recordCount: outcome.records, snapshotRecordCount: outcome.snapshotRecords,
      tornTail: outcome.tornTail.map {
        BinaryStoreReplay.TornTail(
          offset: $0.offset, byteCount: fileBytes - $0.offset, reason: $0.reason)
      })
  }

  /// The exact size of the file that compacting the replayed objects would write: the
  /// header and one snapshot record.
  ///
  /// - Throws: ``ObjectGraphError/Code/invalidValue`` when the objects exceed the format's
  ///   record size limit.
  /// - Complexity: O(*m*) in the number and size of the objects (they are encoded).
  public func compactedByteCount(of replay: BinaryStoreReplay) throws -> Int {
    let numbering = try withReplayer { (replayer) throws(FormatError) in
      try FileNumbering(replayer.schema)
    }
    let record = try RecordWriter.encodeSnapshot(
      replay.contents.packed, nextObjectNumber: replay.contents.nextObjectNumber,
      numbering: numbering)
    return header.byteCount + record.bytes.count
  }

  /// Releases the file and its lock. Idempotent; the reader may still be inspected, but not
  /// replayed.
  public func close() {
    file.close()
  }

  // MARK: - Support

  /// Runs `body` with a replayer over the file's records, reporting a format problem as an
  /// error naming the file.
  func withReplayer<Result>(
    _ body: (StoreReplayer) throws(FormatError) -> Result
  ) throws -> Result {
    let result = bytes.withUnsafeBytes { buffer in
      Swift.Result { () throws(FormatError) in
        try body(StoreReplayer(file: buffer, start: header.byteCount, schema: header.schema))
      }
    }
    return try result.mapError { $0.error(file: url) }.get()
  }

  /// Opens the file read-only with a shared lock, checks that the path still names it, and
  /// reads it.
  static func openShared(_ url: URL) throws -> (StoreFile, [UInt8]) {
    for _ in 0..<3 {
      guard let file = try StoreFile.openIfPresent(url, mode: .readOnly) else {
        throw StoreFile.ioError(url, "cannot open", code: ENOENT)
      }
      do {
        try file.lock(exclusive: false)
        // A compaction may have renamed a new file over the one we opened.
        guard file.isLinked(at: url) else {
          file.close()
          continue
        }
        return (file, try file.readAll())
      } catch {
        file.close()
        throw error
      }
    }
    throw ObjectGraphError(
      .storeInUse, "\(url.path): store is in use: it keeps being replaced while opening",
      file: url)
  }
}
