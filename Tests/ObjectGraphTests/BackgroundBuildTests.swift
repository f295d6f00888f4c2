import Dispatch
import Foundation
import Synchronization
import Testing

@testable import ObjectGraph

/// Work started on another thread runs once, whichever thread gets to it first, and every
/// thread asking for its result gets that one result.
@Suite struct BackgroundBuildTests {
  @Test func theWorkRunsOnceWhoeverAsksFirst() {
    for round in 0..<200 {
      let runs = Mutex(0)
      let build = BackgroundBuild {
        runs.withLock { $0 += 1 }
        return round
      }
      // Asked at once from several threads, often before the queue has started the work,
      // sometimes after: either way, one run.
      var results = [Int](repeating: -1, count: 4)
      results.withUnsafeMutableBufferPointer { results in
        let shared = UncheckedSendable(results)
        DispatchQueue.concurrentPerform(iterations: 4) { shared.value[$0] = build.value }
      }
      #expect(results == [round, round, round, round])
      #expect(build.value == round)
      #expect(runs.withLock { $0 } == 1)
    }
  }

  @Test func aResultMadeOnTheOtherThreadIsWaitedFor() {
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let build = BackgroundBuild {
      started.signal()
      release.wait()
      return "built"
    }
    // The queue has claimed the work: asking now waits for it instead of running it again.
    started.wait()
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { release.signal() }
    #expect(build.value == "built")
  }

  /// A discarded build never runs if no thread has started it; one running is waited for.
  @Test func aDiscardedBuildRunsOnlyIfStartedAndIsWaitedFor() {
    let runs = Atomic(0)
    let notStarted = BackgroundWork.holdingBack {
      let build = BackgroundBuild { runs.add(1, ordering: .relaxed) }
      build.discard()
      return build
    }
    // The hold is over, so the queue gets to the build, and finds it discarded.
    Thread.sleep(forTimeInterval: 0.05)
    #expect(runs.load(ordering: .relaxed) == 0)
    notStarted.discard()  // twice is harmless

    let started = DispatchSemaphore(value: 0)
    let finished = Atomic(false)
    let running = BackgroundBuild {
      started.signal()
      Thread.sleep(forTimeInterval: 0.02)
      finished.store(true, ordering: .releasing)
    }
    started.wait()
    running.discard()
    let isFinished = finished.load(ordering: .acquiring)
    #expect(isFinished)
  }

  /// A build made while a load holds builds back does not start on its own until the last
  /// hold ends; asking for its value runs it at once. (Other tests' loads may hold builds
  /// back too: the build can only start later than this test lets it, never earlier.)
  @Test func aBuildMadeDuringALoadWaitsForTheLoadUnlessAskedFor() {
    let runs = Atomic(0)
    BackgroundWork.hold()
    BackgroundWork.hold()  // nested, as a context's load within a container's
    let held = BackgroundBuild {
      runs.add(1, ordering: .relaxed)
      return "held"
    }
    BackgroundWork.endHold()
    // Still held by the outer hold: time enough for a queue to have run it, had it started.
    Thread.sleep(forTimeInterval: 0.05)
    #expect(runs.load(ordering: .relaxed) == 0)
    BackgroundWork.endHold()
    #expect(held.value == "held")
    #expect(runs.load(ordering: .relaxed) == 1)

    // Asked for during the hold, the work runs on the asking thread, without waiting for
    // the hold to end.
    let asked = BackgroundWork.holdingBack {
      let build = BackgroundBuild { "asked" }
      return build.value
    }
    #expect(asked == "asked")
  }
}
