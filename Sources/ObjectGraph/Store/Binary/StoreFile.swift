import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An open store file: its descriptor, its lock, and durable appends.
///
/// An append may reserve room: zero bytes after the records, which later appends overwrite.
/// `fdatasync` after writing inside the file's size syncs the data alone, while an append
/// that grows the file must also commit its new size to the file system's journal (about a
/// quarter of a small save's time on ext4). The room is cut off when the file is closed.
///
/// Every failure throws an ``ObjectGraphError`` with code ``ObjectGraphError/Code/io`` (or
/// ``ObjectGraphError/Code/storeInUse`` for a held lock) that names the file and the system
/// error, except an append whose outcome is unknown
/// (``ObjectGraphError/Code/saveOutcomeUnknown``, see
/// ``append(_:synchronize:reservingRoom:)-([UInt8],_,_)``). Not thread-safe: it is
/// `Sendable` only so that ``BinaryStore`` can keep it in its mutex, which serializes all use.
final class StoreFile: @unchecked Sendable {
  /// How to open a file.
  enum Mode {
    /// Read only; fails when the file does not exist.
    case readOnly
    /// Read and write; fails when the file does not exist.
    case readWrite
    /// Read and write, creating the file when missing (never truncating it).
    case readWriteCreate
  }

  /// The file's path.
  private(set) var url: URL
  /// The open file descriptor, or -1 once closed.
  private(set) var descriptor: Int32
  /// The end of the records: where the next append goes.
  private(set) var end: Int
  /// The file's size: ``end`` and the zero bytes reserved after it for later appends.
  private(set) var size: Int
  /// Whether the file was opened for writing (only then is reserved room cut off at close).
  private let isWritable: Bool
  /// The test hook that counts operations and injects failures, if any.
  private let probe: StoreIOProbe?
  /// Why the file's contents are unknown, once a failed append could not be undone: every
  /// further append is then refused until the store is opened again.
  private(set) var unknownOutcome: String?

  private init(url: URL, descriptor: Int32, size: Int, isWritable: Bool, probe: StoreIOProbe?) {
    self.url = url
    self.descriptor = descriptor
    self.end = size
    self.size = size
    self.isWritable = isWritable
    self.probe = probe
  }

  deinit { close() }

  /// Opens the file at `url`.
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming the file.
  static func open(_ url: URL, mode: Mode, probe: StoreIOProbe? = nil) throws -> StoreFile {
    guard let file = try openIfPresent(url, mode: mode, probe: probe) else {
      throw ioError(url, "cannot open", code: ENOENT)
    }
    return file
  }

  /// Opens the file at `url`, or returns `nil` when it does not exist.
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming the file.
  static func openIfPresent(_ url: URL, mode: Mode, probe: StoreIOProbe? = nil) throws
    -> StoreFile?
  {
    let flags: Int32
    switch mode {
    case .readOnly: flags = O_RDONLY
    case .readWrite: flags = O_RDWR
    case .readWriteCreate: flags = O_RDWR | O_CREAT
    }
    let descriptor = url.withUnsafeFileSystemRepresentation { path -> Int32 in
      guard let path else { return -1 }
      return systemOpen(path, flags | O_CLOEXEC, 0o644)
    }
    guard descriptor >= 0 else {
      if errno == ENOENT { return nil }
      throw ioError(url, "cannot open")
    }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else {
      let error = ioError(url, "cannot read the size of")
      _ = systemClose(descriptor)
      throw error
    }
    guard status.st_mode & S_IFMT == S_IFREG else {
      _ = systemClose(descriptor)
      throw ObjectGraphError(
        .io, "\(url.path): not a regular file (\(fileKind(status.st_mode)))", file: url)
    }
    if mode == .readWriteCreate && status.st_size == 0 { probe?.record(.create(path: url.path)) }
    return StoreFile(
      url: url, descriptor: descriptor, size: Int(status.st_size), isWritable: mode != .readOnly,
      probe: probe)
  }

  /// Takes the exclusive lock on the file (or, with `exclusive` false, a shared one that
  /// only conflicts with an exclusive lock), waiting at most a moment.
  ///
  /// The lock belongs to this open file, so a second open of the same file conflicts even in
  /// the same process; it is released by ``close()`` or when the process ends. A lock found
  /// held is tried again for up to 50 ms, because a process being spawned holds copies of
  /// its parent's descriptors (and so its locks) between `fork` and `exec`.
  ///
  /// - Throws: ``ObjectGraphError/Code/storeInUse`` when another open file holds it.
  func lock(exclusive: Bool = true) throws {
    let deadline = ContinuousClock.now + .milliseconds(50)
    while flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 {
      if errno == EINTR { continue }
      if errno == EWOULDBLOCK {
        if ContinuousClock.now < deadline {
          usleep(2_000)
          continue
        }
        throw ObjectGraphError(
          .storeInUse,
          "\(url.path): store is in use: another store object, in this process "
            + "or another, has it open", file: url)
      }
      throw Self.ioError(url, "cannot lock")
    }
  }

  /// Whether `url` still names this open file (it was not replaced or removed meanwhile).
  func isLinked(at url: URL) -> Bool {
    var own = stat()
    var named = stat()
    guard fstat(descriptor, &own) == 0 else { return false }
    let result = url.withUnsafeFileSystemRepresentation { path in
      path.map { stat($0, &named) } ?? -1
    }
    return result == 0 && own.st_dev == named.st_dev && own.st_ino == named.st_ino
      && own.st_nlink > 0
  }

  /// The whole file.
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming the file.
  /// - Complexity: O(*n*) in the file's size.
  func readAll() throws -> [UInt8] {
    try readPrefix(size)
  }

  /// The first `maximum` bytes of the file, or all of it if it is shorter.
  ///
  /// Megabytes are read in pieces on as many threads as there are cores: a fresh buffer's
  /// pages are faulted in and the kernel's copy made on each at once (3.6 MB into fresh
  /// memory: 2.3 to 3.3 ms on one thread, 0.4 to 2.3 on two).
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming the file.
  /// - Complexity: O(*m*) in the bytes read.
  func readPrefix(_ maximum: Int) throws -> [UInt8] {
    let count = min(size, maximum)
    let pieceCount = Parallel.pieceCount(for: count, minimumPerPiece: 1 << 20)
    let bounds = (0...pieceCount).map { count * $0 / pieceCount }
    // Per piece: the bytes read (fewer than asked when the file shrank), or an errno.
    var outcomes = [(read: Int, error: Int32?)](repeating: (0, nil), count: pieceCount)
    let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
      outcomes.withUnsafeMutableBufferPointer { outcomes in
        Parallel.forEach(pieceCount) { piece in
          outcomes[piece] = readPiece(
            into: buffer.baseAddress, from: bounds[piece], to: bounds[piece + 1])
        }
      }
      // The bytes up to the first piece the file ended in: those are all there is.
      initialized = 0
      for (piece, outcome) in outcomes.enumerated() where outcome.error == nil {
        initialized = bounds[piece] + outcome.read
        if initialized < bounds[piece + 1] { break }
      }
    }
    if let code = outcomes.lazy.compactMap(\.error).first {
      throw Self.ioError(url, "cannot read", code: code)
    }
    return bytes
  }

  /// Reads bytes `start ..< end` of the file to the same offsets of `base`; returns how
  /// many it read (fewer when the file ends first) or the error.
  private func readPiece(into base: UnsafeMutablePointer<UInt8>?, from start: Int, to end: Int)
    -> (read: Int, error: Int32?)
  {
    guard let base else { return (0, nil) }
    var offset = start
    while offset < end {
      let read = pread(descriptor, base + offset, end - offset, off_t(offset))
      if read < 0 {
        if errno == EINTR { continue }
        return (offset - start, errno)
      }
      if read == 0 { break }  // the file shrank: scan what there is
      offset += read
    }
    return (offset - start, nil)
  }

  /// Appends `bytes` at the end of the records and, when `synchronize` is set, makes them
  /// durable with `fdatasync` before returning.
  ///
  /// The bytes overwrite reserved room when it holds them. Otherwise the file grows, and with
  /// `room` above zero it grows by zero bytes too, to the next multiple of `room` at least
  /// `room / 4` past the new end, so the appends that follow overwrite instead of growing.
  ///
  /// On failure of a write or of the sync the file is put back as it was, byte for byte: cut
  /// back to the old end, then grown again to its old size (zero bytes, which is what the
  /// room held), and that is synced. Once that sync returns, no reopen can see the bytes
  /// (the cut is new metadata that the file system has committed; the failed sync is not
  /// retried, since after a failed `fsync` a retry's success says nothing about the data).
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming the file and the system error when
  ///   nothing was appended; ``ObjectGraphError/Code/saveOutcomeUnknown`` when the append
  ///   failed and could not be undone, so a reopen may or may not show it: every later
  ///   append then throws ``ObjectGraphError/Code/storeNeedsReopen`` without writing.
  /// - Complexity: O(*n*) in the number of bytes, plus one `fdatasync`.
  func append(_ bytes: [UInt8], synchronize: Bool, reservingRoom room: Int = 0) throws {
    try bytes.withUnsafeBytes { try append($0, synchronize: synchronize, reservingRoom: room) }
  }

  /// Appends `bytes` at the end of the records, as
  /// ``append(_:synchronize:reservingRoom:)-([UInt8],_,_)``.
  func append(_ bytes: UnsafeRawBufferPointer, synchronize: Bool, reservingRoom room: Int = 0)
    throws
  {
    if let unknownOutcome {
      throw ObjectGraphError(
        .storeNeedsReopen,
        "\(url.path): refused, nothing written: \(unknownOutcome); open the store again",
        file: url)
    }
    let previousEnd = end
    let previousSize = size
    let newEnd = previousEnd + bytes.count
    var newSize = max(previousSize, newEnd)
    if newEnd > previousSize && room > 0 {
      newSize = (newEnd + room / 4 + room - 1) / room * room
    }
    do {
      try write(bytes, at: previousEnd)
      if newSize > max(previousSize, newEnd) {
        try writeZeros(count: newSize - newEnd, at: newEnd)
      }
      if synchronize { try synchronizeData() }
    } catch let failure as ObjectGraphError {
      try undoAppend(end: previousEnd, size: previousSize, after: failure)
    }
    end = newEnd
    size = newSize
  }

  /// Puts the file back to `end` records and `size` bytes after a failed append and syncs
  /// that, then throws `failure` (nothing appended); if that fails too, the outcome is
  /// unknown and the file refuses further appends.
  private func undoAppend(end: Int, size: Int, after failure: ObjectGraphError) throws -> Never {
    do {
      try resize(to: end)
      if size > end { try resize(to: size) }
      try synchronizeData()
    } catch {
      let reason = "a failed save could not be undone (\(failure.message); then \(error))"
      unknownOutcome = reason
      throw ObjectGraphError(
        .saveOutcomeUnknown,
        "\(url.path): the save's outcome is unknown: \(reason); a reopen may or may not show "
          + "it, and the store refuses further saves until it is opened again", file: url,
        underlying: failure)
    }
    var failure = failure
    failure.message += "; nothing was saved"
    throw failure
  }

  /// Records that the records end at `offset` and the zero bytes after it, up to ``size``,
  /// are room reserved by an earlier append.
  func adoptRoom(after offset: Int) {
    precondition(offset <= size, "the records cannot end past the end of the file")
    end = offset
  }

  /// Cuts the file to `length` bytes (not durable until synchronized).
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming the file.
  func truncate(to length: Int) throws {
    try resize(to: length)
    end = length
    size = length
  }

  /// `ftruncate`, through the probe.
  private func resize(to length: Int) throws {
    if case .error(let code)? = probe?.attempt(.truncate) {
      throw Self.ioError(url, "cannot truncate", code: code)
    }
    guard ftruncate(descriptor, off_t(length)) == 0 else {
      throw Self.ioError(url, "cannot truncate")
    }
    probe?.record(.truncate(path: url.path, size: length))
  }

  /// Renames the file to `destination`, replacing what is there; the file stays open and
  /// locked.
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming both paths.
  func move(to destination: URL) throws {
    if case .error(let code)? = probe?.attempt(.rename) {
      throw Self.ioError(url, "cannot rename to \(destination.path)", code: code)
    }
    let result = url.withUnsafeFileSystemRepresentation { from in
      destination.withUnsafeFileSystemRepresentation { to in
        guard let from, let to else { return Int32(-1) }
        return systemRename(from, to)
      }
    }
    guard result == 0 else { throw Self.ioError(url, "cannot rename to \(destination.path)") }
    probe?.record(.rename(from: url.path, to: destination.path))
    url = destination
  }

  /// Makes the file's data (and its size) durable: `fdatasync`.
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming the file.
  func synchronizeData() throws {
    if case .error(let code)? = probe?.attempt(.dataSync) {
      throw Self.ioError(url, "cannot synchronize", code: code)
    }
    while fdatasync(descriptor) != 0 {
      if errno == EINTR { continue }
      throw Self.ioError(url, "cannot synchronize")
    }
    probe?.record(.sync(path: url.path))
  }

  /// Makes the file's data and metadata durable: `fsync`.
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming the file.
  func synchronize() throws {
    if case .error(let code)? = probe?.attempt(.fullSync) {
      throw Self.ioError(url, "cannot synchronize", code: code)
    }
    while fsync(descriptor) != 0 {
      if errno == EINTR { continue }
      throw Self.ioError(url, "cannot synchronize")
    }
    probe?.record(.sync(path: url.path))
  }

  /// Cuts off reserved room, then releases the lock and the descriptor. Idempotent.
  ///
  /// The cut is not synced: room that outlives a crash is zero bytes, which the next open
  /// takes as room again.
  func close() {
    guard descriptor >= 0 else { return }
    if isWritable && size > end && ftruncate(descriptor, off_t(end)) == 0 {
      probe?.record(.truncate(path: url.path, size: end))
    }
    _ = systemClose(descriptor)
    descriptor = -1
  }

  /// Writes all of `buffer` at `offset` (one attempt of `operation` for the probe).
  private func write(
    _ buffer: UnsafeRawBufferPointer, at offset: Int,
    as operation: StoreIOProbe.Operation = .write
  ) throws {
    switch probe?.attempt(operation) {
    case nil:
      try writeFully(buffer, at: offset)
    case .error(let code):
      throw Self.ioError(url, "cannot write to", code: code)
    case .partialWrite(let code):
      try writeFully(UnsafeRawBufferPointer(rebasing: buffer[..<(buffer.count / 2)]), at: offset)
      throw Self.ioError(url, "cannot write to", code: code)
    case .shortWrites:
      try writeFully(buffer, at: offset, inShortSteps: true)
    }
  }

  /// Writes `count` zero bytes at `offset` (reserved room).
  private func writeZeros(count: Int, at offset: Int) throws {
    let zeros = [UInt8](repeating: 0, count: count)
    try zeros.withUnsafeBytes { try write($0, at: offset, as: .roomWrite) }
  }

  /// Writes all of `buffer` at `offset`, retrying interrupted and short writes; with
  /// `inShortSteps` (a probe's fault) each `pwrite` is asked for at most half of what is left,
  /// so it returns a short count as a full disk or a signal can make it.
  private func writeFully(
    _ buffer: UnsafeRawBufferPointer, at offset: Int, inShortSteps: Bool = false
  ) throws {
    var written = 0
    while written < buffer.count {
      let left = buffer.count - written
      let result = pwrite(
        descriptor, buffer.baseAddress! + written, inShortSteps ? max(1, left / 2) : left,
        off_t(offset + written))
      if result < 0 {
        if errno == EINTR { continue }
        throw Self.ioError(url, "cannot write to")
      }
      written += result
    }
    probe?.record(
      .write(path: url.path, offset: offset, bytes: [UInt8](buffer)))
  }

  /// Gives the file at `existing` a second name, `newName` (a hard link: no byte is copied,
  /// and the file stays whole under `newName` when `existing` is renamed over).
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming both paths (`EEXIST` when `newName` is
  ///   taken).
  static func link(_ existing: URL, as newName: URL, probe: StoreIOProbe? = nil) throws {
    if case .error(let code)? = probe?.attempt(.link) {
      throw ioError(existing, "cannot link as \(newName.path)", code: code)
    }
    let result = existing.withUnsafeFileSystemRepresentation { from in
      newName.withUnsafeFileSystemRepresentation { to in
        guard let from, let to else { return Int32(-1) }
        return systemLink(from, to)
      }
    }
    guard result == 0 else { throw ioError(existing, "cannot link as \(newName.path)") }
    probe?.record(.link(from: existing.path, to: newName.path))
  }

  /// Removes the file at `url`, if there is one.
  static func remove(_ url: URL, probe: StoreIOProbe? = nil) {
    let result = url.withUnsafeFileSystemRepresentation { path in path.map { unlink($0) } }
    if result == 0 { probe?.record(.remove(path: url.path)) }
  }

  /// Makes the directory holding `url` durable, so a rename or creation in it survives a
  /// crash.
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming the directory.
  static func synchronizeDirectory(of url: URL, probe: StoreIOProbe?) throws {
    let directory = url.deletingLastPathComponent()
    if case .error(let code)? = probe?.attempt(.directorySync) {
      throw ioError(directory, "cannot synchronize", code: code)
    }
    let descriptor = directory.withUnsafeFileSystemRepresentation { path -> Int32 in
      guard let path else { return -1 }
      return systemOpen(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
    }
    guard descriptor >= 0 else { throw ioError(directory, "cannot open") }
    defer { _ = systemClose(descriptor) }
    while fsync(descriptor) != 0 {
      if errno == EINTR { continue }
      throw ioError(directory, "cannot synchronize")
    }
    probe?.record(.directorySync(path: directory.path))
  }

  /// What kind of file a `stat` mode describes, for errors.
  private static func fileKind(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFDIR: return "a directory"
    case S_IFIFO: return "a FIFO"
    case S_IFSOCK: return "a socket"
    case S_IFCHR: return "a character device"
    case S_IFBLK: return "a block device"
    case S_IFLNK: return "a symbolic link"
    default: return "mode \(String(mode, radix: 8))"
    }
  }

  /// An I/O error naming the file and the system error (`errno` unless `code` is given).
  static func ioError(_ url: URL, _ action: String, code: Int32 = errno) -> ObjectGraphError {
    let reason = String(cString: strerror(code))
    return ObjectGraphError(
      .io, "\(action) \(url.path): \(reason) (errno \(code))", file: url,
      underlying: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
  }
}

// The C functions under names that the methods of `StoreFile` do not shadow.
#if canImport(Glibc)
  private func systemOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
    Glibc.open(path, flags, mode)
  }
  private func systemClose(_ descriptor: Int32) -> Int32 { Glibc.close(descriptor) }
  private func systemRename(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 {
    Glibc.rename(from, to)
  }
  private func systemLink(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 {
    Glibc.link(from, to)
  }
#elseif canImport(Darwin)
  private func systemOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
    Darwin.open(path, flags, mode)
  }
  private func systemClose(_ descriptor: Int32) -> Int32 { Darwin.close(descriptor) }
  private func systemRename(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 {
    Darwin.rename(from, to)
  }
  private func systemLink(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 {
    Darwin.link(from, to)
  }
#endif
