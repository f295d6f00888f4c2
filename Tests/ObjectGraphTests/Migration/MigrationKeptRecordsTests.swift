import Foundation
import Testing

@testable import ObjectGraph

/// A lightweight migration that keeps every stored value (renames, widenings, removals, and
/// added properties that start with one value) leaves a file store's records as they are:
/// the new file is the new header, whose numbers read the old records as the migrated
/// contents, then the old records byte for byte.
@Suite struct MigrationKeptRecordsTests {
  /// A library of the first version, then a session that changes what the next version
  /// removes (a set of `obsolete`, a sticker appended), renames, widens and deletes.
  static func fillAndEdit(_ store: VersionedStore) throws {
    try MigrationTests.fillLibrary(store)
    try store.open(LibraryV1.types) { context in
      let books = try context.fetch(
        FetchDescriptor<LibraryV1.Book>(sortBy: [SortDescriptor(\.pages)]))
      books[1].obsolete = "changed"
      books[1].title = "book 1 renamed"
      let sticker = LibraryV1.Sticker()
      sticker.label = "new"
      books[2].stickers.append(sticker)
      books[2].pages = 999
      context.delete(books[3])
      try context.save()
    }
  }

  /// What every version after the migration must read: by name, pages, subtitle, shelf.
  static let expected: [String: (pages: Int64, subtitle: String?, shelf: String)] = {
    var books: [String: (pages: Int64, subtitle: String?, shelf: String)] = [:]
    for number in 0..<30 where number != 3 {
      let name = number == 1 ? "book 1 renamed" : "book \(number)"
      books[name] = (
        number == 2 ? 999 : Int64(100 + number),
        number.isMultiple(of: 3) ? nil : "sub \(number)", "shelf \(number % 3)"
      )
    }
    return books
  }()

  static func contents(_ store: VersionedStore) throws -> [String: String] {
    try store.open(LibraryKept.types) { context in
      var found: [String: String] = [:]
      for book in try context.fetch(FetchDescriptor<LibraryKept.Book>()) {
        found[book.name] =
          "\(book.pages) \(book.subtitle ?? "-") \(book.location?.name ?? "-") "
          + "\(book.edition) \(book.note ?? "-") \(book.rating) \(book.summary)"
      }
      return found
    }
  }

  static var expectedContents: [String: String] {
    var found: [String: String] = [:]
    for (name, book) in expected {
      let number = Int(name.split(separator: " ")[1])!
      found[name] =
        "\(book.pages) \(book.subtitle ?? "-") \(book.shelf) 1 - "
        + "\(Double(Float(100 + number) / 4)) about book \(number)"
    }
    return found
  }

  @Test(arguments: StoreKind.allCases)
  func theMigratedLibraryReadsTheSameWhetherRecordsAreKeptOrNot(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try Self.fillAndEdit(store)
    let order = try MigrationTests.shelfOrder(store)
    #expect(try Self.contents(store) == Self.expectedContents)
    let shelves = try store.open(LibraryKept.types) { context in
      Dictionary(
        uniqueKeysWithValues: try context.fetch(FetchDescriptor<LibraryKept.Shelf>()).map {
          ($0.name, $0.books.map(\.name))
        })
    }
    #expect(shelves == order.mapValues { $0.map { $0 == "book 1" ? "book 1 renamed" : $0 } })
    // The new version saves, and what it saved reads back after reopening.
    try store.open(LibraryKept.types) { context in
      let books = try context.fetch(FetchDescriptor<LibraryKept.Book>())
      books.first { $0.name == "book 5" }!.note = "noted"
      books.first { $0.name == "book 6" }!.edition = 2
      try context.save()
    }
    var expected = Self.expectedContents
    expected["book 5"] = expected["book 5"]!.replacingOccurrences(of: " 1 - ", with: " 1 noted ")
    expected["book 6"] = expected["book 6"]!.replacingOccurrences(of: " 1 - ", with: " 2 - ")
    #expect(try Self.contents(store) == expected)
    guard kind == .binary else { return }
    let compacting = BinaryStore(url: store.url)
    try compacting.open(schema: try BinaryStoreHeader.read(from: store.url).schema)
    try compacting.compact()
    compacting.close()
    #expect(try Self.contents(store) == expected, "compaction writes whole runs")
  }

  @Test func theBinaryStoreKeepsTheOldRecordsByteForByte() throws {
    let store = try VersionedStore(.binary)
    try Self.fillAndEdit(store)
    let old = try fileBytes(store.url)
    let oldHeader = try BinaryStoreHeader.read(from: store.url)
    try store.open(LibraryKept.types) { _ in }
    let new = try fileBytes(store.url)
    let newHeader = try BinaryStoreHeader.read(from: store.url)
    #expect(newHeader.formatVersion == 3)
    #expect(
      new[newHeader.byteCount...].elementsEqual(old[oldHeader.byteCount...]),
      "the records are the old file's")
    let book = newHeader.schema.entities[newHeader.schema.entityIndex(named: "Book")!]
    let edition = book.properties[book.propertyIndex(named: "edition")!]
    #expect(edition.absentValue.map { try? RecordReader.decodeValue($0, at: 0) } == .int(1))
    #expect(book.properties[book.propertyIndex(named: "note")!].absentValue != nil)
    #expect(book.properties[book.propertyIndex(named: "name")!].absentValue == nil)
    #expect(try Self.contents(store) == Self.expectedContents)
  }

  @Test func aChangeOfStoredValuesRewritesTheFile() throws {
    // `subtitle` becomes required with a default: a stored nil becomes "none".
    let store = try VersionedStore(.binary)
    try MigrationTests.fillLibrary(store)
    let subtitles = try store.open(LibrarySubtitleDefaulted.types) { context in
      Set(try context.fetch(FetchDescriptor<LibrarySubtitleDefaulted.Book>()).map(\.subtitle))
    }
    #expect(subtitles.contains("none") && subtitles.contains("sub 1"))
    let header = try BinaryStoreHeader.read(from: store.url)
    let book = header.schema.entities[header.schema.entityIndex(named: "Book")!]
    #expect(book.properties.allSatisfy { $0.absentValue == nil })
    let bytes = try fileBytes(store.url)
    #expect(
      bytes[header.byteCount + BinaryFormat.frameHeaderSize]
        == BinaryFormat.RecordKind.snapshotInParts.rawValue, "one new snapshot")
  }

  @Test(arguments: MigrationSafetyTests.steps)
  func keepingRecordsFailingAtAStepLeavesTheOldStoreWhole(_ failing: StoreIOProbe.Operation)
    throws
  {
    let store = try VersionedStore(.binary)
    try Self.fillAndEdit(store)
    let before = try fileBytes(store.url)
    let probe = StoreIOProbe()
    probe.failNext(failing)
    let error = try #require(throws: ObjectGraphError.self) {
      try store.open(LibraryKept.types, probe: probe) { _ in }
    }
    #expect(error.code == .io && error.file == store.url, "\(error)")
    #expect(try fileBytes(store.url) == before, "the old file is untouched")
    #expect(!store.directory.fileNames.contains("library.ogstore.partial"))
    #expect(try Self.contents(store) == Self.expectedContents, "it migrates when the disk works")
  }
}
