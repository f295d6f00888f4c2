import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs independent pieces of work on the machine's cores.
enum Parallel {
  /// The number of pieces a job of `count` items is worth splitting into: `piecesPerCore`
  /// per core (of at most four cores), each of at least `minimumPerPiece` items. More pieces
  /// than cores let a core that is free take the pieces of one busy with other work.
  static func pieceCount(for count: Int, minimumPerPiece: Int, piecesPerCore: Int = 1) -> Int {
    let cores = min(max(ProcessInfoCores.active, 1), 4)
    return max(1, min(cores * piecesPerCore, count / max(minimumPerPiece, 1)))
  }

  /// Calls `body(i)` for every `i` in `0..<count`, on as many threads as there are cores,
  /// and returns once every call has. The calls must not touch the same mutable state.
  static func forEach(_ count: Int, _ body: (Int) -> Void) {
    guard count > 1 else {
      if count == 1 { body(0) }
      return
    }
    withoutActuallyEscaping(body) { body in
      let shared = UncheckedSendable(body)
      DispatchQueue.concurrentPerform(iterations: count) { shared.value($0) }
    }
  }
}

extension Parallel {
  /// Lets go of a large value on another thread, so that freeing it does not hold up the
  /// caller: a changeset of 100,000 new objects, say, releases as many strings, each a
  /// cache miss. The caller must hand over its last reference (`consume`).
  static func release<Value: Sendable>(_ value: consuming Value) {
    let value = value
    DispatchQueue.global(qos: .utility).async { withExtendedLifetime(value) {} }
  }
}

/// The number of active cores, read once.
private enum ProcessInfoCores {
  static let active: Int = {
    #if canImport(Glibc)
      return Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    #else
      return Int(sysconf(_SC_NPROCESSORS_ONLN))
    #endif
  }()
}

/// A value handed to other threads by code that makes sure they do not race on it.
struct UncheckedSendable<Value>: @unchecked Sendable {
  let value: Value

  init(_ value: Value) { self.value = value }
}
