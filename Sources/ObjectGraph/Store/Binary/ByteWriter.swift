/// Appends the primitive encodings of the binary format to a growing buffer.
///
/// Integers are little-endian; varints are unsigned LEB128; signed varints are zigzag-encoded.
///
/// The buffer is a raw allocation of its own, not an array: an array checks its capacity and
/// that it is uniquely referenced on every append, which cost a fifth of encoding a record
/// of 100,000 objects. Noncopyable, so the buffer has one owner and is freed however
/// encoding ends (a class would be retained and released around every write).
struct ByteWriter: ~Copyable {
  private var base: UnsafeMutableRawPointer
  private var capacity: Int
  /// The number of bytes written.
  private(set) var count = 0

  /// Creates an empty writer with room for `capacity` bytes.
  init(capacity: Int = 0) {
    self.capacity = max(capacity, 64)
    base = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 8)
  }

  deinit {
    base.deallocate()
  }

  /// A copy of the bytes written so far.
  var bytes: [UInt8] {
    [UInt8](UnsafeRawBufferPointer(start: base, count: count))
  }

  /// The bytes written so far, for the duration of `body`.
  func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows
    -> Result
  {
    try body(UnsafeRawBufferPointer(start: base, count: count))
  }

  /// Appends one byte.
  @inline(__always)
  mutating func write(_ byte: UInt8) {
    reserve(1)
    base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
    count += 1
  }

  /// Appends raw bytes.
  mutating func write(_ buffer: UnsafeRawBufferPointer) {
    guard let source = buffer.baseAddress, !buffer.isEmpty else { return }
    reserve(buffer.count)
    (base + count).copyMemory(from: source, byteCount: buffer.count)
    count += buffer.count
  }

  /// Appends raw bytes.
  mutating func write(_ array: [UInt8]) {
    array.withUnsafeBytes { write($0) }
  }

  /// Appends a 32-bit integer, little-endian.
  mutating func writeUInt32(_ value: UInt32) {
    reserve(4)
    base.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt32.self)
    count += 4
  }

  /// Appends a 64-bit integer, little-endian.
  mutating func writeUInt64(_ value: UInt64) {
    reserve(8)
    base.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt64.self)
    count += 8
  }

  /// Appends an unsigned LEB128 varint: 1 byte below 128, at most 10 bytes.
  @inline(__always)
  mutating func writeVarint(_ value: UInt64) {
    reserve(10)
    var value = value
    while value >= 0x80 {
      base.storeBytes(
        of: UInt8(truncatingIfNeeded: value) | 0x80, toByteOffset: count, as: UInt8.self)
      count += 1
      value >>= 7
    }
    base.storeBytes(of: UInt8(value), toByteOffset: count, as: UInt8.self)
    count += 1
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
    precondition(offset >= 0 && offset + 4 <= count, "patch outside the written bytes")
    base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
  }

  /// The checksum of the bytes in `range`.
  func checksum(of range: Range<Int>) -> UInt32 {
    precondition(range.lowerBound >= 0 && range.upperBound <= count, "range outside the bytes")
    return CRC32C.parallelChecksum(
      UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count))
  }

  /// Makes room for `additional` more bytes.
  @inline(__always)
  private mutating func reserve(_ additional: Int) {
    if count + additional > capacity { grow(toHold: count + additional) }
  }

  private mutating func grow(toHold needed: Int) {
    let newCapacity = max(needed, capacity * 2)
    let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
    newBase.copyMemory(from: base, byteCount: count)
    base.deallocate()
    base = newBase
    capacity = newCapacity
  }
}
