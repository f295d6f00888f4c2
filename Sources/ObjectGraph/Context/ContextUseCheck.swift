import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// In debug builds, stops the program with a message naming the context when a thread
/// enters a context's public entry point while another thread is inside one: a context and
/// its objects belong to one actor or thread, and two using it at once would corrupt it.
///
/// A thread may enter again while it is inside (an observer that fetches during a save's
/// delivery). Sequential use from several threads, as a serial executor's jobs make, passes.
/// Release builds make no check (``ObjectContext/beginUse()`` is empty there).
final class ContextUseCheck: Sendable {
  /// The thread inside the context, 0 when none.
  private let owner = Atomic<UInt>(0)
  /// How many times the owner entered; touched only by the owner.
  private nonisolated(unsafe) var depth = 0

  /// Notes that this thread enters; stops the program if another thread is inside.
  func enter(_ name: @autoclosure () -> String) {
    #if canImport(Glibc)
      let thread = UInt(pthread_self())
    #else
      let thread = UInt(bitPattern: pthread_self())
    #endif
    if owner.load(ordering: .acquiring) == thread {
      depth += 1
      return
    }
    guard owner.compareExchange(expected: 0, desired: thread, ordering: .acquiring).exchanged
    else {
      fatalError(
        "ObjectGraph: \(name()) is used on two threads at once. A context and its objects "
          + "belong to one actor or thread: make a context for each (container.newContext(), "
          + "or a ModelActor) and pass ObjectIDs between them")
    }
    depth = 1
  }

  /// Notes that this thread leaves.
  func leave() {
    depth -= 1
    if depth == 0 { owner.store(0, ordering: .releasing) }
  }
}
