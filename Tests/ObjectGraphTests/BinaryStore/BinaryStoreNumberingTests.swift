import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// Records name entities and properties by the numbers of the header's schema, which a
/// migration keeps: a file whose numbers are not positions (properties removed, reordered,
/// added) writes and reads every kind of record, and keeps its numbers through compaction.
@Suite struct BinaryStoreNumberingTests {
  /// The conformance schema as a file might number it after migrations: Item is entity 3
  /// (1 is Note, 2 and 4 retired), and its properties are numbered backwards with a retired
  /// number between each two (a run of 29 slots for 15 properties).
  static var numberedSchema: Schema {
    var schema = ConformanceSchema.schema
    schema.lastEntityNumber = 4
    schema.entities[ConformanceSchema.item].number = 3
    schema.entities[ConformanceSchema.note].number = 1
    let count = schema.entities[ConformanceSchema.item].properties.count
    for property in 0..<count {
      schema.entities[ConformanceSchema.item].properties[property].number =
        2 * (count - property) - 1
    }
    schema.entities[ConformanceSchema.item].lastPropertyNumber = 2 * count + 2
    return schema
  }

  /// Items whose titles and nicknames share prefixes, with dates, references and lists.
  static func items(_ numbers: ClosedRange<UInt64>) -> [ObjectSnapshot] {
    numbers.map { number in
      ConformanceSchema.item(
        number, title: "a shared title \(number)",
        parent: number > numbers.lowerBound ? number - 1 : nil,
        children: number < numbers.upperBound ? [number + 1] : [])
    } + [ConformanceSchema.note(numbers.upperBound + 1, text: "the note", item: numbers.lowerBound)]
  }

  @Test func theNumberingTakesTheHeadersNumbers() throws {
    let numbering = try FileNumbering(Self.numberedSchema)
    #expect(!numbering.isPositional)
    #expect(numbering.entityPosition(slot: 2) == ConformanceSchema.item)
    #expect(numbering.entityPosition(slot: 0) == ConformanceSchema.note)
    #expect(numbering.entityPosition(slot: 1) == nil, "a retired entity number")
    #expect(numbering.entityPosition(slot: 3) == nil)
    let item = numbering.entities[ConformanceSchema.item]
    #expect(item.runLength == 29, "up to the highest number a property has")
    #expect(item.positionByRunSlot[28] == 0 && item.positionByRunSlot[0] == 14)
    #expect(item.positionByRunSlot[1] == -1, "a hole")
    #expect(numbering.entities[ConformanceSchema.note].isPositional)
    #expect(try FileNumbering(ConformanceSchema.schema).isPositional)
  }

  @Test(arguments: [false, true])
  func everyKindOfRecordRoundTripsByNumber(defersStrings: Bool) throws {
    let numbering = try FileNumbering(Self.numberedSchema)
    let objects = Self.items(1...40)
    for inParts in [false, true] {
      let record = try RecordWriter.encodeSnapshot(
        objects, nextObjectNumber: 100, numbering: numbering, inParts: inParts, partCount: 3)
      let decoded = try Self.decode(record.bytes, numbering: numbering, defersStrings)
      guard case .snapshot(let packed, let next) = decoded.record else {
        Issue.record("not a snapshot")
        continue
      }
      #expect(packed.snapshots == objects)
      #expect(next == 100)
      // The relationship values are noted at their positions, not their numbers, in a run
      // for each part decoded on its own.
      let toOnes = decoded.relations.flatMap(\.toOnes)
      let lists = decoded.relations.flatMap(\.lists)
      let parents = toOnes.filter { $0.id.rawValue <= 40 }
      #expect(parents.count == 39)
      #expect(parents.allSatisfy { $0.property == Int32(ConformanceSchema.parent) })
      #expect(lists.allSatisfy { $0.property == Int32(ConformanceSchema.children) })
      #expect(Set(toOnes.map(\.id)).count == toOnes.count, "each object's noted once")
      #expect(lists.map(\.id.rawValue) == Array(1...39), "in order, part after part")
    }
    let changeset = Changeset(
      inserted: Self.items(50...53),
      updated: [
        ObjectUpdate(
          id: ObjectID(rawValue: 2), entity: ConformanceSchema.item,
          changes: [
            PropertyChange(property: ConformanceSchema.title, kind: .set(.string("a shared t"))),
            PropertyChange(
              property: ConformanceSchema.children,
              kind: .edit([.insert(ObjectID(rawValue: 7), at: 0), .move(from: 0, to: 1)])),
          ]),
        ObjectUpdate(
          id: ObjectID(rawValue: 41), entity: ConformanceSchema.note,
          changes: [PropertyChange(property: 0, kind: .set(.string("edited")))]),
      ],
      deleted: [ObjectID(rawValue: 5)], nextObjectNumber: 60)
    let record = try RecordWriter.encode(changeset, numbering: numbering)
    let decoded = try Self.decode(record.bytes, numbering: numbering, defersStrings)
    guard case .changeset(let read) = decoded.record else {
      Issue.record("not a changeset")
      return
    }
    #expect(read == changeset)
  }

  @Test func aRecordIsNotReadByPosition() throws {
    let record = try RecordWriter.encodeSnapshot(
      Self.items(1...3), nextObjectNumber: 10, numbering: try FileNumbering(Self.numberedSchema))
    let positional = try FileNumbering(ConformanceSchema.schema)
    let bytes = record.bytes
    #expect(throws: FormatError.self) {
      try Self.decode(bytes, numbering: positional, false)
    }
  }

  /// The largest entity number a record can hold is damage, named, not an overflow.
  @Test func anEntityNumberOutOfRangeIsDamage() throws {
    let numbering = try FileNumbering(Self.numberedSchema)
    // A snapshot of one object of entity slot Int.max, with no values.
    var snapshot = ByteWriter()
    snapshot.write(BinaryFormat.RecordKind.snapshot.rawValue)
    for field in [2, 1] { snapshot.writeVarint(UInt64(field)) }  // next number, count
    snapshot.writeDelta(1, from: 0)
    snapshot.writeInt(Int.max)
    snapshot.writeVarint(0)
    #expect(throws: FormatError.self) {
      try snapshot.withBytes { try RecordReader.decode($0, at: 0, numbering: numbering) }
    }
    let update = try RecordWriter.encode(
      Changeset(
        updated: [ObjectUpdate(id: ObjectID(rawValue: 1), entity: Int.max, changes: [])],
        nextObjectNumber: 2), numbering: .positional)
    let bytes = update.bytes
    #expect(throws: FormatError.self) { try Self.decode(bytes, numbering: numbering, false) }
  }

  @Test func aNumberedStoreSavesCompactsAndReopens() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("numbered.ogstore")
    try writeFile(url, try BinaryStoreHeader.encode(schema: Self.numberedSchema))
    var expected = Self.items(1...30)
    let store = BinaryStore(url: url)
    try store.open(schema: ConformanceSchema.schema)  // the model's schema has no numbers
    try store.save(Changeset(inserted: expected, nextObjectNumber: 40))
    try store.save(
      ConformanceSchema.update(
        3, property: ConformanceSchema.nickname, .set(.string("renamed")), nextObjectNumber: 40))
    expected[2].values[ConformanceSchema.nickname] = .string("renamed")
    try store.save(Changeset(inserted: Self.items(41...41), nextObjectNumber: 50))
    expected += Self.items(41...41)
    #expect(store.statistics.formatVersion == 3)
    store.close()

    for round in 0..<2 {
      let reopened = BinaryStore(url: url)
      try reopened.open(schema: ConformanceSchema.schema)
      #expect(try reopened.load().objects.sorted { $0.id < $1.id } == expected, "round \(round)")
      try reopened.compact()
      reopened.close()
      let header = try BinaryStoreHeader.read(from: url)
      #expect(header.formatVersion == 3)
      #expect(header.schema == Self.numberedSchema, "compaction keeps the numbers")
    }
  }

  @Test func aHeaderGivingANumberTwiceIsDamageNamedAtTheSchema() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("twice.ogstore")
    var schema = Self.numberedSchema
    schema.entities[ConformanceSchema.item].properties[1].number = 1
    try writeFile(url, try BinaryStoreHeader.encode(schema: schema))
    let error = try #require(throws: ObjectGraphError.self) {
      try BinaryStore(url: url).open(schema: ConformanceSchema.schema)
    }
    #expect(error.code == .corruptStore)
    #expect(error.message.contains("property Item.children the number 1"), "\(error.message)")
    #expect(error.message.contains("byte offset \(BinaryFormat.headerPrefixSize)"))
  }

  @Test func aStoreNeverMigratedKeepsFormatVersion2AndPositions() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("plain.ogstore")
    let store = BinaryStore(url: url)
    try store.open(schema: ConformanceSchema.schema)
    try store.save(Changeset(inserted: Self.items(1...3), nextObjectNumber: 10))
    store.close()
    let header = try BinaryStoreHeader.read(from: url)
    #expect(header.formatVersion == 2)
    #expect(!header.schema.hasNumbers)
  }

  @Test func aMigratedSchemaKeepsNumbersAndNeverGivesARetiredOneAgain() throws {
    let stored = Self.numberedSchema
    // Item loses its first property (number 29) and gains one at the front; Note is
    // removed, and an entity added.
    var target = ConformanceSchema.schema
    target.entities[ConformanceSchema.item].properties[0].name = "added"
    target.entities.remove(at: ConformanceSchema.note)
    target.entities.append(EntityDescription(name: "Tag", properties: []))
    let count = stored.entities[ConformanceSchema.item].properties.count
    let numbered = target.numbered(
      after: stored,
      origins: [
        Schema.NumberOrigin(
          entity: ConformanceSchema.item, properties: [nil] + (1..<count).map { $0 }),
        nil,
      ])
    let item = numbered.entities[0]
    #expect(item.number == 3)
    #expect(item.properties[0].number == 2 * count + 3, "after the last number ever given")
    #expect(item.properties[1].number == 2 * count - 3, "kept")
    #expect(item.lastPropertyNumber == 2 * count + 3)
    #expect(numbered.entities[1].number == 5, "Note's 1 and the retired 2 and 4 stay unused")
    #expect(numbered.lastEntityNumber == 5)
    #expect(numbered.matches(stored: target))
    // Numbers that are positions are left out.
    let plain = ConformanceSchema.schema.numbered(
      after: ConformanceSchema.schema,
      origins: ConformanceSchema.schema.entities.indices.map { entity in
        Schema.NumberOrigin(
          entity: entity,
          properties: ConformanceSchema.schema.entities[entity].properties.indices.map { $0 })
      })
    #expect(!plain.hasNumbers)
  }

  @Test func aMigrationKeepsTheNumberOfEveryPropertyItKeeps() throws {
    let store = try VersionedStore(.binary)
    try MigrationTests.fillLibrary(store)
    let before = try BinaryStoreHeader.read(from: store.url).schema
    try store.open(LibraryV2.types) { _ in }
    let header = try BinaryStoreHeader.read(from: store.url)
    #expect(header.formatVersion == 3)
    let oldBook = before.entities[before.entityIndex(named: "Book")!]
    let book = header.schema.entities[header.schema.entityIndex(named: "Book")!]
    #expect(book.number == nil || book.number == before.entityIndex(named: "Book")! + 1)
    for (position, property) in book.properties.enumerated() {
      let number = property.number ?? position + 1
      if let old = oldBook.propertyIndex(named: property.originalName ?? property.name) {
        #expect(number == old + 1, "\(property.name) keeps its number")
      } else {
        #expect(number > oldBook.properties.count, "\(property.name) takes a new number")
      }
    }
    let reader = header.schema.entities[header.schema.entityIndex(named: "Reader")!]
    #expect(reader.number == before.entities.count + 1, "Sticker's number stays retired")
    let names = try store.open(LibraryV2.types) { context in
      try context.fetch(FetchDescriptor<LibraryV2.Book>(sortBy: [SortDescriptor(\.pages)]))
        .map(\.name)
    }
    #expect(names == (0..<30).map { "book \($0)" })
  }

  /// An entity of string attributes named `names`, numbered `numbers`, up to `last`.
  private static func notes(
    _ names: [String], numbers: [Int], last: Int, absent: [String: PersistentValue] = [:]
  ) -> Schema {
    var properties = names.map { name in
      PropertyDescription(
        name: name,
        kind: .attribute(
          AttributeDescription(type: .string, isOptional: true, isUnique: false, isIndexed: false)
        ))
    }
    for index in properties.indices {
      properties[index].number = numbers[index]
      properties[index].absentValue = absent[names[index]].map(RecordWriter.encodedValue)
    }
    var entity = EntityDescription(name: "Note", properties: properties)
    entity.lastPropertyNumber = last
    return Schema(entities: [entity])
  }

  @Test func recordsOfAnEarlierNumberingReadWithAbsentValuesAndHoles() throws {
    let old = try FileNumbering(Self.notes(["a", "b", "c"], numbers: [1, 2, 3], last: 3))
    let snapshot = try Self.abcSnapshot(numbering: old)
    let update = try RecordWriter.encode(
      Changeset(
        updated: [
          ObjectUpdate(
            id: ObjectID(rawValue: 2), entity: 0,
            changes: [
              PropertyChange(property: 1, kind: .set(.string("b changed"))),
              PropertyChange(property: 2, kind: .set(.string("c changed"))),
            ])
        ], nextObjectNumber: 10), numbering: old)
    // b removed, d added (absent: "none"), c moved before a: the old runs are shorter.
    let added = try FileNumbering(
      Self.notes(["c", "a", "d"], numbers: [3, 1, 4], last: 4, absent: ["d": .string("none")]))
    // b and c removed: the old runs are longer than the entity's.
    let trimmed = try FileNumbering(Self.notes(["a"], numbers: [1], last: 3))
    for defersStrings in [false, true] {
      #expect(
        try Self.snapshotValues(snapshot, numbering: added, defersStrings)
          == (1...4).map { [.string("c\($0)"), .string("a\($0)"), .string("none")] })
      #expect(
        try Self.snapshotValues(snapshot, numbering: trimmed, defersStrings)
          == (1...4).map { [.string("a\($0)")] })
    }
    guard
      case .changeset(let changes) = try Self.decode(update.bytes, numbering: added, false)
        .record
    else {
      Issue.record("not a changeset")
      return
    }
    #expect(
      changes.updated.map(\.changes) == [
        [PropertyChange(property: 0, kind: .set(.string("c changed")))]
      ],
      "the change of the removed b is dropped")
    // A run shorter than the properties without an absent value is damage.
    let required = try FileNumbering(Self.notes(["a", "d"], numbers: [1, 4], last: 4))
    #expect(throws: FormatError.self) { try Self.decode(snapshot, numbering: required, false) }
  }

  @Test func aRunInOrderOfPositionIsReadStraightIntoPlace() throws {
    let old = try FileNumbering(Self.notes(["a", "b", "c"], numbers: [1, 2, 3], last: 3))
    let snapshot = try Self.abcSnapshot(numbering: old)
    // c removed, d added between a and b: the old runs hold a and b in order, with a hole.
    let added = try FileNumbering(
      Self.notes(["a", "d", "b"], numbers: [1, 4, 2], last: 4, absent: ["d": .string("none")]))
    #expect(added.entities[0].orderedRun == 3, "d's slot comes after b's")
    // c moved before a: a run that holds it is read in number order, then placed.
    let moved = try FileNumbering(
      Self.notes(["c", "a", "b"], numbers: [3, 1, 2], last: 3))
    #expect(moved.entities[0].orderedRun == 2)
    #expect(old.entities[0].orderedRun == 3)
    for defersStrings in [false, true] {
      #expect(
        try Self.snapshotValues(snapshot, numbering: added, defersStrings)
          == (1...4).map { [.string("a\($0)"), .string("none"), .string("b\($0)")] })
      #expect(
        try Self.snapshotValues(snapshot, numbering: moved, defersStrings)
          == (1...4).map { [.string("c\($0)"), .string("a\($0)"), .string("b\($0)")] })
    }
  }

  /// The bytes of a snapshot of four notes with strings `a`, `b` and `c`, written with
  /// `numbering`.
  private static func abcSnapshot(numbering: FileNumbering) throws -> [UInt8] {
    let objects = (1...4).map { number in
      ObjectSnapshot(
        id: ObjectID(rawValue: UInt64(number)), entity: 0,
        values: [.string("a\(number)"), .string("b\(number)"), .string("c\(number)")])
    }
    return try RecordWriter.encodeSnapshot(
      objects, nextObjectNumber: 10, numbering: numbering, inParts: false
    ).bytes
  }

  /// The values of each object of the snapshot record `bytes`, read with `numbering`.
  private static func snapshotValues(
    _ bytes: [UInt8], numbering: FileNumbering, _ defersStrings: Bool
  ) throws -> [[PersistentValue]] {
    guard
      case .snapshot(let packed, _) = try decode(bytes, numbering: numbering, defersStrings).record
    else {
      Issue.record("not a snapshot")
      return []
    }
    return packed.snapshots.map(\.values)
  }

  private static func decode(
    _ bytes: [UInt8], numbering: FileNumbering, _ defersStrings: Bool
  ) throws -> RecordReader.Decoded {
    let payload = Array(bytes[BinaryFormat.frameHeaderSize..<(bytes.count - 4)])
    return try payload.withUnsafeBytes { payload in
      try RecordReader.decode(
        payload, at: 0, numbering: numbering, defersStrings: defersStrings)
    }
  }
}
