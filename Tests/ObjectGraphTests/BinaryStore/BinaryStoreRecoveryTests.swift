import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// A crash while appending leaves a torn tail that open cuts off; any other damage is an
/// error naming the file, and the file is left as it was.
@Suite struct BinaryStoreRecoveryTests {
  @Test func aTornLastRecordOpensAtTheLastCompleteSave() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    recorded.store.close()
    let original = try fileBytes(recorded.url)
    let lastStart = recorded.ends[recorded.ends.count - 2]
    let copy = directory.file("cut")
    for cut in lastStart..<original.count {
      try writeFile(copy, original[..<cut])
      #expect(
        try openAndLoad(copy).get() == recorded.states[recorded.states.count - 2],
        "cut at \(cut)")
      #expect(fileLength(copy) == lastStart, "the torn tail is cut off")
    }
    try writeFile(copy, original.dropLast(3))
    let store = BinaryStore(url: copy)
    try store.open(schema: ConformanceSchema.schema)
    let recovery = try #require(store.statistics.recovery)
    #expect(recovery.contains("torn tail of \(original.count - 3 - lastStart) bytes"))
    store.close()
  }

  @Test func aFileCutAnywhereOpensAtTheLastSaveItHoldsWhole() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    recorded.store.close()
    let original = try fileBytes(recorded.url)
    let headerEnd = recorded.ends[0]
    let copy = directory.file("cut")
    for cut in stride(from: 0, to: original.count, by: 7) {
      try writeFile(copy, original[..<cut])
      let result = openAndLoad(copy)
      if cut < headerEnd {
        #expect(result.failure?.code == .corruptStore, "cut at \(cut) inside the header")
        #expect(try fileBytes(copy) == Array(original[..<cut]), "the file is untouched")
      } else {
        let saves = recorded.ends.lastIndex { $0 <= cut } ?? 0
        #expect(try result.get() == recorded.states[saves], "cut at \(cut)")
        #expect(fileLength(copy) == recorded.ends[saves])
      }
    }
  }

  /// Closed, the file ends at its last record; open, the room its saves reserved follows.
  @Test(arguments: [false, true])
  func aFlippedBitAnywhereIsDamageNeverAWrongGraph(withRoom: Bool) throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    if !withRoom { recorded.store.close() }
    defer { recorded.store.close() }
    let original = try fileBytes(recorded.url)
    let final = try #require(recorded.states.last)
    let copy = directory.file("flipped")
    let headerEnd = recorded.ends[0]
    let recordsEnd = try #require(recorded.ends.last)
    #expect(withRoom == (original.count > recordsEnd))
    // Every byte of every record, one in three bytes of the header (mostly schema text), and
    // the room's first bytes and then one in 997.
    let offsets =
      Array(stride(from: 0, to: headerEnd, by: 3)) + Array(headerEnd..<recordsEnd)
      + Array(recordsEnd..<min(recordsEnd + 64, original.count))
      + Array(stride(from: recordsEnd + 64, to: original.count, by: 997))
    for (number, offset) in offsets.enumerated() where TestScale.tries(number, oneIn: 3) {
      var damaged = original
      damaged[offset] ^= 1 << UInt8(offset % 8)
      try writeFile(copy, damaged)
      switch openAndLoad(copy) {
      case .success(let contents):
        #expect(contents == final, "bit flipped at \(offset): opened, so nothing may be lost")
      case .failure(let error):
        #expect(
          [.corruptStore, .unsupportedFormat].contains(error.code), "bit flipped at \(offset)")
        #expect(error.file == copy && error.message.contains(copy.path))
        #expect(try fileBytes(copy) == damaged, "the damaged file is left untouched")
      }
    }
  }

  @Test func aForgedRecordWithValidChecksumsIsRefusedOrReadNeverACrash() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    recorded.store.close()
    let original = try fileBytes(recorded.url)
    let copy = directory.file("forged")
    var outcomes = (opened: 0, refused: 0)
    // Rewrite payload bytes of every record and fix the checksum, so that only the decoder's
    // own checks stand between the bytes and the graph.
    for record in 0..<recorded.ends.count - 1 {
      let start = recorded.ends[record]
      let payload = (start + BinaryFormat.frameHeaderSize)..<(recorded.ends[record + 1] - 4)
      for offset in payload where TestScale.tries(offset, oneIn: 3) {
        for replacement in Set([0, 0xFF, 0x80, original[offset] ^ 1, original[offset] &+ 1]) {
          var forged = original
          forged[offset] = replacement
          let checksum = forged.withUnsafeBytes {
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[payload]))
          }
          withUnsafeBytes(of: checksum.littleEndian) {
            forged.replaceSubrange(payload.upperBound..<payload.upperBound + 4, with: $0)
          }
          try writeFile(copy, forged)
          switch openAndLoad(copy) {
          case .success: outcomes.opened += 1
          case .failure(let error):
            outcomes.refused += 1
            #expect(error.code == .corruptStore && error.file == copy)
          }
        }
      }
    }
    #expect(outcomes.refused > 0)
  }

  @Test func aDamagedEarlierRecordIsReportedWithItsOffset() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    recorded.store.close()
    var bytes = try fileBytes(recorded.url)
    let secondRecord = recorded.ends[1]
    bytes[secondRecord + 10] ^= 0x40
    try writeFile(recorded.url, bytes)
    let error = try #require(openAndLoad(recorded.url).failure)
    #expect(error.code == .corruptStore)
    #expect(error.message.contains("checksum mismatch"))
    #expect(error.message.contains("byte offset \(secondRecord)"))
    #expect(try fileBytes(recorded.url) == bytes)
  }

  /// Zero bytes after the last record are room a save reserved, or blocks a crash left
  /// unwritten after the file grew (a save that never returned): either way, nothing to
  /// recover, and the next save overwrites them.
  @Test func zeroBytesAfterTheLastRecordAreRoomForTheNextSave() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    recorded.store.close()
    let original = try fileBytes(recorded.url)
    #expect(original.count == recorded.ends.last, "closing cut the room off")
    try writeFile(recorded.url, original + [UInt8](repeating: 0, count: 100))
    let store = BinaryStore(url: recorded.url)
    try store.open(schema: ConformanceSchema.schema)
    #expect(store.statistics.recovery == nil)
    #expect(store.statistics.reservedBytes == 100)
    #expect(try store.load().comparable == recorded.states.last)
    try store.save(rename(2, "saved into the room"))
    let written = 100 - store.statistics.reservedBytes
    #expect(written > 0)
    #expect(fileLength(recorded.url) == original.count + 100, "the save grew nothing")
    store.close()
    #expect(fileLength(recorded.url) == original.count + written, "closing cut the room off")
    let reopened = BinaryStore(url: recorded.url)
    try reopened.open(schema: ConformanceSchema.schema)
    #expect(reopened.statistics.recovery == nil)
    let renamed = try reopened.load().objects.first { $0.id == ObjectID(rawValue: 2) }
    #expect(renamed?.values[ConformanceSchema.title] == .string("saved into the room"))
    reopened.close()
  }

  /// A save that overwrites room and is cut short by a crash leaves its record's first
  /// blocks, then zero bytes (the rest of the room) to the end of the file.
  @Test(arguments: [false, true])
  func aLastRecordWithUnwrittenBlocksIsATornTail(withRoom: Bool) throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    // A last record that spans a block boundary.
    let blockSize = 4_096  // a file-system block: a page written back whole or not at all
    let long = String(repeating: "x", count: 3 * blockSize)
    try recorded.save(
      Changeset(
        updated: [
          ObjectUpdate(
            id: ObjectID(rawValue: 1), entity: ConformanceSchema.item,
            changes: [PropertyChange(property: ConformanceSchema.title, kind: .set(.string(long)))])
        ], nextObjectNumber: 9))
    if !withRoom { recorded.store.close() }
    defer { recorded.store.close() }
    var bytes = try fileBytes(recorded.url)
    let lastStart = recorded.ends[recorded.ends.count - 2]
    let lastEnd = try #require(recorded.ends.last)
    #expect(withRoom == (bytes.count > lastEnd))
    let boundary = (lastStart / blockSize + 1) * blockSize
    try #require(boundary < lastEnd)
    for index in boundary..<bytes.count { bytes[index] = 0 }
    let copy = directory.file("torn")
    try writeFile(copy, bytes)
    let store = BinaryStore(url: copy)
    try store.open(schema: ConformanceSchema.schema)
    #expect(try store.load().comparable == recorded.states[recorded.states.count - 2])
    let recovery = try #require(store.statistics.recovery)
    #expect(recovery.contains("at byte offset \(lastStart)"))
    #expect(fileLength(copy) == lastStart)
    store.close()
    // The whole record unwritten: only room follows the save before it.
    for index in lastStart..<bytes.count { bytes[index] = 0 }
    try writeFile(copy, bytes)
    let again = BinaryStore(url: copy)
    try again.open(schema: ConformanceSchema.schema)
    #expect(try again.load().comparable == recorded.states[recorded.states.count - 2])
    #expect(again.statistics.recovery == nil)
    again.close()
    #expect(fileLength(copy) == lastStart)
  }
}

/// A crash leaves sectors of the save in flight unwritten (zero), in any order; the same
/// zeros in a save followed by others are damage to acknowledged history.
@Suite struct BinaryStoreSectorTests {
  /// The standard script, a save of a long title spanning many sectors, and one more save.
  private func storeWithALongRecord(followedBy more: Bool) throws -> (
    RecordedStore, TemporaryDirectory, longRecord: Range<Int>
  ) {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    let long = String((0..<6_000).map { Character(UnicodeScalar(UInt8(65 + $0 % 26))) })
    try recorded.save(rename(1, long))
    let record = recorded.ends[recorded.ends.count - 2]..<recorded.ends[recorded.ends.count - 1]
    if more { try recorded.save(rename(2, "after the long one")) }
    recorded.store.close()
    return (recorded, directory, record)
  }

  @Test func anyUnwrittenSectorOfTheLastRecordIsATornSave() throws {
    let (recorded, directory, record) = try storeWithALongRecord(followedBy: false)
    let original = try fileBytes(recorded.url)
    let copy = directory.file("torn")
    let sector = RecordScanner.sectorSize
    for start in stride(
      from: record.lowerBound / sector * sector, to: record.upperBound, by: sector)
    {
      var torn = original
      for index in max(start, record.lowerBound)..<min(start + sector, torn.count) {
        torn[index] = 0
      }
      try writeFile(copy, torn)
      #expect(
        try openAndLoad(copy).get() == recorded.states[recorded.states.count - 2],
        "sector at \(start) unwritten")
    }
  }

  @Test func aZeroedSectorInARecordFollowedByAnotherIsDamage() throws {
    let (recorded, directory, record) = try storeWithALongRecord(followedBy: true)
    var damaged = try fileBytes(recorded.url)
    let sector = RecordScanner.sectorSize
    let middle = (record.lowerBound / sector + 4) * sector
    for index in middle..<middle + sector { damaged[index] = 0 }
    let copy = directory.file("damaged")
    try writeFile(copy, damaged)
    let error = try #require(openAndLoad(copy).failure)
    #expect(
      error.code == .corruptStore && error.message.contains("byte offset \(record.lowerBound)"))
    #expect(try fileBytes(copy) == damaged, "the file is left untouched")
  }

  @Test func aZeroedHeaderSectorFollowedByAWholeRecordIsDamage() throws {
    let (recorded, directory, record) = try storeWithALongRecord(followedBy: true)
    var damaged = try fileBytes(recorded.url)
    let sectorEnd = (record.lowerBound / RecordScanner.sectorSize + 1) * RecordScanner.sectorSize
    for index in record.lowerBound..<sectorEnd { damaged[index] = 0 }
    let copy = directory.file("damaged")
    try writeFile(copy, damaged)
    let error = try #require(openAndLoad(copy).failure)
    #expect(error.code == .corruptStore && error.message.contains("length checksum mismatch"))
    #expect(error.message.contains("byte offset \(record.lowerBound)"))
  }

  @Test func aFlippedBitInALastRecordWithoutZeroSectorsIsDamage() throws {
    let (recorded, directory, record) = try storeWithALongRecord(followedBy: false)
    var damaged = try fileBytes(recorded.url)
    damaged[record.lowerBound + 3_000] ^= 0x10
    let copy = directory.file("damaged")
    try writeFile(copy, damaged)
    let error = try #require(openAndLoad(copy).failure)
    #expect(error.code == .corruptStore && error.message.contains("record checksum mismatch"))
  }
}

extension Result {
  /// The error, if the result is a failure.
  var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
