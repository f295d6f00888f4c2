/// Walks the framed records of a store file and tells a torn tail from damage.
///
/// A record is `[length][CRC-32C of length][payload][CRC-32C of payload]`. Appends are the
/// only writes to a live file, so a crash can only leave the *end* of the file short or
/// unwritten. The records **end** where only zero bytes follow a record (none, or room a save
/// reserved for the next ones; see ``StoreFile``). The scanner calls the rest of the file from
/// a record's start a **torn tail** (to be cut off) only when:
///
/// 1. fewer than 8 bytes remain (the frame header is incomplete), or
/// 2. the frame header checks out and the record it announces runs past the end of the
///    file, or
/// 3. the record's frame header (or, for a record followed only by zero bytes, its payload)
///    fails its checksum, and the file ends in a run of at least 8 zero bytes that starts
///    inside the part that failed and either covers the whole record or starts at a
///    file-system block boundary: blocks a crash left unwritten after the file grew, or room
///    a crash left half overwritten. (A committed record ends in a checksum, which is almost
///    never zero.)
///
/// Anything else that fails a check (a checksum mismatch in a complete record followed by
/// more data or without an unwritten-block tail, a zero length) is **damage** and throws.
/// A single flipped bit is always damage: the length has its own checksum, so it can never
/// make a complete record look like one that runs past the end.
struct RecordScanner {
  /// One record found in the file.
  struct Frame {
    /// The file offset of the record's first byte (its length).
    var offset: Int
    /// The file offsets of the payload.
    var payload: Range<Int>
    /// The file offset just past the record.
    var end: Int { payload.upperBound + BinaryFormat.frameTrailerSize }
  }

  /// What follows a position in the file.
  enum Step {
    /// A complete, checksummed record.
    case record(Frame)
    /// A torn tail from this offset to the end of the file, and why it is one.
    case tornTail(offset: Int, reason: String)
    /// The end of the records: the file ends here, or only zero bytes follow (room).
    case end
  }

  /// The whole file.
  let file: UnsafeRawBufferPointer

  /// The offset where the file's trailing run of zero bytes starts (the file size if none).
  private let zeroTailStart: Int

  /// Creates a scanner over a whole file.
  init(file: UnsafeRawBufferPointer) {
    self.file = file
    var start = file.count
    while start > 0 && file[start - 1] == 0 { start -= 1 }
    zeroTailStart = start
  }

  /// What starts at `offset`.
  ///
  /// - Throws: ``FormatError`` when the record at `offset` is damaged.
  /// - Complexity: O(*n*) in the record's size (its checksum).
  func step(at offset: Int) throws(FormatError) -> Step {
    let remaining = file.count - offset
    if offset >= zeroTailStart { return .end }
    guard remaining >= BinaryFormat.frameHeaderSize else {
      return .tornTail(
        offset: offset, reason: "record header cut short: \(remaining) of 8 bytes")
    }
    let lengthBytes = UnsafeRawBufferPointer(rebasing: file[offset..<offset + 4])
    let length = Int(UInt32(littleEndian: lengthBytes.loadUnaligned(as: UInt32.self)))
    let lengthChecksum = UInt32(
      littleEndian: file.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
    guard CRC32C.checksum(lengthBytes) == lengthChecksum else {
      if endsInUnwrittenBlocks(from: offset, before: offset + BinaryFormat.frameHeaderSize) {
        return .tornTail(offset: offset, reason: "unwritten zero bytes at the end of the file")
      }
      throw FormatError(offset: offset, message: "record length checksum mismatch")
    }
    guard length > 0 else {
      throw FormatError(offset: offset, message: "record of length 0")
    }
    let payloadStart = offset + BinaryFormat.frameHeaderSize
    let end = payloadStart + length + BinaryFormat.frameTrailerSize
    guard end <= file.count else {
      return .tornTail(
        offset: offset,
        reason: "record of \(length) bytes runs \(end - file.count) bytes past the end of the file")
    }
    let payload = UnsafeRawBufferPointer(rebasing: file[payloadStart..<payloadStart + length])
    let payloadChecksum = UInt32(
      littleEndian: file.loadUnaligned(fromByteOffset: payloadStart + length, as: UInt32.self))
    guard CRC32C.parallelChecksum(payload) == payloadChecksum else {
      if endsInUnwrittenBlocks(from: offset, before: end) {
        return .tornTail(offset: offset, reason: "unwritten zero bytes at the end of the file")
      }
      throw FormatError(offset: offset, message: "record checksum mismatch")
    }
    return .record(Frame(offset: offset, payload: payloadStart..<payloadStart + length))
  }

  /// Rule 3: the file ends in at least 8 zero bytes whose run starts before `limit` (inside
  /// the part of the record that failed its check, so nothing but zero bytes follows the
  /// record) and either covers the whole record from `start` or begins at a file-system
  /// block boundary.
  private func endsInUnwrittenBlocks(from start: Int, before limit: Int) -> Bool {
    guard file.count - zeroTailStart >= BinaryFormat.frameHeaderSize, zeroTailStart < limit
    else { return false }
    return zeroTailStart <= start || zeroTailStart % BinaryFormat.fileSystemBlockSize == 0
  }
}
