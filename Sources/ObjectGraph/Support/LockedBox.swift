import Foundation

/// Mutable state behind one lock: the only way shared mutable state is kept in ObjectGraph
/// for values the compiler cannot prove `Sendable` (key paths, closures).
final class LockedBox<Value>: @unchecked Sendable {
  private var value: Value
  private let lock = NSLock()

  init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` with exclusive access to the value.
  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
