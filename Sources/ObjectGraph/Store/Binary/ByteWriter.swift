/// Appends the primitive encodings of the binary format to a growing byte array.
///
/// Integers are little-endian; varints are unsigned LEB128; signed varints are zigzag-encoded.
struct ByteWriter {
  /// The bytes written so far.
  private(set) var bytes: [UInt8] = []

  /// Creates an empty writer with room for `capacity` bytes.
  init(capacity: Int = 0) {
    bytes.reserveCapacity(capacity)
  }

  /// The number of bytes written.
  var count: Int { bytes.count }

  /// Appends one byte.
  @inline(__always)
  mutating func write(_ byte: UInt8) {
    bytes.append(byte)
  }

  /// Appends raw bytes.
  mutating func write(_ buffer: UnsafeRawBufferPointer) {
    bytes.append(contentsOf: buffer)
  }

  /// Appends raw bytes.
  mutating func write(_ array: [UInt8]) {
    bytes.append(contentsOf: array)
  }

  /// Appends a 32-bit integer, little-endian.
  mutating func writeUInt32(_ value: UInt32) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  /// Appends a 64-bit integer, little-endian.
  mutating func writeUInt64(_ value: UInt64) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  /// Appends an unsigned LEB128 varint: 1 byte below 128, at most 10 bytes.
  @inline(__always)
  mutating func writeVarint(_ value: UInt64) {
    var value = value
    while value >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
      value >>= 7
    }
    bytes.append(UInt8(value))
  }

  /// Appends a signed integer as a zigzag varint: small magnitudes of either sign stay short.
  @inline(__always)
  mutating func writeSignedVarint(_ value: Int64) {
    writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
  }

  /// Appends an `Int` as the varint of its bit pattern (exact for every `Int`, short when
  /// non-negative and small).
  @inline(__always)
  mutating func writeInt(_ value: Int) {
    writeVarint(UInt64(UInt(bitPattern: value)))
  }

  /// Appends the difference `value - base` (wrapping) as a signed varint.
  @inline(__always)
  mutating func writeDelta(_ value: UInt64, from base: UInt64) {
    writeSignedVarint(Int64(bitPattern: value &- base))
  }

  /// Overwrites four bytes at `offset` with a little-endian 32-bit integer.
  ///
  /// - Precondition: `offset + 4 <= count`.
  mutating func patchUInt32(_ value: UInt32, at offset: Int) {
    withUnsafeBytes(of: value.littleEndian) { source in
      for index in 0..<4 { bytes[offset + index] = source[index] }
    }
  }

  /// The checksum of the bytes in `range`.
  func checksum(of range: Range<Int>) -> UInt32 {
    bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[range])) }
  }
}
