import Synchronization

/// A test hook for ``StoreFile``: counts writes and syncs, makes chosen operations fail, and
/// can record every change to the file system.
///
/// Production stores have none. Tests create one, pass it to `BinaryStore(url:options:probe:)`
/// and check, for example, that a save synced once before returning, or that a failed write
/// left the file as it was. A probe made with `recordsEvents` keeps each write (with its
/// bytes), truncation, sync, rename, creation and removal in order, so that a test can build
/// the states a crash could leave on disk.
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
    /// `ftruncate` of a file.
    case truncate
  }

  /// A change to the file system, as recorded.
  enum Event: Sendable {
    /// `bytes` written at `offset` of the file at `path`.
    case write(path: String, offset: Int, bytes: [UInt8])
    /// The file at `path` cut or grown to `size` bytes.
    case truncate(path: String, size: Int)
    /// `fdatasync` or `fsync` of the file at `path` returned success.
    case sync(path: String)
    /// `fsync` of the directory at `path` returned success.
    case directorySync(path: String)
    /// The file at `from` renamed to `to`, replacing what was there.
    case rename(from: String, to: String)
    /// An empty file created at `path`.
    case create(path: String)
    /// The file at `path` removed.
    case remove(path: String)
  }

  private struct State {
    var counts: [Operation: Int] = [:]
    var faults: [Operation: Int] = [:]
    /// Operations that fail every time from now on.
    var failing: Set<Operation> = []
    var events: [Event] = []
  }

  private let state = Mutex(State())
  /// Whether ``events`` are kept.
  let recordsEvents: Bool

  /// Creates a probe that counts and fails nothing, and records events if asked to.
  init(recordsEvents: Bool = false) {
    self.recordsEvents = recordsEvents
  }

  /// Every change recorded so far, in order.
  var events: [Event] {
    state.withLock { $0.events }
  }

  /// Records a change, if this probe records events.
  func record(_ event: @autoclosure () -> Event) {
    guard recordsEvents else { return }
    let event = event()
    state.withLock { $0.events.append(event) }
  }

  /// Makes every attempt of `operation` fail from now on (a disk failing for good).
  func failAlways(_ operation: Operation) {
    state.withLock { _ = $0.failing.insert(operation) }
  }

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
      if state.failing.contains(operation) { return true }
      guard let remaining = state.faults[operation], remaining > 0 else { return false }
      state.faults[operation] = remaining - 1
      return true
    }
  }
}
