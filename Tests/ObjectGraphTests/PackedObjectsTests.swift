import Foundation
import ObjectGraph
import Testing

/// The store seam with the public API only (no `@testable` here): a store written outside
/// the framework hands its objects over packed, reads a save's inserts packed, and answers
/// partial reads.
@MainActor @Suite struct PackedObjectsTests {
  /// A store kept outside the framework: saves go to an in-memory store, and every load is
  /// packed again object by object through the public builder, as a database's rows would
  /// be.
  final class RowStore: PersistentStore, @unchecked Sendable {  // the rows are behind a lock
    private let rows = InMemoryStore()
    private let lock = NSLock()
    private var insertedCounts: [Int] = []

    /// How many objects each save inserted, read from its packed inserts.
    var savedInsertCounts: [Int] { lock.withLock { insertedCounts } }

    func open(schema: Schema) throws { try rows.open(schema: schema) }

    func load() throws -> StoreContents {
      let stored = try rows.load()
      var packed = PackedObjects()
      packed.reserveCapacity(
        objects: stored.objects.count, values: stored.objects.reduce(0) { $0 + $1.values.count })
      for row in stored.objects {
        packed.beginObject(id: row.id, entity: row.entity)
        for value in row.values { packed.appendValue(value) }
      }
      return StoreContents(packed: packed, nextObjectNumber: stored.nextObjectNumber)
    }

    func save(_ changeset: Changeset) throws {
      var count = 0
      changeset.insertedPacked.forEach { _, _, _ in count += 1 }
      try rows.save(changeset)
      lock.withLock { insertedCounts.append(count) }
    }

    func close() { rows.close() }
  }

  @Test func aStoreHandsOverPackedObjectsThatAContextLoads() throws {
    let store = RowStore()
    do {
      let container = try ObjectContainer(for: Box.self, store: store)
      let root = Box(title: "Root")
      container.mainContext.insert(root)
      for number in 0..<50 { _ = Box(title: "Child \(number)", parent: root) }
      try container.mainContext.save()
    }
    #expect(store.savedInsertCounts == [51])
    let container = try ObjectContainer(for: Box.self, store: store)
    let roots = try container.mainContext.fetch(
      FetchDescriptor<Box>(predicate: #Predicate { $0.parent == nil }))
    #expect(roots.map(\.title) == ["Root"])
    #expect(roots[0].children.map(\.title) == (0..<50).map { "Child \($0)" })
  }

  @Test func packedObjectsReadAsTheirSnapshots() {
    let snapshots = (1...20).map { number in
      ObjectSnapshot(
        id: ObjectID(rawValue: UInt64(number)), entity: number % 2,
        values: [
          .string("title \(number)"), .int(Int64(number)),
          number > 1 ? .reference(ObjectID(rawValue: 1)) : .null,
        ])
    }
    var built = PackedObjects()
    for snapshot in snapshots {
      built.beginObject(id: snapshot.id, entity: snapshot.entity)
      for value in snapshot.values { built.appendValue(value) }
    }
    #expect(built.count == 20)
    #expect(built.snapshots == snapshots)
    #expect(PackedObjects(snapshots).snapshots == snapshots)
    var read: [ObjectSnapshot] = []
    built.forEach { id, entity, values in
      read.append(ObjectSnapshot(id: id, entity: entity, values: Array(values)))
    }
    #expect(read == snapshots)
  }

  /// The binary store hands over its strings as bytes, decoded when read: reading its
  /// packed objects gives the strings, as its snapshots do.
  @Test func aBinaryStoresPackedObjectsReadWithTheirStrings() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    let schema: Schema
    do {
      let container = try ObjectContainer(for: Box.self, storeURL: url)
      schema = container.mainContext.schema
      let root = Box(title: "Root")
      container.mainContext.insert(root)
      for number in 0..<30 { _ = Box(title: "A long title of box \(number)", parent: root) }
      try container.mainContext.save()
    }
    let store = BinaryStore(url: url)
    try store.open(schema: schema)
    defer { store.close() }
    let contents = try store.load()
    var read: [ObjectSnapshot] = []
    contents.packed.forEach { id, entity, values in
      read.append(ObjectSnapshot(id: id, entity: entity, values: Array(values)))
    }
    #expect(read.count == 31)
    #expect(read == contents.objects)
    let titles = read.compactMap { snapshot -> String? in
      if case .string(let title) = snapshot.values[1] { return title }
      return nil
    }
    #expect(titles.filter { $0.hasPrefix("A long title") }.count == 30)
  }

  @Test(arguments: ["memory", "binary", "rows"])
  func aPartialReadAnswersTheObjectsAsked(kind: String) throws {
    let directory = try TemporaryDirectory()
    let store: any PersistentStore =
      switch kind {
      case "memory": InMemoryStore()
      case "binary": BinaryStore(url: directory.file("boxes.ogstore"))
      default: RowStore()
      }
    let container = try ObjectContainer(for: Box.self, store: store)
    let root = Box(title: "Root")
    container.mainContext.insert(root)
    let children = (0..<10).map { Box(title: "Child \($0)", parent: root) }
    try container.mainContext.save()
    let asked: Set<ObjectID> = [
      children[7].objectID!, children[2].objectID!, ObjectID(rawValue: 999),
    ]
    let part = try store.load(ids: asked)
    let whole = try store.load()
    #expect(part.objects.map(\.id) == [children[2].objectID!, children[7].objectID!])
    #expect(part.objects == whole.objects.filter { asked.contains($0.id) }.sorted { $0.id < $1.id })
    #expect(part.nextObjectNumber == whole.nextObjectNumber)
  }
}
