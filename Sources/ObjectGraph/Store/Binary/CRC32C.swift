/// CRC-32C (Castagnoli), the checksum of every header and record of a binary store.
///
/// Polynomial 0x1EDC6F41 (reflected 0x82F63B78), initial value and final XOR 0xFFFFFFFF,
/// the variant used by iSCSI, ext4 and SSE 4.2. Computed slicing-by-8: eight bytes per step
/// through eight 256-entry tables. Each step's table loads wait on the step before, so a
/// long run is checksummed as three runs over its thirds at once, whose chains of loads
/// overlap, and the three checksums are combined (``combine(_:_:secondCount:)``).
enum CRC32C {
  /// The eight lookup tables, 256 entries each, laid out one after another.
  private static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for byte in 0..<256 {
      var crc = UInt32(byte)
      for _ in 0..<8 {
        crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
      }
      tables[byte] = crc
    }
    for table in 1..<8 {
      for byte in 0..<256 {
        let previous = tables[(table - 1) * 256 + byte]
        tables[table * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
      }
    }
    return tables
  }()

  /// The checksum of `bytes`.
  ///
  /// - Complexity: O(*n*) in the number of bytes.
  static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    update(0, with: bytes)
  }

  /// The checksum of the concatenation of the bytes checksummed into `checksum` and `bytes`.
  ///
  /// `update(update(0, with: a), with: b) == checksum(a + b)`.
  static func update(_ checksum: UInt32, with bytes: UnsafeRawBufferPointer) -> UInt32 {
    // A third a multiple of eight bytes, long enough to pay for two combinations.
    let third = bytes.count / 3 & ~7
    guard third >= interleavedMinimum else {
      return tables.withUnsafeBufferPointer { ~run(~checksum, bytes, from: 0, to: bytes.count, $0) }
    }
    let (first, second, last) = tables.withUnsafeBufferPointer { table in
      var first = ~checksum
      var second: UInt32 = ~0
      var last: UInt32 = ~0
      var index = 0
      while index < third {
        first = step(first, bytes, index, table)
        second = step(second, bytes, third + index, table)
        last = step(last, bytes, 2 * third + index, table)
        index += 8
      }
      return (~first, ~second, ~run(last, bytes, from: 3 * third, to: bytes.count, table))
    }
    let firstTwo = combine(first, second, secondCount: third)
    return combine(firstTwo, last, secondCount: bytes.count - 2 * third)
  }

  /// The fewest bytes a third of a run interleaved in three takes.
  static let interleavedMinimum = 4_096

  /// `crc` (inverted, as during a run) updated with `bytes[start..<end]`.
  @inline(__always)
  private static func run(
    _ crc: UInt32, _ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int,
    _ table: UnsafeBufferPointer<UInt32>
  ) -> UInt32 {
    var crc = crc
    var index = start
    while end - index >= 8 {
      crc = step(crc, bytes, index, table)
      index += 8
    }
    while index < end {
      crc = (crc >> 8) ^ table[Int((crc ^ UInt32(bytes[index])) & 0xFF)]
      index += 1
    }
    return crc
  }

  /// `crc` (inverted) updated with the eight bytes at `index`.
  @inline(__always)
  private static func step(
    _ crc: UInt32, _ bytes: UnsafeRawBufferPointer, _ index: Int,
    _ table: UnsafeBufferPointer<UInt32>
  ) -> UInt32 {
    let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
    let low = UInt32(truncatingIfNeeded: word) ^ crc
    let high = UInt32(truncatingIfNeeded: word >> 32)
    return table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
      ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
      ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
      ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
  }

  /// The checksum of `bytes`.
  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0) }
  }

  /// The checksum of `bytes`, computed in pieces on as many threads as there are cores
  /// when there are megabytes of them (a whole-graph record), and combined.
  static func parallelChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    let pieceCount = Parallel.pieceCount(for: bytes.count, minimumPerPiece: 1 << 20)
    guard pieceCount > 1 else { return checksum(bytes) }
    let bounds = (0...pieceCount).map { bytes.count * $0 / pieceCount }
    var checksums = [UInt32](repeating: 0, count: pieceCount)
    checksums.withUnsafeMutableBufferPointer { checksums in
      Parallel.forEach(pieceCount) { piece in
        checksums[piece] = checksum(
          UnsafeRawBufferPointer(rebasing: bytes[bounds[piece]..<bounds[piece + 1]]))
      }
    }
    var combined = checksums[0]
    for piece in 1..<pieceCount {
      combined = combine(
        combined, checksums[piece], secondCount: bounds[piece + 1] - bounds[piece])
    }
    return combined
  }

  /// The checksum of `a + b` from the checksums of `a` and of `b` and the length of `b`
  /// (the method of zlib's `crc32_combine`: appending `b`'s zero-filled length to `a` is a
  /// linear map on the 32 bits of its checksum, the product of the maps for each power of
  /// two in the length, ``zeroOperators``).
  ///
  /// - Complexity: O(log *n*) in `secondCount`.
  static func combine(_ first: UInt32, _ second: UInt32, secondCount: Int) -> UInt32 {
    guard secondCount > 0 else { return first }
    var crc = first
    var remaining = secondCount
    var power = 0
    while remaining > 0 {
      if remaining & 1 != 0 { crc = times(zeroOperators[power], crc) }
      remaining >>= 1
      power += 1
    }
    return crc ^ second
  }

  /// The maps that append 2^k zero bytes to a checksum's input, for every k an `Int` count
  /// can need, as 32×32 bit matrices (32 words each, one after another): made once, so a
  /// combination multiplies a few matrices and squares none.
  private static let zeroOperators: [[UInt32]] = {
    // The operator for one zero bit, then two, four, eight: one zero byte.
    var matrix = [UInt32](repeating: 0, count: 32)
    matrix[0] = 0x82F6_3B78
    for bit in 1..<32 { matrix[bit] = 1 << UInt32(bit - 1) }
    for _ in 0..<3 { matrix = square(matrix) }
    var operators = [matrix]
    for _ in 1..<Int.bitWidth {
      matrix = square(matrix)
      operators.append(matrix)
    }
    return operators
  }()

  private static func times(_ matrix: [UInt32], _ vector: UInt32) -> UInt32 {
    var sum: UInt32 = 0
    var vector = vector
    var row = 0
    while vector != 0 {
      if vector & 1 != 0 { sum ^= matrix[row] }
      vector >>= 1
      row += 1
    }
    return sum
  }

  private static func square(_ matrix: [UInt32]) -> [UInt32] {
    matrix.map { times(matrix, $0) }
  }
}
