import Foundation

/// Writes whole store files (a new store's header, or a compacted graph) beside the store and
/// installs them with an atomic rename.
///
/// Steps: open `<store>.partial` and lock it, write the bytes, `fsync` it, rename it over the
/// store (the new file stays open and locked, so the store never goes unlocked), `fsync` the
/// directory. A crash before the rename leaves the old file whole and a stale `.partial`,
/// which the next open removes; a crash after it leaves the new file whole.
struct Compactor {
  /// The store file.
  let url: URL
  /// The test hook, if any.
  let probe: StoreIOProbe?

  /// The file a new store or compacted graph is written to before the rename.
  var temporaryURL: URL {
    url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + ".partial")
  }

  /// The name the store file keeps while a migration replaces it, until the migrated store
  /// has been opened: `<store>.pre-migration`.
  var backupURL: URL {
    url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + ".pre-migration")
  }

  /// A file installed at ``url``.
  struct Installed {
    /// The new store file, open and locked.
    var file: StoreFile
    /// Whether the directory was synced after the rename; if not, it must be before the next
    /// save reports success.
    var directorySynced: Bool
  }

  /// Creates the store file holding only `header`, unless a file appeared at ``url``
  /// meanwhile (another opener created it), in which case it returns `nil`.
  ///
  /// - Throws: ``ObjectGraphError`` (``ObjectGraphError/Code/io``,
  ///   ``ObjectGraphError/Code/storeInUse``) naming the file; nothing is left at ``url``.
  func createStore(header: [UInt8]) throws -> Installed? {
    let temporary = try openTemporaryFile()
    if FileManager.default.fileExists(atPath: url.path) {
      StoreFile.remove(temporaryURL, probe: probe)
      temporary.close()
      return nil
    }
    return try header.withUnsafeBytes { try install(temporary, contents: [$0]) }
  }

  /// Writes `header` and `snapshot` as a new file and renames it over the store.
  ///
  /// - Throws: ``ObjectGraphError`` naming the file when a step before the rename fails; the
  ///   old file is then untouched and the temporary file removed.
  /// - Complexity: O(*n*) in the size of the new file.
  func installCompactedFile(header: [UInt8], snapshot: borrowing RecordWriter.Record) throws
    -> Installed
  {
    let temporary = try openTemporaryFile()
    return try header.withUnsafeBytes { header in
      try snapshot.withBytes { try install(temporary, contents: [header, $0]) }
    }
  }

  /// Writes `header` and `records` (a snapshot, or the records of the store kept as they
  /// are) as a new file and renames it over the store, as
  /// ``installCompactedFile(header:snapshot:)`` does, keeping the old file under
  /// ``backupURL`` (a hard link made and synced before the rename).
  ///
  /// A backup there already is dropped first: a backup is removed when its store opens
  /// (``removeMigrationBackup()``), and the store being migrated has just opened.
  ///
  /// - Throws: ``ObjectGraphError`` naming the file when a step before the rename fails; the
  ///   old file is then untouched (perhaps also named by the backup) and the temporary file
  ///   removed.
  func installMigratedFile(header: [UInt8], records: UnsafeRawBufferPointer) throws
    -> Installed
  {
    let temporary = try openTemporaryFile()
    return try header.withUnsafeBytes { header in
      try install(temporary, contents: [header, records]) {
        StoreFile.remove(backupURL, probe: probe)
        try StoreFile.link(url, as: backupURL, probe: probe)
        try StoreFile.synchronizeDirectory(of: url, probe: probe)
      }
    }
  }

  /// Removes the file a migration kept (``backupURL``), once the store opened. Call only
  /// while holding the lock on the store file.
  func removeMigrationBackup() {
    guard FileManager.default.fileExists(atPath: backupURL.path) else { return }
    StoreFile.remove(backupURL, probe: probe)
  }

  /// Removes a `.partial` file that a crash left behind, if no one is writing it.
  ///
  /// Call only while holding the lock on the store file.
  func removeStaleTemporaryFile() {
    guard let temporary = try? StoreFile.openIfPresent(temporaryURL, mode: .readOnly) else {
      return
    }
    defer { temporary.close() }
    guard (try? temporary.lock()) != nil, temporary.isLinked(at: temporaryURL) else { return }
    StoreFile.remove(temporaryURL, probe: probe)
  }

  private func openTemporaryFile() throws -> StoreFile {
    let temporary = try namingTheStore {
      try StoreFile.open(temporaryURL, mode: .readWriteCreate, probe: probe)
    }
    do {
      try temporary.lock()
      guard temporary.isLinked(at: temporaryURL) else {
        throw ObjectGraphError(
          .storeInUse, "\(url.path): store is in use: another opener is creating or compacting it",
          file: url)
      }
    } catch {
      temporary.close()
      throw error
    }
    return temporary
  }

  private func install(
    _ temporary: StoreFile, contents: [UnsafeRawBufferPointer],
    beforeRename: () throws -> Void = {}
  ) throws -> Installed {
    do {
      try temporary.truncate(to: 0)
      for part in contents {
        try temporary.append(part, synchronize: false)
      }
      try temporary.synchronize()
      try beforeRename()
      try temporary.move(to: url)
    } catch {
      StoreFile.remove(temporaryURL, probe: probe)
      temporary.close()
      throw namingTheStore(error)
    }
    let synced = (try? StoreFile.synchronizeDirectory(of: url, probe: probe)) != nil
    return Installed(file: temporary, directorySynced: synced)
  }

  /// Runs `body`, reporting a failure on the temporary file as one of the store.
  private func namingTheStore<Result>(_ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch {
      throw namingTheStore(error)
    }
  }

  /// `error`, naming the store file rather than the temporary one, whose path it keeps in
  /// its message.
  private func namingTheStore(_ error: any Error) -> any Error {
    guard var error = error as? ObjectGraphError, error.file != url else { return error }
    error.message =
      "\(url.path): writing the new file \(temporaryURL.lastPathComponent) "
      + "failed: \(error.message)"
    error.file = url
    return error
  }
}
