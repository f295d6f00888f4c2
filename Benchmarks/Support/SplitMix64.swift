import Foundation

/// The workload's random number generator: SplitMix64, seeded with 42.
///
/// Every draw happens in the order `WORKLOAD.md` prescribes, so the SQLite baseline and this
/// benchmark pick the same boxes and positions.
public struct SplitMix64 {
  private var state: UInt64

  /// Creates a generator; the workload uses seed 42.
  public init(seed: UInt64 = 42) {
    state = seed
  }

  /// The next 64-bit draw.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A draw reduced to an index in `0..<count` (`rand() % n`).
  public mutating func index(below count: Int) -> Int {
    Int(next() % UInt64(count))
  }

  /// A UUID made of the big-endian bytes of two draws.
  public mutating func nextUUID() -> UUID {
    let high = next().bigEndian
    let low = next().bigEndian
    var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    withUnsafeMutableBytes(of: &bytes) { buffer in
      buffer.storeBytes(of: high, toByteOffset: 0, as: UInt64.self)
      buffer.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
    }
    return UUID(uuid: bytes)
  }
}
