import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A test hook for ``StoreFile``: counts writes and syncs, makes chosen attempts of them
/// fail, and can record every change to the file system.
///
/// Production stores have none. Tests create one, pass it to `BinaryStore(url:options:probe:)`
/// and check, for example, that a save synced once before returning, or that a failed write
/// left the file as it was. A ``Fault`` aims at the *n*-th attempt of an operation, once or
/// from then on, with an `errno` of the test's choice (or, for writes, short `pwrite`s). A
/// probe made with `recordsEvents` keeps each write (with its bytes), truncation, sync,
/// rename, creation and removal in order, so that a test can build the states a crash could
/// leave on disk.
final class StoreIOProbe: Sendable {
  /// An operation that can be counted or made to fail.
  enum Operation: Hashable, Sendable, CaseIterable {
    /// One `pwrite` loop of an append's bytes.
    case write
    /// The `pwrite` loop of the zero bytes an append reserves after its records.
    case roomWrite
    /// `fdatasync` of the store file.
    case dataSync
    /// `fsync` of a file.
    case fullSync
    /// `fsync` of the store's directory.
    case directorySync
    /// `rename` of the compacted file over the store.
    case rename
    /// `link` of the store file under the name a migration keeps it by.
    case link
    /// `ftruncate` of a file.
    case truncate

    /// Whether the operation writes bytes (and so can write some of them).
    var writesBytes: Bool { self == .write || self == .roomWrite }
  }

  /// A failure to inject: what chosen attempts of an operation do instead of their work.
  struct Fault: Sendable, CustomStringConvertible {
    /// What a faulty attempt does.
    enum Effect: Sendable, Equatable {
      /// The call fails with this `errno`, having done nothing.
      case error(Int32)
      /// Writes only: the call writes half of its bytes, then fails with this `errno` (a disk
      /// filling up).
      case partialWrite(Int32)
      /// Writes only: each `pwrite` of the loop writes at most half of the bytes left and
      /// returns that shorter count, which is not an error: the loop must go on.
      case shortWrites
    }

    /// Which attempts are faulty.
    enum Duration: Sendable {
      /// Only the chosen attempt.
      case once
      /// The chosen attempt and every one after it (a disk that died).
      case forGood
    }

    var operation: Operation
    /// The attempt aimed at, counting the probe's attempts of ``operation`` from 1.
    var attempt: Int
    var effect: Effect
    var duration: Duration

    init(_ operation: Operation, attempt: Int, _ effect: Effect, _ duration: Duration = .once) {
      switch effect {
      case .error: break
      case .partialWrite, .shortWrites:
        precondition(operation.writesBytes, "only a write can write some of its bytes")
      }
      self.operation = operation
      self.attempt = attempt
      self.effect = effect
      self.duration = duration
    }

    /// Whether the `number`-th attempt of `operation` is faulty.
    func applies(to operation: Operation, attempt number: Int) -> Bool {
      operation == self.operation
        && (duration == .once ? number == attempt : number >= attempt)
    }

    var description: String {
      let effect =
        switch self.effect {
        case .error(let code): "fails with errno \(code)"
        case .partialWrite(let code): "writes half, then fails with errno \(code)"
        case .shortWrites: "writes short"
        }
      let when = duration == .once ? "attempt \(attempt)" : "attempts \(attempt)..."
      return "\(operation) \(when) \(effect)"
    }
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
    /// The file at `from` given the second name `to`.
    case link(from: String, to: String)
    /// An empty file created at `path`.
    case create(path: String)
    /// The file at `path` removed.
    case remove(path: String)
  }

  private struct State {
    var counts: [Operation: Int] = [:]
    var faults: [Fault] = []
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

  /// Makes every attempt of `operation` fail from now on (a disk failing for good): writes
  /// write half of their bytes, then fail with `ENOSPC`; other operations fail with `EIO`.
  func failAlways(_ operation: Operation) {
    state.withLock { state in
      let next = state.counts[operation, default: 0] + 1
      state.faults.append(
        Fault(operation, attempt: next, Self.defaultEffect(of: operation), .forGood))
    }
  }

  /// Makes the next `times` attempts of `operation` fail, as ``failAlways(_:)`` does.
  func failNext(_ operation: Operation, times: Int = 1) {
    state.withLock { state in
      let next = state.counts[operation, default: 0] + 1
      for attempt in next..<next + times {
        state.faults.append(Fault(operation, attempt: attempt, Self.defaultEffect(of: operation)))
      }
    }
  }

  /// Adds `fault` to the faults injected.
  func inject(_ fault: Fault) {
    state.withLock { $0.faults.append(fault) }
  }

  /// How many times `operation` ran (or was attempted).
  func count(of operation: Operation) -> Int {
    state.withLock { $0.counts[operation, default: 0] }
  }

  /// Counts one attempt of `operation`, returning what it must do instead of its work, if
  /// a fault applies to it (the first injected that does).
  func attempt(_ operation: Operation) -> Fault.Effect? {
    state.withLock { state in
      let number = state.counts[operation, default: 0] + 1
      state.counts[operation] = number
      return state.faults.first { $0.applies(to: operation, attempt: number) }?.effect
    }
  }

  private static func defaultEffect(of operation: Operation) -> Fault.Effect {
    operation.writesBytes ? .partialWrite(ENOSPC) : .error(EIO)
  }
}
