import Dispatch

/// A serial executor owning a context: the jobs of the ``ModelActor`` that runs on it run
/// one at a time on one serial dispatch queue, so the context is never used by two threads
/// at once (SwiftData's `DefaultSerialModelExecutor`).
///
/// ```swift
/// modelExecutor = DefaultSerialModelExecutor(modelContext: try modelContainer.newContext())
/// ```
public final class DefaultSerialModelExecutor: SerialModelExecutor, @unchecked Sendable {
  // Sendable because the context is used only inside jobs of `queue`, which is serial; it
  // is handed over at `init`, before the first job, by the actor's initializer.
  public let modelContext: ObjectContext
  private let queue = DispatchQueue(label: "ObjectGraph.DefaultSerialModelExecutor")

  /// An executor owning `modelContext`; give it a context no one else uses.
  public init(modelContext: ObjectContext) {
    self.modelContext = modelContext
    #if DEBUG
      modelContext.useCheck.bind(to: queue)  // each entry point checks it runs on `queue`
    #endif
  }

  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedSerialExecutor()
    queue.async { job.runSynchronously(on: executor) }
  }

  public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    UnownedSerialExecutor(ordinary: self)
  }
}
