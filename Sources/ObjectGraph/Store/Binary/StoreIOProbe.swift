import Synchronization

/// A test hook for ``StoreFile``: counts writes and syncs, and makes chosen operations fail.
///
/// Production stores have none. Tests create one, pass it to `BinaryStore(url:options:probe:)`
/// and check, for example, that a save synced once before returning, or that a failed write
/// left the file as it was.
final class StoreIOProbe: Sendable {
  /// An operation that can be counted or made to fail.
  enum Operation: Hashable, Sendable {
    /// One `pwrite` loop (a failure writes half the bytes, then fails).
    case write
    /// `fdatasync` of the store file.
    case dataSync
    /// `fsync` of a file.
    case fullSync
    /// `fsync` of the store's directory.
    case directorySync
    /// `rename` of the compacted file over the store.
    case rename
  }

  private struct State {
    var counts: [Operation: Int] = [:]
    var faults: [Operation: Int] = [:]
  }

  private let state = Mutex(State())

  /// Creates a probe that counts and fails nothing.
  init() {}

  /// How many times `operation` ran (or was attempted).
  func count(of operation: Operation) -> Int {
    state.withLock { $0.counts[operation, default: 0] }
  }

  /// Makes the next `times` attempts of `operation` fail.
  func failNext(_ operation: Operation, times: Int = 1) {
    state.withLock { $0.faults[operation, default: 0] += times }
  }

  /// Counts one attempt of `operation`.
  func count(_ operation: Operation) {
    state.withLock { $0.counts[operation, default: 0] += 1 }
  }

  /// Whether this attempt of `operation` must fail (using up one requested failure).
  func takeFault(_ operation: Operation) -> Bool {
    state.withLock { state in
      guard let remaining = state.faults[operation], remaining > 0 else { return false }
      state.faults[operation] = remaining - 1
      return true
    }
  }
}
