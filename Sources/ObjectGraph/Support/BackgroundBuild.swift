import Dispatch
import Synchronization

/// Work that is started on another thread, at utility priority, and taken over by the first
/// thread that needs its result before that thread gets to it.
///
/// Speculative work (indexes and shapes of a store just opened) must not take a core from
/// the app's own thread: on Linux, libdispatch runs user-initiated work at nice −2, ahead of
/// the main thread, and a neighbour busy on the machine then left the app's walk of its
/// objects with half a core. At utility priority (nice 2) it gives way; and a thread that
/// asks for the result before the work has started does it itself, so it never waits on a
/// low-priority thread that has not run (if the work is running, it waits for it).
///
/// ```swift
/// let build = BackgroundBuild { expensiveIndex(of: objects) }
/// // ... later, on the thread that needs it:
/// let index = build.value
/// ```
///
/// A build made while a context loads objects on every core (opening a container, loading
/// a context: ``BackgroundWork/holdingBack(_:)``) starts when the load is done, so that it
/// takes no share of the cores the objects are made on; whoever asks for its value first
/// still runs it at once.
///
/// Unchecked sendable: `work` runs at most once, on whichever thread claims it first (never
/// when ``discard()`` claims it), and its result is written before the group every reader
/// waits on is left. Whoever makes a build promises that `work` may run on another thread
/// (it reads nothing that changes before ``value`` or ``discard()`` returns).
final class BackgroundBuild<Result>: @unchecked Sendable {
  /// The work until it runs: let go of then, with what it captured (a load's gathered ids,
  /// its noted attribute values), rather than when the result is taken.
  private var work: (() -> Result)?
  private let claimed = Atomic<Bool>(false)
  private let group = DispatchGroup()
  private var result: Result?

  /// Starts `work` on a global queue at utility priority, once no load holds builds back.
  init(_ work: @escaping () -> Result) {
    self.work = work
    group.enter()
    BackgroundWork.start { self.runIfUnclaimed() }
  }

  /// The result: computed on this thread if the other has not started, else waited for.
  var value: Result {
    runIfUnclaimed()
    group.wait()
    return result!
  }

  /// Gives up the result: the work never runs if no thread has started it (what it captured
  /// is let go of at once), else this waits for it to end. For an owner about to change or
  /// let go of what the work reads, whose result it no longer needs.
  func discard() {
    if claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
      .exchanged
    {
      work = nil
      group.leave()
    }
    group.wait()
  }

  /// Runs the work if no thread has claimed it yet.
  private func runIfUnclaimed() {
    guard
      claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
        .exchanged
    else { return }
    result = work.take()!()
    group.leave()
  }
}
