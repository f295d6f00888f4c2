import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// In debug builds, stops the program with a message naming the context when a thread
/// enters a context's public entry point while another thread is inside one, or outside
/// the actor the context belongs to: a context and its objects belong to one actor or
/// thread, and two using it at once would corrupt it.
///
/// A context belongs to the main actor once the app has asked for it as
/// ``ObjectContainer/mainContext``, and to its executor's queue once a
/// ``DefaultSerialModelExecutor`` owns it; a context made with
/// ``ObjectContainer/newContext()`` and kept by a thread or an actor of the app's own
/// belongs to whoever uses it, one at a time. A thread may enter again while it is inside
/// (an observer that fetches during a save's delivery). Sequential use from several threads,
/// as a serial executor's jobs make, passes. Release builds make no check
/// (``ObjectContext/beginUse()`` is empty there).
final class ContextUseCheck: Sendable {
  /// Where the context belongs.
  private enum Home {
    /// Any one thread at a time.
    case anyThread
    /// The main actor: the main thread.
    case mainActor
    /// A model executor's serial queue, marked with this check's identity.
    case executorQueue
  }

  /// The thread inside the context, 0 when none.
  private let owner = Atomic<UInt>(0)
  /// How many times the owner entered; touched only by the owner.
  private nonisolated(unsafe) var depth = 0
  /// Where the context belongs: set once, before the first use from there.
  private let home = LockedBox(Home.anyThread)
  /// The mark of the executor queue a context belongs to: its check's identity.
  private static let queueMark = DispatchSpecificKey<ObjectIdentifier>()
  /// The mark of the main queue. The main actor runs on the main thread, or, once a
  /// program parks its main thread in `dispatchMain()` (as the test runner does on Linux),
  /// on whichever thread drains the main queue.
  private static let mainQueueMark = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
  }()

  /// Whether the calling thread runs the main actor's work.
  private static var isOnMainActor: Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueMark) == true
  }

  /// Binds the context to the main actor (the app asked for it as the main context).
  func bindToMainActor() {
    _ = Self.mainQueueMark
    home.withLock { $0 = .mainActor }
  }

  /// Binds the context to a model executor's serial queue, which runs all its jobs.
  func bind(to queue: DispatchQueue) {
    queue.setSpecific(key: Self.queueMark, value: ObjectIdentifier(self))
    home.withLock { $0 = .executorQueue }
  }

  /// Notes that this thread enters; stops the program if another thread is inside, or if
  /// this thread is not where the context belongs.
  func enter(_ name: @autoclosure () -> String) {
    switch home.withLock({ $0 }) {
    case .anyThread:
      break
    case .mainActor where !Self.isOnMainActor:
      fatalError(
        "ObjectGraph: \(name()) is used off the main actor. The main context and its objects "
          + "belong to the main actor: for work elsewhere make a context there "
          + "(container.newContext(), or a ModelActor) and pass ObjectIDs between them")
    case .executorQueue
    where DispatchQueue.getSpecific(key: Self.queueMark) != ObjectIdentifier(self):
      fatalError(
        "ObjectGraph: \(name()) is used outside the ModelActor whose executor owns it. A "
          + "model actor's context and its objects belong to the actor: call into the actor, "
          + "and pass ObjectIDs, not objects, across actors")
    case .mainActor, .executorQueue:
      break
    }
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
