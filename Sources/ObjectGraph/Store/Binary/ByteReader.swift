/// Reads the primitive encodings of the binary format from a buffer, checking every bound.
///
/// A reader never traps on bad input: every read past the end, overlong varint or count that
/// cannot fit the remaining bytes throws a ``FormatError`` with the file offset of the problem.
/// The buffer must outlive the reader (use it inside `withUnsafeBytes`).
struct ByteReader {
  /// The bytes being read.
  let buffer: UnsafeRawBufferPointer
  /// The file offset of `buffer[0]`, for error messages.
  let origin: Int
  /// The index in `buffer` of the next byte to read.
  private(set) var position = 0

  /// Creates a reader over `buffer`, whose first byte is at file offset `origin`.
  init(_ buffer: UnsafeRawBufferPointer, origin: Int) {
    self.buffer = buffer
    self.origin = origin
  }

  /// The file offset of the next byte to read.
  var fileOffset: Int { origin + position }

  /// The number of bytes not read yet.
  var remaining: Int { buffer.count - position }

  /// Whether every byte was read.
  var isAtEnd: Bool { position == buffer.count }

  /// An error at the current position.
  func failure(_ message: String) -> FormatError {
    FormatError(offset: fileOffset, message: message)
  }

  /// Reads one byte.
  @inline(__always)
  mutating func readByte() throws(FormatError) -> UInt8 {
    guard position < buffer.count else { throw failure("unexpected end of record") }
    let byte = buffer[position]
    position += 1
    return byte
  }

  /// The next byte, not read yet; `nil` at the end.
  func peekByte() -> UInt8? {
    position < buffer.count ? buffer[position] : nil
  }

  /// Reads `count` raw bytes, without copying.
  mutating func readBytes(_ count: Int) throws(FormatError) -> UnsafeRawBufferPointer {
    // One unsigned comparison for both bounds; the error is made out of line, so that the
    // common path keeps no registers for it.
    guard UInt(bitPattern: count) <= UInt(bitPattern: remaining) else {
      throw shortOf(count)
    }
    let bytes = UnsafeRawBufferPointer(
      start: buffer.baseAddress.map { $0 + position }, count: count)
    position += count
    return bytes
  }

  /// The error for a read of `count` bytes that the record does not hold.
  @inline(never)
  private func shortOf(_ count: Int) -> FormatError {
    failure("\(count) bytes expected, \(remaining) left in record")
  }

  /// Reads a little-endian 32-bit integer.
  mutating func readUInt32() throws(FormatError) -> UInt32 {
    let bytes = try readBytes(4)
    return UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self))
  }

  /// Reads a little-endian 64-bit integer.
  mutating func readUInt64() throws(FormatError) -> UInt64 {
    let bytes = try readBytes(8)
    return UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self))
  }

  /// Reads an unsigned LEB128 varint of at most 10 bytes.
  @inline(__always)
  mutating func readVarint() throws(FormatError) -> UInt64 {
    // Most varints (counts, deltas, lengths) fit in one byte.
    if position < buffer.count, buffer[position] < 0x80 {
      position += 1
      return UInt64(buffer[position - 1])
    }
    return try readLongVarint()
  }

  /// Reads a varint of any length, byte by byte.
  private mutating func readLongVarint() throws(FormatError) -> UInt64 {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let byte = try readByte()
      if shift == 63 && byte > 1 { throw failure("varint overflows 64 bits") }
      result |= UInt64(byte & 0x7F) << shift
      if byte < 0x80 { return result }
      shift += 7
    }
  }

  /// Reads a zigzag varint.
  @inline(__always)
  mutating func readSignedVarint() throws(FormatError) -> Int64 {
    let raw = try readVarint()
    return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
  }

  /// Reads an `Int` written by ``ByteWriter/writeInt(_:)``.
  @inline(__always)
  mutating func readInt() throws(FormatError) -> Int {
    Int(truncatingIfNeeded: try readVarint())
  }

  /// Reads a value written by ``ByteWriter/writeDelta(_:from:)`` and adds it to `base`.
  @inline(__always)
  mutating func readDelta(from base: UInt64) throws(FormatError) -> UInt64 {
    base &+ UInt64(bitPattern: try readSignedVarint())
  }

  /// Reads a count of elements that take at least `minimumElementSize` bytes each, checking
  /// that they can fit in the remaining bytes (so corrupt counts never allocate wildly).
  @inline(__always)
  mutating func readCount(minimumElementSize: Int = 1) throws(FormatError) -> Int {
    // A one-byte count that fits needs neither overflow nor error handling.
    if position < buffer.count, buffer[position] < 0x80,
      Int(buffer[position]) * max(minimumElementSize, 1) < remaining
    {
      position += 1
      return Int(buffer[position - 1])
    }
    return try readLongCount(minimumElementSize: minimumElementSize)
  }

  /// ``readCount(minimumElementSize:)`` for any count, with its checks.
  private mutating func readLongCount(minimumElementSize: Int) throws(FormatError) -> Int {
    let start = fileOffset
    let raw = try readVarint()
    let (needed, overflow) = raw.multipliedReportingOverflow(by: UInt64(max(minimumElementSize, 1)))
    guard !overflow, needed <= UInt64(remaining) else {
      throw FormatError(
        offset: start, message: "count \(raw) cannot fit in the \(remaining) bytes left")
    }
    return Int(raw)
  }
}
