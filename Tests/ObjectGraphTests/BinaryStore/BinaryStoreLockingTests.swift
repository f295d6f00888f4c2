import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// One writer: a store file is open in at most one store object, in any process.
@Suite struct BinaryStoreLockingTests {
  @Test func aSecondOpenerGetsStoreInUseAndTheFirstKeepsWorking() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    let first = BinaryStore(url: url)
    try first.open(schema: ConformanceSchema.schema)
    try first.save(Changeset(inserted: [ConformanceSchema.item(1)], nextObjectNumber: 2))
    let before = try fileBytes(url)

    let second = BinaryStore(url: url)
    let error = try #require(throws: ObjectGraphError.self) {
      try second.open(schema: ConformanceSchema.schema)
    }
    #expect(error.code == .storeInUse)
    #expect(error.message.contains("store is in use") && error.message.contains(url.path))
    #expect(try fileBytes(url) == before)

    try first.save(Changeset(inserted: [ConformanceSchema.item(2)], nextObjectNumber: 3))
    #expect(try first.load().objects.count == 2)
    first.close()
    let third = BinaryStore(url: url)
    try third.open(schema: ConformanceSchema.schema)
    #expect(try third.load().objects.count == 2)
    third.close()
  }

  @Test func aNewlyCreatedStoreIsLockedAtOnce() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    let first = BinaryStore(url: url)
    try first.open(schema: ConformanceSchema.schema)
    let second = BinaryStore(url: url)
    #expect(errorCode { try second.open(schema: ConformanceSchema.schema) } == .storeInUse)
    first.close()
  }

  @Test func aStoreReplacedByCompactionIsStillLocked() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    let first = BinaryStore(url: url)
    try first.open(schema: ConformanceSchema.schema)
    try first.save(Changeset(inserted: [ConformanceSchema.item(1)], nextObjectNumber: 2))
    try first.compact()
    #expect(
      errorCode { try BinaryStore(url: url).open(schema: ConformanceSchema.schema) } == .storeInUse)
    first.close()
    #expect(try openAndLoad(url).get().objects.count == 1)
  }

  @Test func anotherProcessSeesTheLock() throws {
    let flock = URL(fileURLWithPath: "/usr/bin/flock")
    try #require(FileManager.default.isExecutableFile(atPath: flock.path))
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    let store = BinaryStore(url: url)
    try store.open(schema: ConformanceSchema.schema)
    #expect(try exitStatus(flock, ["--nonblock", "--exclusive", url.path, "true"]) != 0)
    store.close()
    #expect(try exitStatus(flock, ["--nonblock", "--exclusive", url.path, "true"]) == 0)
  }

  @Test func everyCallAfterCloseThrowsStoreClosed() throws {
    let directory = try TemporaryDirectory()
    let store = BinaryStore(url: directory.file("store"))
    #expect(errorCode { _ = try store.load() } == .storeClosed, "not open yet")
    try store.open(schema: ConformanceSchema.schema)
    store.close()
    #expect(errorCode { try store.open(schema: ConformanceSchema.schema) } == .storeClosed)
    #expect(errorCode { try store.compact() } == .storeClosed)
    #expect(errorCode { _ = try store.load() } == .storeClosed)
  }

  private func exitStatus(_ executable: URL, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
  }
}
