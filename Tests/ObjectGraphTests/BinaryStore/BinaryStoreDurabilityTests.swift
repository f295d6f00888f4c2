import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// A save is one append and one `fdatasync` before it returns; a save that fails leaves the
/// file byte for byte as it was and the store usable.
@Suite struct BinaryStoreDurabilityTests {
  @Test func eachSaveIsWrittenAndSyncedBeforeItReturns() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    let probe = recorded.probe
    for (number, changeset) in RecordedStore.standardScript.enumerated() {
      let writes = probe.count(of: .write)
      let syncs = probe.count(of: .dataSync)
      try recorded.save(changeset)
      #expect(probe.count(of: .write) == writes + 1, "one append for save \(number)")
      #expect(probe.count(of: .dataSync) == syncs + 1, "one fdatasync for save \(number)")
      #expect(recorded.ends[number + 1] > recorded.ends[number])
      #expect(recorded.store.statistics.fileBytes == fileLength(recorded.url))
      // What is on disk now is the whole save (and maybe room after it): a copy opens at it.
      let copy = directory.file("copy")
      try writeFile(copy, try fileBytes(recorded.url))
      #expect(try openAndLoad(copy).get() == recorded.states[number + 1])
    }
  }

  @Test func aSmallSaveInALargeStoreAppendsAboutAsManyBytesAsTheChange() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.save(
      Changeset(inserted: (1...5_000).map { ConformanceSchema.item($0) }, nextObjectNumber: 5_001))
    try recorded.save(
      Changeset(
        updated: [
          ObjectUpdate(
            id: ObjectID(rawValue: 2_500), entity: ConformanceSchema.item,
            changes: [
              PropertyChange(property: ConformanceSchema.title, kind: .set(.string("Renamed")))
            ])
        ], nextObjectNumber: 5_001))
    let growth = recorded.ends[2] - recorded.ends[1]
    #expect(growth > 0 && growth <= 40, "a one-title save appended \(growth) bytes")
    #expect(fileLength(recorded.url) == recorded.store.statistics.fileBytes)
  }

  @Test func aRefusedChangesetLeavesTheFileByteIdentical() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    let before = try fileBytes(recorded.url)
    let unknown = Changeset(
      inserted: [ConformanceSchema.item(20)],
      updated: [
        ObjectUpdate(
          id: ObjectID(rawValue: 99), entity: ConformanceSchema.item,
          changes: [PropertyChange(property: ConformanceSchema.title, kind: .set(.string("x")))])
      ], nextObjectNumber: 100)
    let error = try #require(throws: ObjectGraphError.self) { try recorded.store.save(unknown) }
    #expect(error.code == .corruptStore)
    #expect(error.file == recorded.url && error.message.contains(recorded.url.path))
    #expect(try fileBytes(recorded.url) == before)
    #expect(try recorded.store.load().comparable == recorded.states.last)
    try expectUsable(recorded)
  }

  /// A save of 2,500 bytes fits in the room the earlier saves reserved; one of 100,000
  /// bytes grows the file past it.
  @Test(arguments: [StoreIOProbe.Operation.write, .dataSync], [500, 20_000])
  func aFailedWriteOrSyncLeavesTheFileByteIdenticalAndTheStoreUsable(
    _ failing: StoreIOProbe.Operation, titleWords: Int
  ) throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    let before = try fileBytes(recorded.url)
    let room = recorded.store.statistics.reservedBytes
    #expect(room > 0)
    #expect((titleWords * 5 < room) == (titleWords == 500))
    recorded.probe.failNext(failing)
    let change = Changeset(
      inserted: [ConformanceSchema.item(30, title: String(repeating: "long ", count: titleWords))],
      updated: [
        ObjectUpdate(
          id: ObjectID(rawValue: 1), entity: ConformanceSchema.item,
          changes: [
            PropertyChange(property: ConformanceSchema.children, kind: .edit([.remove(at: 1)]))
          ])
      ], deleted: [ObjectID(rawValue: 4)], nextObjectNumber: 31)
    let error = try #require(throws: ObjectGraphError.self) { try recorded.store.save(change) }
    #expect(error.code == .io)
    #expect(error.message.contains(recorded.url.path))
    #expect(try fileBytes(recorded.url) == before)
    #expect(recorded.store.statistics.reservedBytes == room)
    #expect(try recorded.store.load().comparable == recorded.states.last)
    try expectUsable(recorded)
  }

  @Test func aSaveReservesRoomThatTheSavesAfterItOverwrite() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    #expect(recorded.store.statistics.reservedBytes == 0, "a new file holds just its header")
    try recorded.save(RecordedStore.standardScript[0])
    let reserved = BinaryStoreOptions.standard.reservedRoom
    let grown = recorded.store.statistics
    #expect(grown.fileBytes % reserved == 0)
    #expect(grown.reservedBytes >= reserved / 4)
    #expect(fileLength(recorded.url) == grown.fileBytes)
    for changeset in RecordedStore.standardScript.dropFirst() { try recorded.save(changeset) }
    let statistics = recorded.store.statistics
    #expect(statistics.fileBytes == grown.fileBytes, "the later saves overwrote the room")
    #expect(statistics.fileBytes - statistics.reservedBytes == recorded.ends.last)
    // A compacted file is written whole, with no room; the next save that grows it has.
    try recorded.store.compact()
    #expect(recorded.store.statistics.reservedBytes == 0)
    #expect(recorded.store.statistics.fileBytes == fileLength(recorded.url))
    try recorded.save(rename(2, "after compaction"))
    #expect(recorded.store.statistics.reservedBytes > 0)
    recorded.store.close()
    #expect(fileLength(recorded.url) == recorded.ends.last, "closing cut the room off")
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
  }

  /// The first save into an empty store records no undo per object: when it fails (the
  /// write, or a change that does not fit), the store must be empty again, so the same
  /// objects can be saved next.
  @Test(arguments: [StoreIOProbe.Operation.write, .dataSync, nil])
  func aFailedFirstSaveLeavesTheStoreEmptyAndUsable(_ failing: StoreIOProbe.Operation?) throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    let before = try fileBytes(recorded.url)
    let items = (UInt64(1)...20).map { ConformanceSchema.item($0, title: "item \($0)") }
    var first = Changeset(inserted: items, nextObjectNumber: 30)
    if let failing {
      recorded.probe.failNext(failing)
    } else {
      // Inserts, then an update of an object that does not exist: refused as a whole.
      first.updated = [
        ObjectUpdate(
          id: ObjectID(rawValue: 99), entity: ConformanceSchema.item,
          changes: [PropertyChange(property: ConformanceSchema.title, kind: .set(.string("x")))])
      ]
    }
    #expect(throws: ObjectGraphError.self) { try recorded.store.save(first) }
    #expect(try fileBytes(recorded.url) == before)
    #expect(try recorded.store.load().objects.isEmpty)
    #expect(recorded.store.statistics.objectCount == 0)
    try recorded.save(Changeset(inserted: items, nextObjectNumber: 30))
    recorded.store.close()
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
  }

  /// Saves once more and checks that a reopen shows exactly the model.
  private func expectUsable(_ recorded: RecordedStore) throws {
    try recorded.save(
      Changeset(
        updated: [
          ObjectUpdate(
            id: ObjectID(rawValue: 3), entity: ConformanceSchema.item,
            changes: [
              PropertyChange(property: ConformanceSchema.title, kind: .set(.string("after")))
            ])
        ], nextObjectNumber: 9))
    recorded.store.close()
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
  }
}
