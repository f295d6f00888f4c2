import Dispatch

/// Where background builds (``BackgroundBuild``) start: on a global queue at utility
/// priority, at once, or when the loads holding them back are done.
///
/// A binary store starts building its shapes as it opens, and a context's tables their
/// attribute indexes once loaded; made while the main context's objects were being made on
/// both cores of a two-core machine, the store's build took a share of them. Held back
/// until the container's main context is loaded, seedbench's reopen loads 2.2 ms faster
/// (26.9 → 23.9 ms, medians of 40 alternating runs at R = 100); the builds then run while
/// the app walks its objects on one core.
enum BackgroundWork {
  private struct State {
    var holds = 0
    var held: [@Sendable () -> Void] = []
  }

  // A `LockedBox` (an `NSLock`, which ThreadSanitizer sees): under `Mutex` it reported the
  // holds and the builds held as races.
  private static let state = LockedBox(State())

  /// Runs `body`, which loads objects on every core, with the builds started meanwhile (on
  /// any thread) held back until it returns and every other hold has ended.
  static func holdingBack<Value>(_ body: () throws -> Value) rethrows -> Value {
    hold()
    defer { endHold() }
    return try body()
  }

  /// Holds builds back until the matching ``endHold()`` (for an initializer, which cannot
  /// pass `self` to ``holdingBack(_:)``).
  static func hold() {
    state.withLock { $0.holds += 1 }
  }

  /// Ends a ``hold()``: the last to end starts the builds held back.
  static func endHold() {
    let released: [@Sendable () -> Void] = state.withLock { state in
      precondition(state.holds > 0, "ObjectGraph: a background hold ended twice")
      state.holds -= 1
      guard state.holds == 0 else { return [] }
      defer { state.held = [] }
      return state.held
    }
    for work in released { dispatch(work) }
  }

  /// Starts `work` on another thread, now or when the holds end.
  static func start(_ work: @escaping @Sendable () -> Void) {
    let isHeld = state.withLock { state in
      guard state.holds > 0 else { return false }
      state.held.append(work)
      return true
    }
    if !isHeld { dispatch(work) }
  }

  private static func dispatch(_ work: @escaping @Sendable () -> Void) {
    DispatchQueue.global(qos: .utility).async(execute: work)
  }
}
