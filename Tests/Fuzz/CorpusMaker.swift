// The seed corpus: small valid stores with the fuzz models (`--make-corpus DIR`).

import Foundation

/// Writes the seed stores into `directory`, one file per story, replacing files of the same
/// name.
func makeCorpus(in directory: URL) throws {
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  let work = FileManager.default.temporaryDirectory.appendingPathComponent(
    "objectgraph-corpus-\(getpid())", isDirectory: true)
  try? FileManager.default.removeItem(at: work)
  try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: work) }

  for story in CorpusStory.allCases {
    let url = work.appendingPathComponent("\(story.rawValue).ogstore")
    var options = BinaryStoreOptions()
    options.synchronizesSaves = false
    // With room, the file is copied while open, before closing cuts the room off.
    options.reservedRoom = story.keepsRoom ? 1024 : 0
    if story == .numbered {
      // A migrated store's header: records name entities and properties by number.
      try Data(try BinaryStoreHeader.encode(schema: try numberedFuzzSchema())).write(to: url)
    }
    let store = BinaryStore(url: url, options: options, probe: nil)
    let container = try ObjectContainer(for: fuzzModels, store: store)
    try MainActor.assumeIsolated {
      try story.run(container.mainContext, store: store)
    }
    // No `.ogstore` extension: the repository ignores store files.
    let destination = directory.appendingPathComponent(story.rawValue)
    try? FileManager.default.removeItem(at: destination)
    if story.keepsRoom { try FileManager.default.copyItem(at: url, to: destination) }
    container.close()
    if !story.keepsRoom { try FileManager.default.copyItem(at: url, to: destination) }
    if story == .tornTail {
      // A crash in the middle of the last save: its record cut short.
      let bytes = try Data(contentsOf: destination)
      try bytes.dropLast(7).write(to: destination)
    }
    let size = try FileManager.default.attributesOfItem(atPath: destination.path)[.size]
    print("\(destination.path): \(size.map { "\($0)" } ?? "?") bytes")
  }
  let kept = directory.appendingPathComponent("10-records-kept-by-a-migration")
  try writeKeptRecordsSeed(
    from: directory.appendingPathComponent(CorpusStory.firstSave.rawValue), to: kept)
  print("\(kept.path): written")
}

/// A store as a migration that kept its records leaves it: its snapshot was written before
/// FuzzRecord's `optionalString` was added (each record's run one value shorter, a hole
/// where the property was first), and the header numbers the property after every other,
/// its absent value `nil`.
private func writeKeptRecordsSeed(from source: URL, to destination: URL) throws {
  let reader = try BinaryStoreReader(url: source)
  defer { reader.close() }
  let contents = try reader.replay().contents
  var (schema, _) = try ObjectContainer.schema(for: fuzzModels)
  let entity = schema.entityIndex(named: "FuzzRecord")!
  let added = schema.entities[entity].propertyIndex(named: "optionalString")!
  let count = schema.entities[entity].properties.count
  for property in 0..<count {
    schema.entities[entity].properties[property].number = property + 1
  }
  var old = schema
  old.entities[entity].properties.remove(at: added)
  old.entities[entity].lastPropertyNumber = count
  schema.entities[entity].properties[added].number = count + 1
  schema.entities[entity].properties[added].absentValue = RecordWriter.encodedValue(.null)
  schema.entities[entity].lastPropertyNumber = count + 1
  let objects = contents.objects.map { object in
    var object = object
    if object.entity == entity { object.values.remove(at: added) }
    return object
  }
  let record = try RecordWriter.encodeSnapshot(
    objects, nextObjectNumber: contents.nextObjectNumber, numbering: try FileNumbering(old),
    inParts: false)
  try Data(try BinaryStoreHeader.encode(schema: schema) + record.bytes).write(to: destination)
}

/// The fuzz models' schema numbered as a migration might leave it: entities in reverse
/// order after a retired number, each entity's properties in reverse order with a retired
/// number between each two (holes in every run).
private func numberedFuzzSchema() throws -> Schema {
  var (schema, _) = try ObjectContainer.schema(for: fuzzModels)
  let entityCount = schema.entities.count
  schema.lastEntityNumber = entityCount + 1
  for entity in schema.entities.indices {
    schema.entities[entity].number = entityCount + 1 - entity
    let count = schema.entities[entity].properties.count
    for property in 0..<count {
      schema.entities[entity].properties[property].number = 2 * (count - property)
    }
    schema.entities[entity].lastPropertyNumber = 2 * count + 1
  }
  return schema
}

/// One seed store: what is saved into it.
private enum CorpusStory: String, CaseIterable {
  case empty = "00-empty"
  case firstSave = "01-first-save-snapshot"
  case updates = "02-updates"
  case listEdits = "03-list-moves-inserts-removes"
  case deletes = "04-deletes"
  case compacted = "05-compacted"
  case room = "06-with-room"
  case tornTail = "07-torn-tail"
  case everyValue = "08-every-value-kind"
  case numbered = "09-numbered-after-a-migration"

  var keepsRoom: Bool { self == .room }

  @MainActor
  func run(_ context: ObjectContext, store: BinaryStore) throws {
    guard self != .empty else { return }
    let (root, records) = insertTree(into: context)
    try context.save()
    switch self {
    case .empty, .firstSave:
      return
    case .updates, .room, .tornTail, .numbered:
      try update(root, records, in: context)
      try editLists(root, records, in: context)
    case .listEdits:
      try editLists(root, records, in: context)
    case .deletes:
      try update(root, records, in: context)
      try delete(root, records, in: context)
    case .compacted:
      try update(root, records, in: context)
      try editLists(root, records, in: context)
      try delete(root, records, in: context)
      try store.compact()
      records[0].string = "after compaction"
      try context.save()
    case .everyValue:
      try setEveryValueKind(records, in: context)
    }
  }

  @MainActor
  private func insertTree(into context: ObjectContext) -> (FuzzFolder, [FuzzRecord]) {
    // Fixed identifiers, so that making the corpus again gives the same bytes.
    var made = 0
    func nextUUID() -> UUID {
      made += 1
      return UUID(
        uuidString: "00000000-0000-4000-8000-\(String(100_000_000_000 + made).suffix(12))")!
    }
    let root = FuzzFolder()
    root.id = nextUUID()
    root.name = "Root"
    context.insert(root)
    var records: [FuzzRecord] = []
    for index in 0..<3 {
      let folder = FuzzFolder()
      folder.id = nextUUID()
      folder.name = "Folder \(index)"
      folder.rank = index
      folder.parent = root
      for item in 0..<3 {
        let record = FuzzRecord()
        record.uuid = nextUUID()
        record.string = "Record \(index).\(item)"
        record.int = index * 10 + item
        record.date = Date(timeIntervalSinceReferenceDate: Double(700_000_000 + item * 60))
        record.folder = folder
        records.append(record)
      }
    }
    for (record, next) in zip(records, records.dropFirst()) { record.next = next }
    root.pinned = [records[0], records[4]]
    return (root, records)
  }

  @MainActor
  private func update(_ root: FuzzFolder, _ records: [FuzzRecord], in context: ObjectContext)
    throws
  {
    root.name = "Root renamed"
    records[1].flag = true
    records[1].optionalString = "set"
    records[2].optionalInt = -5
    records[3].settings = FuzzRecord.Settings(volume: 7, labels: ["a", "b"])
    try context.save()
    records[1].optionalString = nil
    records[4].string = "Record 1.1 with a longer suffix"
    try context.save()
  }

  @MainActor
  private func editLists(_ root: FuzzFolder, _ records: [FuzzRecord], in context: ObjectContext)
    throws
  {
    root.$children.move(from: 0, to: 2)
    try context.save()
    let folder = root.children[0]
    folder.$records.move(from: 2, to: 0)
    _ = folder.$records.remove(at: 1)
    try context.save()
    root.$pinned.append(records[8])
    root.$pinned.insert(records[5], at: 0)
    _ = root.$pinned.remove(at: 1)
    try context.save()
  }

  @MainActor
  private func delete(_ root: FuzzFolder, _ records: [FuzzRecord], in context: ObjectContext)
    throws
  {
    context.delete(records[7])
    try context.save()
    context.delete(root.children[1])  // cascades to its records
    try context.save()
  }

  @MainActor
  private func setEveryValueKind(_ records: [FuzzRecord], in context: ObjectContext) throws {
    let record = records[0]
    record.flag = true
    record.int = -123_456_789_012
    record.int32 = .min
    record.uint8 = 255
    record.double = 3.25
    record.float = -0.5
    record.string = "Récord ✓"
    record.date = Date(timeIntervalSinceReferenceDate: 12.75)
    record.data = Data([0, 1, 2, 255])
    record.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    record.url = URL(string: "child/page?q=1", relativeTo: URL(string: "https://example.com/a/"))!
    record.optionalString = ""
    record.optionalInt = 0
    record.optionalDate = Date(timeIntervalSinceReferenceDate: 3600)
    record.optionalURL = URL(string: "file:///tmp/x")
    record.settings = FuzzRecord.Settings(volume: -1, labels: ["x"])
    record.optionalSettings = FuzzRecord.Settings(volume: 2, labels: [])
    records[1].double = 2.0
    records[1].previous = nil
    try context.save()
  }
}
