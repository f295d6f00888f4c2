import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// Every state a crash can leave on disk during a workload (see ``CrashStates``: prefixes,
/// dropped and torn writes at sectors and pages, the file's size grown or kept, renames
/// undone) opens, at the last acknowledged save or at the one in flight: never an error,
/// never a lost save, never another graph.
@Suite struct BinaryStoreCrashStateTests {
  /// A workload: saves into a recorded store.
  struct Workload: CustomTestStringConvertible, Sendable {
    var name: String
    var run: @Sendable (RecordedStore) throws -> Void
    var testDescription: String { name }
  }

  static let workloads: [Workload] = [
    Workload(name: "inserts, updates, list edits and deletes") { try $0.saveStandardScript() },
    Workload(name: "list moves") { recorded in
      try recorded.save(
        Changeset(
          inserted: [ConformanceSchema.item(1, children: Array(2...31))]
            + (2...31).map { ConformanceSchema.item($0, parent: 1) },
          nextObjectNumber: 32))
      for move in 0..<12 {
        try recorded.save(
          ConformanceSchema.update(
            1, property: ConformanceSchema.children,
            .edit([.move(from: move % 30, to: (move * 7 + 3) % 30)]), nextObjectNumber: 32))
      }
    },
    Workload(name: "deletes") { recorded in
      try recorded.save(
        Changeset(inserted: (1...40).map { ConformanceSchema.item($0) }, nextObjectNumber: 41))
      for first in stride(from: 1, through: 31, by: 10) {
        try recorded.save(
          Changeset(
            deleted: (UInt64(first)...UInt64(first + 4)).map { ObjectID(rawValue: $0) },
            nextObjectNumber: 41))
      }
    },
    Workload(name: "compaction") { recorded in
      try recorded.saveStandardScript()
      try recorded.store.compact()
      try recorded.save(rename(1, "after the compaction"))
      try recorded.save(rename(2, "and once more"))
    },
    Workload(name: "a save that grows the file") { recorded in
      try recorded.saveStandardScript()
      let blob = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
      try recorded.save(
        ConformanceSchema.update(
          3, property: ConformanceSchema.blob, .set(.data(blob)), nextObjectNumber: 9))
      try recorded.save(rename(3, "after the large save"))
    },
    Workload(name: "a whole graph saved at once, then closed") { recorded in
      try recorded.save(
        Changeset(
          inserted: (1...3_000).map { ConformanceSchema.item($0, title: "item \($0)") },
          nextObjectNumber: 3_001))
      try recorded.save(rename(7, "renamed"))
      recorded.store.close()
    },
  ]

  @Test(arguments: workloads)
  func everyCrashStateOpensAtTheLastSaveOrTheOneInFlight(_ workload: Workload) throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"), recordsEvents: true)
    try workload.run(recorded)
    recorded.store.close()
    let crashes = CrashStates(
      events: recorded.probe.events, acknowledged: recorded.acknowledgedEvents)
    var counts = (opened: 0, unopenable: 0, lost: 0, wrong: 0, inFlight: 0)
    // One in three under a sanitizer: the fuzzer reads damaged files under AddressSanitizer.
    let tried = crashes.states.enumerated().filter { TestScale.tries($0.offset, oneIn: 3) }
    for (number, crash) in tried {
      let folder = directory.file("crash-\(number)")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: folder) }
      for (name, bytes) in crash.files {
        try writeFile(folder.appendingPathComponent(name), bytes)
      }
      let acknowledged = recorded.states[max(0, crash.acknowledgedSaves - 1)]
      let inFlight =
        recorded.states.indices.contains(crash.acknowledgedSaves)
        ? recorded.states[crash.acknowledgedSaves] : nil
      switch openAndLoad(folder.appendingPathComponent("store")) {
      case .failure(let error):
        counts.unopenable += 1
        Issue.record("\(crash.description): cannot open: \(error.message)")
      case .success(let contents) where contents == acknowledged:
        counts.opened += 1
      case .success(let contents) where contents == inFlight:
        counts.opened += 1
        counts.inFlight += 1
      case .success(let contents):
        if contents.objects.count < acknowledged.objects.count {
          counts.lost += 1
        } else {
          counts.wrong += 1
        }
        let counted =
          "\(contents.objects.count) objects, \(acknowledged.objects.count) acknowledged"
        Issue.record("\(crash.description): opened another graph (\(counted))")
      }
    }
    #expect(crashes.states.count > 20, "crash states were built")
    #expect(counts.opened == tried.count)
    let summary =
      "\(crashes.states.count) built, \(tried.count) tried, \(counts.opened) opened "
      + "(\(counts.inFlight) at the save in flight), \(counts.unopenable) unopenable, "
      + "\(counts.lost) lost a save, \(counts.wrong) wrong graphs"
    print("crash states (\(workload.name)): \(summary)")
  }
}
