import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// An open binary store keeps only the shape of its objects (which exist, what their
/// relationships refer to); it hands its opened objects to the first load and replays the file for
/// later loads and for compaction, checking every changeset against the shapes.
@Suite struct BinaryStoreMemoryTests {
  @Test func laterLoadsReplayTheFileAndSeeEverySave() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    #expect(try recorded.store.load().comparable == recorded.states.last)
    #expect(try recorded.store.load().comparable == recorded.states.last)
    try recorded.save(rename(1, "after two loads"))
    #expect(try recorded.store.load().comparable == recorded.states.last)
    try recorded.store.compact()
    #expect(try recorded.store.load().comparable == recorded.states.last)
  }

  @Test func theShapesRefuseWhatDoesNotFitAndKeepTheStoreUsable() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    let length = fileLength(recorded.url)
    let children = PropertyChange(
      property: ConformanceSchema.children, kind: .edit([.remove(at: 9)]))
    let refused: [Changeset] = [
      Changeset(
        updated: [ObjectUpdate(id: ObjectID(rawValue: 999), entity: 0, changes: [])],
        nextObjectNumber: 1),
      Changeset(
        updated: [ObjectUpdate(id: ObjectID(rawValue: 1), entity: 0, changes: [children])],
        nextObjectNumber: 1),
      Changeset(inserted: [ConformanceSchema.item(1)], nextObjectNumber: 1),
      Changeset(deleted: [ObjectID(rawValue: 999)], nextObjectNumber: 1),
      Changeset(
        updated: [
          ObjectUpdate(
            id: ObjectID(rawValue: 1), entity: 0,
            changes: [PropertyChange(property: 99, kind: .set(.null))])
        ],
        nextObjectNumber: 1),
    ]
    for changeset in refused {
      #expect(errorCode { try recorded.store.save(changeset) } == .corruptStore)
      #expect(fileLength(recorded.url) == length, "nothing written")
    }
    // An insert then an edit of the new list in one changeset fits.
    var item = ConformanceSchema.item(900)
    item.values[ConformanceSchema.children] = .references([ObjectID(rawValue: 1)])
    try recorded.save(
      Changeset(
        inserted: [item],
        updated: [
          ObjectUpdate(
            id: item.id, entity: 0,
            changes: [
              PropertyChange(property: ConformanceSchema.children, kind: .edit([.remove(at: 0)]))
            ])
        ],
        nextObjectNumber: 901))
    #expect(try recorded.store.load().comparable == recorded.states.last)
  }

  /// A reopened store builds its shapes on another core while its objects are loaded; the
  /// first save, and the statistics, see exactly the objects and lists on file.
  @Test func aReopenedStoreChecksSavesAgainstTheShapesOnFile() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    recorded.store.close()

    let store = BinaryStore(url: recorded.url)
    try store.open(schema: ConformanceSchema.schema)
    defer { store.close() }
    let objects = try store.load().objects
    #expect(store.statistics.objectCount == objects.count)
    let children = ConformanceSchema.children
    func list(of object: ObjectSnapshot) -> [ObjectID] {
      guard object.entity == ConformanceSchema.item,
        case .references(let ids) = object.values[children]
      else { return [] }
      return ids
    }
    func removing(at position: Int, from owner: ObjectID) -> Changeset {
      Changeset(
        updated: [
          ObjectUpdate(
            id: owner, entity: ConformanceSchema.item,
            changes: [PropertyChange(property: children, kind: .edit([.remove(at: position)]))])
        ],
        nextObjectNumber: 1)
    }
    // Every list's length is known: those of the snapshot and those that later saves
    // inserted or changed (the script does both).
    let parents = objects.filter { !list(of: $0).isEmpty }
    #expect(parents.count > 1)
    for parent in parents {
      let error = errorCode {
        try store.save(removing(at: list(of: parent).count, from: parent.id))
      }
      #expect(error == .corruptStore, "\(parent.id)")
    }
    let parent = parents[0]
    let ids = list(of: parent)
    try store.save(removing(at: ids.count - 1, from: parent.id))
    let saved = try #require(try store.load().objects.first { $0.id == parent.id })
    #expect(saved.values[children] == .references(Array(ids.dropLast())))
  }

  /// A file whose records hold no snapshot (its first save also deleted something, so it
  /// was no whole graph): its shapes are read from the replayed objects themselves.
  @Test func aFileWithoutASnapshotReadsItsShapesFromItsObjects() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    let first = BinaryStore(url: url)
    try first.open(schema: ConformanceSchema.schema)
    try first.save(
      Changeset(
        inserted: [
          ConformanceSchema.item(1, children: [2, 3]), ConformanceSchema.item(2, parent: 1),
          ConformanceSchema.item(3, parent: 1), ConformanceSchema.item(9),
        ], deleted: [ObjectID(rawValue: 9)], nextObjectNumber: 10))
    first.close()

    let store = BinaryStore(url: url)
    try store.open(schema: ConformanceSchema.schema)
    defer { store.close() }
    #expect(try store.load().objects.count == 3)
    #expect(store.statistics.objectCount == 3)
    func removing(at position: Int) -> Changeset {
      Changeset(
        updated: [
          ObjectUpdate(
            id: ObjectID(rawValue: 1), entity: ConformanceSchema.item,
            changes: [
              PropertyChange(
                property: ConformanceSchema.children, kind: .edit([.remove(at: position)]))
            ])
        ],
        nextObjectNumber: 10)
    }
    #expect(errorCode { try store.save(removing(at: 2)) } == .corruptStore)
    try store.save(removing(at: 1))
  }

  /// A store big enough for its shapes to be read in pieces on several cores (at least
  /// 8,192 objects a piece): lists in every piece are found.
  @Test func theShapesOfABigStoreAreReadInPieces() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    let count: UInt64 = 20_000
    let listOwners: [UInt64: [UInt64]] = [100: [1], 12_000: [2, 3], 19_999: [4, 5, 6]]
    let first = BinaryStore(url: url)
    try first.open(schema: ConformanceSchema.schema)
    try first.save(
      Changeset(
        inserted: (1...count).map { ConformanceSchema.item($0, children: listOwners[$0] ?? []) },
        nextObjectNumber: count + 1))
    first.close()

    let store = BinaryStore(url: url)
    try store.open(schema: ConformanceSchema.schema)
    defer { store.close() }
    _ = try store.load()
    #expect(store.statistics.objectCount == Int(count))
    for (owner, list) in listOwners {
      func removing(at position: Int) -> Changeset {
        Changeset(
          updated: [
            ObjectUpdate(
              id: ObjectID(rawValue: owner), entity: ConformanceSchema.item,
              changes: [
                PropertyChange(
                  property: ConformanceSchema.children, kind: .edit([.remove(at: position)]))
              ])
          ],
          nextObjectNumber: count + 1)
      }
      #expect(errorCode { try store.save(removing(at: list.count)) } == .corruptStore)
      try store.save(removing(at: list.count - 1))
    }
  }
}
