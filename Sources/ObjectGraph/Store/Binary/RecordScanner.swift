/// Walks the framed records of a store file and tells a torn tail from damage.
///
/// A record is `[length][CRC-32C of length][payload][CRC-32C of payload]`. Appends are the
/// only writes to a live file, and every byte past the last record is zero on disk (room a
/// save reserved and synced, blocks a grown file has not had written, or what a failed save
/// or a repair cut back). So a crash during a save can leave only the record in flight
/// incomplete, and only in the way a disk writes: some of its 512-byte sectors on disk, in
/// any order, the others still zero, or the file's size not yet grown over it. The records
/// **end** where only zero bytes follow a record (none, or room). The scanner calls the rest
/// of the file from a record's start a **torn tail** (to be cut off) only when it is such a
/// record:
///
/// 1. fewer than 8 bytes remain (the frame header is incomplete), or
/// 2. the frame header checks out and the record it announces runs past the end of the
///    file, or
/// 3. the frame header fails its checksum, a sector it lies in holds only zero bytes from
///    the record's start on (that sector never reached the disk), and no complete record
///    starts anywhere after it (the record in flight is the last thing in the file), or
/// 4. the payload fails its checksum, only zero bytes follow the record, and one of the
///    record's sectors past its frame header holds only zero bytes within the record (a
///    sector of the record that never reached the disk; a last sector holding only part of
///    the trailing checksum counts when the part on disk matches the payload's checksum).
///
/// Anything else that fails a check (a checksum mismatch in a complete record followed by
/// more data, or in a record all of whose sectors hold data, a zero length) is **damage**
/// and throws. A single flipped bit in a record is always damage: it makes no sector zero,
/// and the length has its own checksum, so it can never make a complete record look like
/// one that runs past the end. What the rules cannot tell from a tear is damage that zeroes
/// whole sectors of the last record, or a flipped bit in a last record that holds a whole
/// sector of zero bytes of its own (a zero-filled `Data` value): such a record reads as the
/// save in flight.
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
      if headerSectorIsUnwritten(at: offset), !completeRecordFollows(offset) {
        return .tornTail(
          offset: offset, reason: "the sector holding the record's length is unwritten")
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
    let computedChecksum = CRC32C.parallelChecksum(payload)
    guard computedChecksum == payloadChecksum else {
      if zeroTailStart <= end,
        let sector = unwrittenSector(of: offset..<end, payloadChecksum: computedChecksum)
      {
        return .tornTail(
          offset: offset, reason: "the record's sector at byte offset \(sector) is unwritten")
      }
      throw FormatError(offset: offset, message: "record checksum mismatch")
    }
    return .record(Frame(offset: offset, payload: payloadStart..<payloadStart + length))
  }

  /// Rule 3: a sector that the frame header at `offset` lies in holds only zero bytes from
  /// `offset` to the end of the file.
  private func headerSectorIsUnwritten(at offset: Int) -> Bool {
    let header = offset..<offset + BinaryFormat.frameHeaderSize
    let sectors = Self.sectorStart(header.lowerBound)...Self.sectorStart(header.upperBound - 1)
    return stride(from: sectors.lowerBound, through: sectors.upperBound, by: Self.sectorSize)
      .contains { isZero(max($0, offset)..<min($0 + Self.sectorSize, file.count)) }
  }

  /// Rule 3: whether a complete, checksummed record starts somewhere after `offset` (so
  /// the record at `offset` is not the last thing written).
  ///
  /// - Complexity: O(*n*) in the bytes after `offset`; run only when a header fails.
  private func completeRecordFollows(_ offset: Int) -> Bool {
    let minimumRecord = BinaryFormat.frameOverhead + 1
    var start = offset + 1
    while start + minimumRecord <= zeroTailStart {
      defer { start += 1 }
      let lengthBytes = UnsafeRawBufferPointer(rebasing: file[start..<start + 4])
      let checksum = UInt32(
        littleEndian: file.loadUnaligned(fromByteOffset: start + 4, as: UInt32.self))
      guard CRC32C.checksum(lengthBytes) == checksum else { continue }
      let length = Int(UInt32(littleEndian: lengthBytes.loadUnaligned(as: UInt32.self)))
      let payloadStart = start + BinaryFormat.frameHeaderSize
      guard length > 0, payloadStart + length + BinaryFormat.frameTrailerSize <= file.count
      else { continue }
      let payload = UnsafeRawBufferPointer(rebasing: file[payloadStart..<payloadStart + length])
      let payloadChecksum = UInt32(
        littleEndian: file.loadUnaligned(fromByteOffset: payloadStart + length, as: UInt32.self))
      if CRC32C.parallelChecksum(payload) == payloadChecksum { return true }
    }
    return false
  }

  /// Rule 4: the start of a sector of `record` (past its verified frame header) that holds
  /// only zero bytes within the record, if there is one.
  ///
  /// A last sector holding fewer than 4 bytes of the record holds only part of the trailing
  /// checksum, which may be zero when written; it counts when the part before it matches
  /// `payloadChecksum`, the checksum the payload on disk has.
  private func unwrittenSector(of record: Range<Int>, payloadChecksum: UInt32) -> Int? {
    let trailerStart = record.upperBound - BinaryFormat.frameTrailerSize
    var sector = Self.sectorStart(record.lowerBound + BinaryFormat.frameHeaderSize - 1)
    sector += Self.sectorSize  // the header's last sector was written: it verified
    while sector < record.upperBound {
      defer { sector += Self.sectorSize }
      let part = sector..<min(sector + Self.sectorSize, record.upperBound)
      guard isZero(part) else { continue }
      if part.lowerBound > trailerStart {
        let known = part.lowerBound - trailerStart
        let onDisk = withUnsafeBytes(of: payloadChecksum.littleEndian) { expected in
          (0..<known).allSatisfy { expected[$0] == file[trailerStart + $0] }
        }
        guard onDisk else { continue }
      }
      return sector
    }
    return nil
  }

  /// Whether `range` of the file holds only zero bytes.
  private func isZero(_ range: Range<Int>) -> Bool {
    range.allSatisfy { file[$0] == 0 }
  }

  /// The disk's unit of atomic writes: a crash leaves each such sector of a write either
  /// written whole or not at all.
  static let sectorSize = 512

  private static func sectorStart(_ offset: Int) -> Int { offset / sectorSize * sectorSize }
}
