import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// Compaction rewrites the live graph into a new file that atomically replaces the old one;
/// a crash or failure at any step leaves a whole store.
@Suite struct BinaryStoreCompactionTests {
  @Test func compactionKeepsEveryObjectAndRelationship() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    for round in 0..<50 { try recorded.save(rename(1, "title \(round)")) }
    let before = recorded.store.statistics
    try recorded.store.compact()
    let after = recorded.store.statistics
    #expect(after.fileBytes < before.fileBytes)
    #expect(after.recordsSinceCompaction == 1)
    #expect(after.objectCount == before.objectCount)
    #expect(fileLength(recorded.url) == after.fileBytes)
    #expect(try recorded.store.load().comparable == recorded.states.last)
    #expect(directory.fileNames == ["store"], "no temporary file is left")
    // Saves after compaction append to the new file.
    try recorded.save(rename(2, "after compaction"))
    recorded.store.close()
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
  }

  @Test func aFileGrownPastItsLiveDataIsCompactedAfterASave() throws {
    let directory = try TemporaryDirectory()
    var options = BinaryStoreOptions.standard
    options.compactionMinimumBytes = 4_096
    let recorded = try RecordedStore(url: directory.file("store"), options: options)
    try recorded.saveStandardScript()
    var compactions = 0
    for round in 0..<400 {
      let records = recorded.store.statistics.recordsSinceCompaction
      try recorded.save(
        rename(UInt64(round % 4 + 1), "title \(round) " + String(repeating: "-", count: 40)))
      if recorded.store.statistics.recordsSinceCompaction < records { compactions += 1 }
      let statistics = recorded.store.statistics
      let recordBytes = statistics.fileBytes - statistics.reservedBytes
      #expect(recordBytes <= max(4_096, 2 * statistics.liveBytes) + 200)
    }
    #expect(compactions > 0)
    recorded.store.close()
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
  }

  @Test(arguments: [StoreIOProbe.Operation.write, .fullSync, .rename])
  func aCompactionFailingAtAStepLeavesTheOldFileWhole(_ failing: StoreIOProbe.Operation) throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    let before = try fileBytes(recorded.url)
    recorded.probe.failNext(failing)
    let error = try #require(throws: ObjectGraphError.self) { try recorded.store.compact() }
    #expect(error.code == .io)
    #expect(try fileBytes(recorded.url) == before)
    #expect(directory.fileNames == ["store"], "the temporary file is removed")
    try recorded.save(rename(1, "still usable"))
    recorded.store.close()
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
  }

  /// After a failed directory sync the new file's name may not survive a crash (which would
  /// bring back the old file): no save may be acknowledged on the new file until a reopen,
  /// whose first save syncs the directory before writing.
  @Test func aDirectorySyncFailureAfterTheRenameRefusesSavesUntilReopened() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    recorded.probe.failNext(.directorySync)
    try recorded.store.compact()
    let before = try fileBytes(recorded.url)
    let error = try #require(throws: ObjectGraphError.self) {
      try recorded.store.save(rename(1, "after"))
    }
    #expect(error.code == .storeNeedsReopen && error.file == recorded.url)
    #expect(error.message.contains("directory"))
    #expect(try fileBytes(recorded.url) == before, "nothing written")
    recorded.store.close()
    let probe = StoreIOProbe()
    let reopened = BinaryStore(url: recorded.url, options: .standard, probe: probe)
    try reopened.open(schema: ConformanceSchema.schema)
    #expect(try reopened.load().comparable == recorded.states.last)
    try reopened.save(rename(1, "after the reopen"))
    try reopened.save(rename(1, "again"))
    #expect(probe.count(of: .directorySync) == 1, "the first save synced the directory, once")
    reopened.close()
  }

  @Test func aHalfWrittenCompactionFileIsIgnoredAndRemoved() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    recorded.store.close()
    let compacted = try compactedImage(of: recorded.url, in: directory)
    for length in [0, 10, compacted.count / 2, compacted.count - 1] {
      try writeFile(directory.file("store.partial"), compacted[..<length])
      #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
      #expect(directory.fileNames == ["store"])
    }
  }

  @Test func aCompleteButUnrenamedCompactionFileIsIgnoredAndRemoved() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    // A compaction of an older state, complete and synced, but the crash came before the
    // rename (the saves after it went to the old file, as they must).
    let older = try compactedImage(of: recorded.url, in: directory)
    try recorded.save(rename(2, "saved after the interrupted compaction"))
    recorded.store.close()
    try writeFile(directory.file("store.partial"), older)
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
    #expect(directory.fileNames == ["store"])
  }

  @Test func aCompactedStoreOpensLikeTheOriginal() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    recorded.store.close()
    let compacted = try compactedImage(of: recorded.url, in: directory)
    // A crash after the rename: the new file is the store.
    try writeFile(recorded.url, compacted)
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
  }

  /// The bytes of a compacted copy of the store at `url` (which must be closed).
  private func compactedImage(of url: URL, in directory: TemporaryDirectory) throws -> [UInt8] {
    let copy = directory.file("compacted-copy")
    try writeFile(copy, try fileBytes(url))
    let store = BinaryStore(url: copy)
    try store.open(schema: ConformanceSchema.schema)
    try store.compact()
    store.close()
    let bytes = try fileBytes(copy)
    try FileManager.default.removeItem(at: copy)
    return bytes
  }
}
