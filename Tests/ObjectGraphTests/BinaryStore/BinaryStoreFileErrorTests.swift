import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// A file that is not a store of this schema is refused with an error naming it, and left
/// as it was.
@Suite struct BinaryStoreFileErrorTests {
  /// Files a store must refuse.
  enum BadFile: String, CaseIterable, Sendable, CustomStringConvertible {
    case empty, zeroFilled, text, sqlite, newerVersion, damagedHeader, truncatedHeader

    var description: String { rawValue }

    var expectedCode: ObjectGraphError.Code {
      self == .newerVersion ? .unsupportedFormat : .corruptStore
    }

    var expectedWords: String {
      switch self {
      case .empty: "empty"
      case .zeroFilled: "zero-filled"
      case .text, .sqlite: "not an ObjectGraph"
      case .newerVersion: "newer"
      case .damagedHeader: "header checksum"
      case .truncatedHeader: "past the end"
      }
    }

    func bytes(validStore: [UInt8]) -> [UInt8] {
      switch self {
      case .empty: return []
      case .zeroFilled: return [UInt8](repeating: 0, count: 8_192)
      case .text: return Array("Dear diary, today I saved a file.\n".utf8)
      case .sqlite: return Array("SQLite format 3\0".utf8) + [UInt8](repeating: 1, count: 84)
      case .newerVersion:
        var bytes = validStore
        bytes[8] = UInt8(BinaryFormat.currentVersion + 1)
        return bytes
      case .damagedHeader:
        var bytes = validStore
        bytes[40] ^= 0x20
        return bytes
      case .truncatedHeader:
        return Array(validStore[..<30])
      }
    }
  }

  @Test(arguments: BadFile.allCases)
  func aBadFileIsRefusedNamingItAndLeftUntouched(_ bad: BadFile) throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    let valid = try validStoreBytes(in: directory)
    let bytes = bad.bytes(validStore: valid)
    try writeFile(url, bytes)
    let store = BinaryStore(url: url)
    let error = try #require(throws: ObjectGraphError.self) {
      try store.open(schema: ConformanceSchema.schema)
    }
    #expect(error.code == bad.expectedCode)
    #expect(error.file == url)
    #expect(error.message.contains(url.path))
    #expect(error.message.contains(bad.expectedWords), "\(error.message)")
    #expect(try fileBytes(url) == bytes)
    #expect(directory.fileNames == ["store"])
    // The failed open left the file unlocked.
    #expect(
      errorCode { try BinaryStore(url: url).open(schema: ConformanceSchema.schema) }
        == bad.expectedCode)
  }

  /// A file of format version 1 (no snapshot in parts) is read and written in version 1
  /// until a compaction rewrites it in the current version.
  @Test func aVersionOneFileStaysReadableAndIsUpgradedByCompaction() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    var header = try BinaryStoreHeader.encode(schema: ConformanceSchema.schema)
    header[8] = 1
    let checksumOffset = header.count - 4
    let checksum = CRC32C.checksum(Array(header[..<checksumOffset]))
    withUnsafeBytes(of: checksum.littleEndian) {
      header.replaceSubrange(checksumOffset..., with: $0)
    }
    try writeFile(url, header)
    let objects = (UInt64(1)...30).map { ConformanceSchema.item($0, title: "Item \($0)") }
    let store = BinaryStore(url: url)
    try store.open(schema: ConformanceSchema.schema)
    #expect(store.statistics.formatVersion == 1)
    try store.save(Changeset(inserted: objects, nextObjectNumber: 100))
    store.close()
    // The save into the empty store is a snapshot of version 1's kind.
    #expect(try fileBytes(url)[header.count + BinaryFormat.frameHeaderSize] == 2)
    #expect(try BinaryStoreHeader.read(from: url).formatVersion == 1)

    let reopened = BinaryStore(url: url)
    try reopened.open(schema: ConformanceSchema.schema)
    #expect(try reopened.load().objects == objects)
    try reopened.compact()
    #expect(reopened.statistics.formatVersion == 2)
    reopened.close()
    let compacted = try fileBytes(url)
    let newHeader = try BinaryStoreHeader.read(from: url)
    #expect(newHeader.formatVersion == 2)
    #expect(
      compacted[newHeader.byteCount + BinaryFormat.frameHeaderSize]
        == BinaryFormat.RecordKind.snapshotInParts.rawValue)
    let upgraded = BinaryStore(url: url)
    try upgraded.open(schema: ConformanceSchema.schema)
    #expect(try upgraded.load().objects == objects)
    upgraded.close()
  }

  @Test func anotherSchemaIsRefusedSayingWhatDiffers() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    try writeFile(url, try validStoreBytes(in: directory))
    let before = try fileBytes(url)
    let error = try #require(throws: ObjectGraphError.self) {
      try BinaryStore(url: url).open(schema: ConformanceSchema.changedSchema)
    }
    #expect(error.code == .schemaMismatch)
    #expect(error.file == url && error.message.contains(url.path))
    #expect(error.message.contains("property title"), "\(error.message)")
    #expect(try fileBytes(url) == before)
  }

  @Test func theHeaderCanBeReadWithoutTheModel() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    try writeFile(url, try validStoreBytes(in: directory))
    let header = try BinaryStoreHeader.read(from: url)
    #expect(header.schema == ConformanceSchema.schema)
    #expect(header.formatVersion == 2)  // numbered by position
    let store = BinaryStore(url: url)
    try store.open(schema: header.schema)
    #expect(try store.load().objects.count == 5)
    #expect(store.statistics.formatVersion == 2)
    #expect(store.statistics.fileBytes == fileLength(url))
    store.close()
    try writeFile(url, Array("not a store".utf8))
    #expect(errorCode { _ = try BinaryStoreHeader.read(from: url) } == .corruptStore)
  }

  @Test func aMissingDirectoryIsAnIOErrorNamingTheFile() throws {
    let directory = try TemporaryDirectory()
    let url = directory.url.appendingPathComponent("missing/store")
    let error = try #require(throws: ObjectGraphError.self) {
      try BinaryStore(url: url).open(schema: ConformanceSchema.schema)
    }
    #expect(error.code == .io)
    #expect(error.message.contains("missing"))
  }

  private func validStoreBytes(in directory: TemporaryDirectory) throws -> [UInt8] {
    let url = directory.file("valid")
    let store = BinaryStore(url: url)
    try store.open(schema: ConformanceSchema.schema)
    try store.save(RecordedStore.standardScript[0])
    store.close()
    defer { try? FileManager.default.removeItem(at: url) }
    return try fileBytes(url)
  }
}
