import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Every I/O operation of a workload of saves and compactions made to fail, one at a time:
/// once or for good, with `ENOSPC` or `EIO`, and writes made short or cut off. Whatever
/// fails, a save that returned is kept, a save that threw is not, a save whose outcome is
/// unknown is kept or not (and every save after it is refused without writing), and the
/// file always opens at one of those states.
@Suite struct BinaryStoreFaultMatrixTests {
  @Test func everyOperationFailingOnceKeepsEverySaveItAcknowledged() throws {
    let tally = try Self.runMatrix("failing once") { operation, attempt in
      [ENOSPC, EIO].map { StoreIOProbe.Fault(operation, attempt: attempt, .error($0)) }
    }
    #expect(tally.violations.isEmpty, "\(tally.violations.joined(separator: "\n"))")
  }

  @Test func everyOperationFailingForGoodKeepsEverySaveItAcknowledged() throws {
    let tally = try Self.runMatrix("failing for good") { operation, attempt in
      [ENOSPC, EIO].map {
        StoreIOProbe.Fault(operation, attempt: attempt, .error($0), .forGood)
      }
    }
    #expect(tally.violations.isEmpty, "\(tally.violations.joined(separator: "\n"))")
  }

  @Test func writesCutOffHalfwayKeepEverySaveTheyAcknowledged() throws {
    let tally = try Self.runMatrix("writes cut off halfway", operations: Self.writes) {
      operation, attempt in
      [ENOSPC, EIO].flatMap { code in
        [StoreIOProbe.Fault.Duration.once, .forGood].map {
          StoreIOProbe.Fault(operation, attempt: attempt, .partialWrite(code), $0)
        }
      }
    }
    #expect(tally.violations.isEmpty, "\(tally.violations.joined(separator: "\n"))")
  }

  /// A `pwrite` that writes fewer bytes than asked is no error: every save returns, whole.
  @Test func shortWritesAreCompletedAndEverySaveReturns() throws {
    let tally = try Self.runMatrix("short writes", operations: Self.writes) {
      operation, attempt in
      [StoreIOProbe.Fault.Duration.once, .forGood].map {
        StoreIOProbe.Fault(operation, attempt: attempt, .shortWrites, $0)
      }
    }
    #expect(tally.violations.isEmpty, "\(tally.violations.joined(separator: "\n"))")
    #expect(tally.outcomes.nothingWritten + tally.outcomes.unknown + tally.outcomes.refused == 0)
  }

  @Test func theWorkloadReachesEveryOperationAndBothCompactions() throws {
    let baseline = try Self.run(nil)
    #expect(baseline.tally.violations.isEmpty, "\(baseline.tally.violations)")
    #expect(baseline.tally.outcomes.returned == Self.saveCount)
    // A migration's link of the old file is tested with migrations (MigrationSafetyTests).
    for operation in StoreIOProbe.Operation.allCases where operation != .link {
      #expect(baseline.probe.count(of: operation) > 0, "\(operation) is never attempted")
    }
    #expect(baseline.tally.compactions == 1, "the compaction asked for ran")
    #expect(baseline.automaticCompactions >= 1, "a save compacted the file")
    #expect(baseline.grewPastRoom, "a save grew the file past its reserved room")
  }

  /// A save whose sync fails and whose undo cannot cut the file leaves the save in the file,
  /// but not in what the store checks changesets against. A compaction must not make that
  /// durable in a new file that takes saves again: a retry of the save would then be
  /// accepted and insert its objects twice, and the file would no longer open.
  @Test func aCompactionAfterAnUnknownOutcomeIsRefusedAndTheRetryToo() throws {
    let directory = try TemporaryDirectory(under: Self.scratch)
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    let insert = Changeset(inserted: [ConformanceSchema.item(40)], nextObjectNumber: 41)
    recorded.probe.failNext(.dataSync)
    recorded.probe.failNext(.truncate)
    #expect(errorCode { try recorded.store.save(insert) } == .saveOutcomeUnknown)
    let before = try fileBytes(recorded.url)
    #expect(errorCode { try recorded.store.compact() } == .storeNeedsReopen)
    #expect(errorCode { try recorded.store.save(insert) } == .storeNeedsReopen)
    #expect(try fileBytes(recorded.url) == before, "nothing written")
    recorded.store.close()
    let model = InMemoryStore()
    try model.open(schema: ConformanceSchema.schema)
    for changeset in RecordedStore.standardScript + [insert] { try model.save(changeset) }
    let after = try model.load().comparable
    let reopened = try openAndLoad(recorded.url).get()
    #expect(reopened == recorded.states.last || reopened == after)
  }

  // MARK: - The workload

  private enum Step {
    case save(Changeset)
    case compact
  }

  /// Small thresholds, so that one save grows the file past its room and a later one
  /// compacts it.
  private static let options: BinaryStoreOptions = {
    var options = BinaryStoreOptions.standard
    options.reservedRoom = 1_024
    options.compactionMinimumBytes = 3_000
    options.compactionGrowthFactor = 1.3
    return options
  }()

  /// Inserts, updates of every kind of value, list inserts, moves and removes, deletes (the
  /// standard script), a save larger than the reserved room, a compaction, then saves of
  /// long titles until one compacts the file, and one save after that.
  private static let workload: [Step] = {
    var steps = RecordedStore.standardScript.map(Step.save)
    steps.append(
      .save(
        Changeset(
          inserted: [ConformanceSchema.item(30, title: String(repeating: "long ", count: 400))],
          nextObjectNumber: 31)))
    steps.append(.compact)
    for round in 0..<6 {
      steps.append(
        .save(
          retitle(UInt64(round % 3 + 1), "title \(round) " + String(repeating: "-", count: 500))))
    }
    return steps
  }()

  private static var saveCount: Int {
    workload.count { if case .save = $0 { true } else { false } }
  }

  private static let writes: [StoreIOProbe.Operation] = [.write, .roomWrite]

  private static func retitle(_ id: UInt64, _ title: String) -> Changeset {
    Changeset(
      updated: [
        ObjectUpdate(
          id: ObjectID(rawValue: id), entity: ConformanceSchema.item,
          changes: [PropertyChange(property: ConformanceSchema.title, kind: .set(.string(title)))])
      ], nextObjectNumber: 31)
  }

  // MARK: - Running it

  /// Where the cases' files go: a file system in memory when there is one. The faults are
  /// injected, so the real syncs test nothing here, and the matrices' 318 cases make some
  /// 6,000 of them: 25 s on a busy disk, against 4 s in memory.
  private static let scratch: URL? =
    FileManager.default.isWritableFile(atPath: "/dev/shm")
    ? URL(fileURLWithPath: "/dev/shm", isDirectory: true) : nil

  /// How the saves of the cases ended, and what broke the rules.
  private struct Tally {
    struct Outcomes {
      var returned = 0
      /// Threw another code than the two below: nothing may be written.
      var nothingWritten = 0
      /// Threw ``ObjectGraphError/Code/saveOutcomeUnknown``.
      var unknown = 0
      /// Threw ``ObjectGraphError/Code/storeNeedsReopen``.
      var refused = 0
    }

    var cases = 0
    var outcomes = Outcomes()
    var compactions = 0
    var failedCompactions = 0
    var refusedCompactions = 0
    var violations: [String] = []

    mutating func add(_ other: Tally) {
      cases += other.cases
      outcomes.returned += other.outcomes.returned
      outcomes.nothingWritten += other.outcomes.nothingWritten
      outcomes.unknown += other.outcomes.unknown
      outcomes.refused += other.outcomes.refused
      compactions += other.compactions
      failedCompactions += other.failedCompactions
      refusedCompactions += other.refusedCompactions
      violations += other.violations
    }

    func summary(_ name: String) -> String {
      "fault matrix, \(name): \(cases) cases, \(cases * BinaryStoreFaultMatrixTests.saveCount) "
        + "saves: \(outcomes.returned) returned, \(outcomes.nothingWritten) nothing written, "
        + "\(outcomes.unknown) outcome unknown, \(outcomes.refused) refused; compactions asked "
        + "for: \(compactions) done, \(failedCompactions) failed, "
        + "\(refusedCompactions) refused; "
        + "\(violations.count) violations"
    }
  }

  /// One case for each fault `faults` makes of each attempt of each operation that the
  /// workload reaches, run, checked and summed up.
  private static func runMatrix(
    _ name: String, operations: [StoreIOProbe.Operation] = StoreIOProbe.Operation.allCases,
    faults: (StoreIOProbe.Operation, Int) -> [StoreIOProbe.Fault]
  ) throws -> Tally {
    let baseline = try run(nil).probe
    var tally = Tally()
    for operation in operations {
      for attempt in 1...max(1, baseline.count(of: operation)) {
        for fault in faults(operation, attempt) {
          tally.add(try run(fault).tally)
        }
      }
    }
    print(tally.summary(name))
    return tally
  }

  /// Runs the workload with `fault` injected, checking the rules after each step and after a
  /// reopen on a healthy disk.
  private static func run(_ fault: StoreIOProbe.Fault?) throws -> FaultCase {
    let faultCase = try FaultCase(fault)
    for (number, step) in workload.enumerated() {
      switch step {
      case .save(let changeset): try faultCase.save(changeset, step: number)
      case .compact: try faultCase.compact(step: number)
      }
      try faultCase.checkFile(after: number)
    }
    faultCase.checkReopen()
    return faultCase
  }

  /// The workload run on a new store whose probe injects one fault, beside a model fed the
  /// changesets that the store took, and what the run broke.
  private final class FaultCase {
    let directory: TemporaryDirectory
    let url: URL
    let probe = StoreIOProbe()
    let store: BinaryStore
    let model = InMemoryStore()
    let label: String
    private(set) var tally = Tally()
    private(set) var automaticCompactions = 0
    private(set) var grewPastRoom = false
    /// The model's state at the last save that returned.
    private var acknowledged: ComparableContents
    /// The states before and after the save whose outcome is unknown, once there is one.
    private var unknown: (before: ComparableContents, after: ComparableContents)?

    /// The states the file may show.
    private var allowed: [ComparableContents] {
      unknown.map { [$0.before, $0.after] } ?? [acknowledged]
    }

    /// Creates an empty store on a healthy disk, then opens it with `fault` injected.
    init(_ fault: StoreIOProbe.Fault?) throws {
      directory = try TemporaryDirectory(under: scratch)
      url = directory.file("store")
      let created = BinaryStore(url: url)
      try created.open(schema: ConformanceSchema.schema)
      created.close()
      if let fault { probe.inject(fault) }
      label = fault.map { "\($0)" } ?? "no fault"
      store = BinaryStore(url: url, options: options, probe: probe)
      try store.open(schema: ConformanceSchema.schema)
      try model.open(schema: ConformanceSchema.schema)
      acknowledged = try model.load().comparable
      tally.cases = 1
    }

    func save(_ changeset: Changeset, step number: Int) throws {
      let attemptsBefore = attempts(probe)
      let statistics = store.statistics
      let bytesBefore = try fileBytes(url)
      do {
        try store.save(changeset)
      } catch let error as ObjectGraphError {
        try failed(changeset, error, step: number)
        if error.code == .storeNeedsReopen && attempts(probe) != attemptsBefore {
          violation("step \(number): a refused save did I/O")
        }
        if error.code != .saveOutcomeUnknown, try fileBytes(url) != bytesBefore {
          violation("step \(number) threw \(error.code), but the file changed")
        }
        return
      }
      tally.outcomes.returned += 1
      if unknown != nil { violation("step \(number) returned after an unknown outcome") }
      let after = store.statistics
      if after.recordsSinceCompaction < statistics.recordsSinceCompaction {
        automaticCompactions += 1
      }
      if after.fileBytes > statistics.fileBytes && statistics.reservedBytes > 0 {
        grewPastRoom = true
      }
      do {
        try model.save(changeset)
      } catch {
        violation("step \(number): the model refused a save the store took: \(error)")
      }
      acknowledged = try model.load().comparable
    }

    /// Counts a save that threw `error`, and what it may have left.
    private func failed(_ changeset: Changeset, _ error: ObjectGraphError, step number: Int)
      throws
    {
      switch error.code {
      case .saveOutcomeUnknown:
        tally.outcomes.unknown += 1
        guard unknown == nil else {
          violation("step \(number): a second unknown outcome: \(error.message)")
          return
        }
        try model.save(changeset)
        unknown = (acknowledged, try model.load().comparable)
      case .storeNeedsReopen:
        tally.outcomes.refused += 1
      default:
        tally.outcomes.nothingWritten += 1
        if unknown != nil {
          violation("step \(number) threw \(error.code) after an unknown outcome")
        }
      }
    }

    func compact(step number: Int) throws {
      let attemptsBefore = attempts(probe)
      let bytesBefore = try fileBytes(url)
      do {
        try store.compact()
        tally.compactions += 1
      } catch let error as ObjectGraphError where error.code == .storeNeedsReopen {
        tally.refusedCompactions += 1
        if attempts(probe) != attemptsBefore {
          violation("step \(number): a refused compaction did I/O")
        }
      } catch {
        tally.failedCompactions += 1
        if try fileBytes(url) != bytesBefore {
          violation("step \(number): a failed compaction changed the file")
        }
      }
    }

    /// Checks that a copy of the file, as it is now, opens at an allowed state.
    func checkFile(after number: Int) throws {
      let copy = directory.file("copy")
      try writeFile(copy, try fileBytes(url))
      defer { try? FileManager.default.removeItem(at: copy) }
      if let problem = problem(opening: copy) { violation("after step \(number): \(problem)") }
    }

    /// Closes the store and checks that it opens, with no probe, at an allowed state.
    func checkReopen() {
      store.close()
      if let problem = problem(opening: url) { violation("reopened: \(problem)") }
    }

    private func problem(opening url: URL) -> String? {
      switch openAndLoad(url) {
      case .success(let contents):
        return allowed.contains(contents) ? nil : "the file shows \(contents), not \(allowed)"
      case .failure(let error):
        return "the file does not open: \(error.code) \(error.message)"
      }
    }

    private func violation(_ message: String) {
      tally.violations.append("\(label): \(message)")
    }
  }

  /// Every attempt of every operation so far.
  private static func attempts(_ probe: StoreIOProbe) -> Int {
    StoreIOProbe.Operation.allCases.reduce(0) { $0 + probe.count(of: $1) }
  }
}
