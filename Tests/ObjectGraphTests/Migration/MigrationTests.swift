import Foundation
import Testing

@testable import ObjectGraph

/// A store that outlives containers of different versions of the models: a file, or one
/// in-memory store that each container opens in turn.
struct VersionedStore {
  let kind: StoreKind
  let directory: TemporaryDirectory
  let memory = InMemoryStore()

  init(_ kind: StoreKind) throws {
    self.kind = kind
    directory = try TemporaryDirectory()
  }

  var url: URL { directory.file("library.ogstore") }
  var backupURL: URL { directory.file("library.ogstore.pre-migration") }

  func store(probe: StoreIOProbe? = nil) -> any PersistentStore {
    kind == .memory ? memory : BinaryStore(url: url, options: .standard, probe: probe)
  }

  /// Runs `body` with a context of a container of `types` over the store, then closes it.
  @discardableResult
  func open<Result>(
    _ types: [ManagedObject.Type], plan: (any SchemaMigrationPlan.Type)? = nil,
    probe: StoreIOProbe? = nil, _ body: (ObjectContext) throws -> Result
  ) throws -> Result {
    let container = try ObjectContainer(
      for: types, migrationPlan: plan, store: store(probe: probe))
    defer { container.close() }
    return try body(try container.newContext())
  }
}

/// Stores opened with changed models: the lightweight rules, plans with custom stages,
/// refusals that leave the store as it was, and failures at every step of the file's
/// replacement.
@Suite struct MigrationTests {
  /// Fills a library of the first version: three shelves of books, in a set order.
  static func fillLibrary(_ store: VersionedStore) throws {
    try store.open(LibraryV1.types) { context in
      let shelves = (0..<3).map { number in
        let shelf = LibraryV1.Shelf()
        shelf.name = "shelf \(number)"
        context.insert(shelf)
        return shelf
      }
      for number in 0..<30 {
        let book = LibraryV1.Book(
          "book \(number)", isbn: "isbn-\(number)", pages: Int32(100 + number),
          subtitle: number.isMultiple(of: 3) ? nil : "sub \(number)")
        shelves[number % 3].books.insert(
          book, at: number % 2 == 0 ? 0 : shelves[number % 3].books.count)
        let sticker = LibraryV1.Sticker()
        sticker.label = "sticker \(number)"
        book.stickers.append(sticker)
      }
      try context.save()
    }
  }

  /// The books of each shelf as the first version saved them, by title.
  static func shelfOrder(_ store: VersionedStore) throws -> [String: [String]] {
    try store.open(LibraryV1.types) { context in
      Dictionary(
        uniqueKeysWithValues: try context.fetch(FetchDescriptor<LibraryV1.Shelf>()).map {
          ($0.name, $0.books.map(\.title))
        })
    }
  }

  @Test(arguments: StoreKind.allCases)
  func everyInferredChangeKeepsTheData(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try Self.fillLibrary(store)
    let order = try Self.shelfOrder(store)
    try store.open(LibraryV2.types) { context in
      let books = try context.fetch(
        FetchDescriptor<LibraryV2.Book>(sortBy: [SortDescriptor(\.pages)]))
      #expect(books.count == 30)
      for (number, book) in books.enumerated() {
        #expect(book.name == "book \(number)", "renamed from title")
        #expect(book.pages == Int64(100 + number), "widened from Int32")
        #expect(book.rating == Double(Float(100 + number) / 4), "widened from Float")
        #expect(
          book.subtitle == (number.isMultiple(of: 3) ? "none" : "sub \(number)"),
          "made required: a stored nil becomes the default")
        #expect(book.summary == "about book \(number)", "made optional")
        #expect(book.shelfMark == "S-book \(number)", "its index dropped")
        #expect(book.edition == 1, "added with a default")
        #expect(book.note == nil, "added, optional")
        #expect(book.readers.isEmpty, "a relationship added")
        #expect(book.location?.name == "shelf \(number % 3)", "renamed from shelf")
      }
      let shelves = try context.fetch(FetchDescriptor<LibraryV2.Shelf>())
      #expect(
        Dictionary(uniqueKeysWithValues: shelves.map { ($0.name, $0.books.map(\.name)) }) == order,
        "every list keeps its order")
      // The new flags work: the unique isbn is checked, the indexed name answers.
      let clash = LibraryV2.Book()
      clash.isbn = "isbn-4"
      context.insert(clash)
      #expect(throws: ObjectGraphError.self) { try context.save() }
      context.rollback()
      let named = try context.fetchCount(
        FetchDescriptor<LibraryV2.Shelf>(predicate: #Predicate { $0.name == "shelf 1" }))
      #expect(named == 1)
      // `.unique` removed: two shelves may share a name now.
      let twin = LibraryV2.Shelf()
      twin.name = "shelf 2"
      context.insert(twin)
      try context.save()
      context.delete(twin)
      // The changed delete rule: deleting a shelf deletes its books now.
      context.delete(shelves.first { $0.name == "shelf 0" }!)
      try context.save()
      #expect(try context.fetchCount(FetchDescriptor<LibraryV2.Book>()) == 20)
      // The added entity and relationship are usable.
      let reader = LibraryV2.Reader()
      reader.name = "Ada"
      context.insert(reader)
      reader.books.append(books[1])
      try context.save()
    }
    // Reopened without migrating again, with what the new version saved.
    try store.open(LibraryV2.types) { context in
      let readers = try context.fetch(FetchDescriptor<LibraryV2.Reader>())
      #expect(readers.first?.books.map(\.name) == ["book 1"])
      let count = try context.fetchCount(FetchDescriptor<LibraryV2.Book>())
      #expect(count == 20)
    }
    if kind == .binary {
      #expect(
        !FileManager.default.fileExists(atPath: store.backupURL.path),
        "the old file goes once the migrated store opened again")
    }
  }

  @Test(arguments: StoreKind.allCases)
  func aChangeNotInferredIsRefusedNamingEachAndChangesNothing(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try Self.fillLibrary(store)
    let before = kind == .binary ? try fileBytes(store.url) : []
    let error = try #require(throws: ObjectGraphError.self) {
      try store.open([
        LibraryRefused.Book.self, LibraryRefused.Shelf.self, LibraryRefused.Sticker.self,
      ]) { _ in }
    }
    #expect(error.code == .migrationFailed)
    #expect(error.entity == "Book" && error.property == "pages")
    #expect(error.message.contains("entity Book: pages was int32, is string"))
    #expect(error.message.contains("entity Shelf: books was a to-many relationship, is a to-one"))
    #expect(error.message.contains("custom stage"))
    if kind == .binary {
      #expect(error.file == store.url && error.message.contains(store.url.path))
      #expect(try fileBytes(store.url) == before, "the store is untouched")
      #expect(store.directory.fileNames == ["library.ogstore"])
    }
    #expect(try Self.shelfOrder(store).count == 3, "the old models still open it")
  }

  @Test(arguments: StoreKind.allCases)
  func storedValuesThatDoNotFitAreRefusedNamingTheObjects(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try Self.fillLibrary(store)
    // A required attribute with no default cannot be inferred at all.
    let added = try #require(throws: ObjectGraphError.self) {
      try store.open(LibraryRequiredAdded.types) { _ in }
    }
    #expect(added.code == .migrationFailed && added.property == "author")
    #expect(added.message.contains("no default value"))
    // Made required with no default: the stored nils are named.
    let required = try #require(throws: ObjectGraphError.self) {
      try store.open(LibrarySubtitleRequired.types) { _ in }
    }
    #expect(required.code == .migrationFailed && required.property == "subtitle")
    #expect(required.objectID != nil && required.message.contains("holds nil"))
    // Two books with one isbn: unique cannot be added.
    try store.open(LibraryV1.types) { context in
      let books = try context.fetch(
        FetchDescriptor<LibraryV1.Book>(sortBy: [SortDescriptor(\.pages)]))
      books[7].isbn = "isbn-3"
      try context.save()
    }
    let repeated = try #require(throws: ObjectGraphError.self) {
      try store.open(LibraryV2.types) { _ in }
    }
    #expect(repeated.code == .migrationFailed && repeated.property == "isbn")
    #expect(repeated.message.contains("both hold \"isbn-3\""))
    // Nothing changed: the old models open it, and once the repeat is fixed it migrates.
    try store.open(LibraryV1.types) { context in
      let books = try context.fetch(
        FetchDescriptor<LibraryV1.Book>(sortBy: [SortDescriptor(\.pages)]))
      #expect(books.count == 30 && books[7].isbn == "isbn-3")
      books[7].isbn = "isbn-7"
      try context.save()
    }
    let migrated = try store.open(LibraryV2.types) { context in
      try context.fetchCount(FetchDescriptor<LibraryV2.Book>())
    }
    #expect(migrated == 30)
  }

  /// Strings the store left as bytes move with their values when the order of properties
  /// changes (and are written again from their bytes), in a small store and a larger one;
  /// a string changed by a later save (whose bytes in the snapshot are stale) keeps its new
  /// value.
  @Test(arguments: StoreKind.allCases, [500, 20_000])
  func propertiesInAnotherOrderKeepTheirValues(_ kind: StoreKind, count: Int) throws {
    let store = try VersionedStore(kind)
    try store.open([LabelsV1.Label.self]) { context in
      for number in 0..<count {
        let label = LabelsV1.Label()
        label.front = "front \(number)"
        label.back =
          number.isMultiple(of: 7)
          ? "" : "back \(number) " + String(repeating: "x", count: number % 40)
        context.insert(label)
      }
      try context.save()
    }
    try store.open([LabelsV1.Label.self]) { context in
      for label in try context.fetch(FetchDescriptor<LabelsV1.Label>()) {
        let number = Int(label.front.dropFirst("front ".count))!
        if number.isMultiple(of: 5) { label.back = "changed \(number)" }
      }
      try context.save()
    }
    for _ in 0..<2 {  // migrated, then reopened from the migrated file
      let labels = try store.open([LabelsV2.Label.self]) { context in
        try context.fetch(FetchDescriptor<LabelsV2.Label>()).map { [$0.front, $0.middle, $0.back] }
      }
      #expect(labels.count == count)
      #expect(Set(labels.map(\.[0])).count == count)
      for label in labels {
        let number = Int(label[0].dropFirst("front ".count))!
        #expect(label[1] == "-")
        let back =
          number.isMultiple(of: 5)
          ? "changed \(number)"
          : number.isMultiple(of: 7)
            ? "" : "back \(number) " + String(repeating: "x", count: number % 40)
        #expect(label[2] == back)
      }
    }
  }

  @Test func wideningRulesAreTheStoredOnes() {
    typealias Inference = LightweightMigration
    let widens: [(AttributeType, AttributeType)] = [
      (.int8, .int16), (.int16, .int32), (.int32, .int64), (.int32, .int), (.int, .int64),
      (.uint8, .uint16), (.uint32, .uint64), (.uint16, .int32), (.uint32, .int64),
      (.float, .double),
    ]
    let narrows: [(AttributeType, AttributeType)] = [
      (.int64, .int32), (.int16, .int8), (.int32, .uint64), (.uint64, .int64), (.double, .float),
      (.int, .double), (.string, .int),
    ]
    for (old, new) in widens {
      #expect(schemaChange(old, new) == nil, "\(old) to \(new)")
    }
    for (old, new) in narrows {
      #expect(schemaChange(old, new)?.contains("only a number widened") == true, "\(old) to \(new)")
    }
  }

  /// The inference's complaint about an attribute changing from `old` to `new`, if any.
  private func schemaChange(_ old: AttributeType, _ new: AttributeType) -> String? {
    func schema(_ type: AttributeType) -> Schema {
      Schema(entities: [
        EntityDescription(
          name: "Reading",
          properties: [
            PropertyDescription(
              name: "value",
              kind: .attribute(
                AttributeDescription(
                  type: type, isOptional: false, isUnique: false, isIndexed: false)))
          ])
      ])
    }
    do {
      _ = try LightweightMigration(from: schema(old), to: schema(new), models: nil)
      return nil
    } catch {
      return (error as? ObjectGraphError)?.message
    }
  }
}
