import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// Replaying a file builds a `LiveGraph` of packed objects: values in one buffer, removed
/// objects left as holes so the file's order is kept. It must hold exactly what applying the
/// same changesets to a plain dictionary of snapshots holds.
@Suite struct LiveGraphTests {
  private func id(_ number: UInt64) -> ObjectID { ObjectID(rawValue: number) }

  @Test func replayedChangesMatchADictionaryOfSnapshots() throws {
    let applier = ChangesetApplier(schema: ConformanceSchema.schema)
    var graph = LiveGraph()
    var reference: [ObjectID: ObjectSnapshot] = [:]
    func apply(_ changeset: Changeset) throws {
      try graph.apply(changeset, with: applier)
      try applier.apply(changeset, to: &reference)
    }
    var generator = ChangeGenerator()
    try apply(generator.initialInsert())
    for step in 0..<600 {
      try apply(generator.next())
      // Now and then delete a loose item and insert it again with other values, so holes
      // and re-inserted ids mix with updates.
      if step % 7 == 0 {
        let number = UInt64(6 + step % 50)
        try apply(Changeset(deleted: [id(number)], nextObjectNumber: 1_000))
        try apply(
          Changeset(
            inserted: [ConformanceSchema.item(number, title: "again \(step)")],
            nextObjectNumber: 1_000))
      }
    }
    try apply(Changeset(deleted: [id(7), id(30), id(59)], nextObjectNumber: 1_000))

    let expected = reference.values.sorted { $0.id < $1.id }
    #expect(graph.sortedObjects == expected)
    #expect(graph.contents.objects.sorted { $0.id < $1.id } == expected)
    var contents = graph.contents
    #expect(contents.list.takePacked().liveCount == expected.count)
    for snapshot in expected {
      #expect(graph.entity(of: snapshot.id) == snapshot.entity)
      #expect(graph.value(of: snapshot.id, ConformanceSchema.title) == snapshot.values[6])
      #expect(graph[snapshot.id] == snapshot)
    }
    #expect(graph.entity(of: id(30)) == nil)
    #expect(graph[id(30)] == nil)
  }

  @Test func aFailedChangesetLeavesTheGraphAsItWas() throws {
    let applier = ChangesetApplier(schema: ConformanceSchema.schema)
    var graph = LiveGraph()
    try graph.apply(
      Changeset(inserted: (1...3).map { ConformanceSchema.item($0) }, nextObjectNumber: 10),
      with: applier)
    let before = graph.sortedObjects
    // Deletes 2 and updates an object that does not exist: nothing may change.
    let failing = Changeset(
      updated: [
        ObjectUpdate(
          id: id(99), entity: ConformanceSchema.item,
          changes: [PropertyChange(property: 6, kind: .set(.string("x")))])
      ], deleted: [id(2)], nextObjectNumber: 10)
    #expect(throws: ObjectGraphError.self) { try graph.apply(failing, with: applier) }
    #expect(graph.sortedObjects == before)
  }

  /// An update changes a stored object's values one at a time, in place: changes of the
  /// same property in one changeset build on each other, a failure anywhere changes nothing,
  /// and an object updated and deleted in one changeset is gone. Both storages agree.
  @Test func updatesOfStoredObjectsChainAndAreAllOrNothing() throws {
    let applier = ChangesetApplier(schema: ConformanceSchema.schema)
    let children = ConformanceSchema.children
    let title = ConformanceSchema.title
    let inserted = Changeset(
      inserted: [ConformanceSchema.item(1, children: [2, 3, 4])]
        + (2...5).map { ConformanceSchema.item($0, parent: $0 == 5 ? nil : 1) },
      nextObjectNumber: 10)
    func update(_ number: UInt64, _ changes: [PropertyChange]) -> ObjectUpdate {
      ObjectUpdate(id: id(number), entity: ConformanceSchema.item, changes: changes)
    }
    let chained = Changeset(
      updated: [
        update(
          1,
          [
            PropertyChange(property: children, kind: .edit([.move(from: 0, to: 2)])),
            PropertyChange(property: title, kind: .set(.string("renamed"))),
            PropertyChange(property: children, kind: .edit([.insert(id(5), at: 0)])),
          ]),
        update(5, [PropertyChange(property: title, kind: .set(.string("gone")))]),
      ], deleted: [id(5)], nextObjectNumber: 10)
    let failing = Changeset(
      updated: [
        update(2, [PropertyChange(property: title, kind: .set(.string("never")))]),
        update(1, [PropertyChange(property: children, kind: .edit([.remove(at: 9)]))]),
      ], nextObjectNumber: 10)

    var graph = LiveGraph()
    var dictionary: [ObjectID: ObjectSnapshot] = [:]
    for changeset in [inserted, chained] {
      try graph.apply(changeset, with: applier)
      try applier.apply(changeset, to: &dictionary)
    }
    #expect(throws: ObjectGraphError.self) { try graph.apply(failing, with: applier) }
    #expect(throws: ObjectGraphError.self) { try applier.apply(failing, to: &dictionary) }

    let expectedChildren: PersistentValue = .references([id(5), id(3), id(4), id(2)])
    for storage in [graph.sortedObjects, dictionary.values.sorted { $0.id < $1.id }] {
      #expect(storage.map(\.id) == [id(1), id(2), id(3), id(4)])
      #expect(storage[0].values[children] == expectedChildren)
      #expect(storage[0].values[title] == .string("renamed"))
      #expect(storage[1].values[title] == .string("Item 2"))
    }
  }

  /// Many updates in one changeset (past the few the applier finds by scanning) still build
  /// on each other, and deletes in any order are checked for repeats.
  @Test func manyUpdatesChainAndDeletesInAnyOrderAreChecked() throws {
    let applier = ChangesetApplier(schema: ConformanceSchema.schema)
    let children = ConformanceSchema.children
    let title = ConformanceSchema.title
    func insertChild(_ child: UInt64) -> ObjectUpdate {
      ObjectUpdate(
        id: id(1), entity: ConformanceSchema.item,
        changes: [PropertyChange(property: children, kind: .edit([.insert(id(child), at: 0)]))])
    }
    let renames = (2...40).map { number in
      ObjectUpdate(
        id: id(number), entity: ConformanceSchema.item,
        changes: [PropertyChange(property: title, kind: .set(.string("renamed \(number)")))])
    }
    let changesets = [
      Changeset(inserted: (1...40).map { ConformanceSchema.item($0) }, nextObjectNumber: 50),
      Changeset(
        updated: [insertChild(2)] + renames + [insertChild(3)], nextObjectNumber: 50),
      Changeset(deleted: [id(30), id(20)], nextObjectNumber: 50),
    ]
    var graph = LiveGraph()
    var dictionary: [ObjectID: ObjectSnapshot] = [:]
    for changeset in changesets {
      try graph.apply(changeset, with: applier)
      try applier.apply(changeset, to: &dictionary)
    }
    let repeated = Changeset(deleted: [id(10), id(9), id(10)], nextObjectNumber: 50)
    let error = try #require(throws: ObjectGraphError.self) {
      try graph.apply(repeated, with: applier)
    }
    #expect(error.message.contains("deleted twice"))
    #expect(throws: ObjectGraphError.self) { try applier.apply(repeated, to: &dictionary) }

    for objects in [graph.sortedObjects, dictionary.values.sorted { $0.id < $1.id }] {
      #expect(objects.count == 38)
      #expect(objects[0].values[children] == .references([id(3), id(2)]))
      #expect(objects[38 - 1].values[title] == .string("renamed 40"))
      #expect(objects.contains { $0.id == id(10) })
    }
  }

  /// A snapshot is indexed by id when first read that way; one whose ids do not increase
  /// is indexed at once, which refuses an id that appears twice.
  @Test(arguments: [[1, 2, 3], [3, 1, 2], [1, 2, 1]] as [[UInt64]])
  func aSnapshotIsIndexedWhenNeededAndRefusesRepeatedIDs(numbers: [UInt64]) throws {
    var graph = LiveGraph()
    let snapshot = PackedObjects(numbers.map { ConformanceSchema.item($0) })
    guard Set(numbers).count == numbers.count else {
      let error = try #require(throws: ObjectGraphError.self) {
        try graph.replace(with: snapshot, nextObjectNumber: 10)
      }
      #expect(error.message.contains("appears twice"))
      return
    }
    try graph.replace(with: snapshot, nextObjectNumber: 10)
    try graph.makeIndex()
    for number in numbers {
      #expect(graph.entity(of: id(number)) == ConformanceSchema.item)
    }
    #expect(graph.entity(of: id(7)) == nil)
  }

  /// Replaying inserts keeps the order they were saved in (not the applier's hash order), so
  /// a store reopened after a big save makes its objects in that order.
  @Test func replayedInsertsKeepTheirSavedOrder() throws {
    let applier = ChangesetApplier(schema: ConformanceSchema.schema)
    var graph = LiveGraph()
    let numbers = (1...60).map { UInt64(61 - $0) }  // descending: never hash order
    try graph.apply(
      Changeset(inserted: numbers.map { ConformanceSchema.item($0) }, nextObjectNumber: 100),
      with: applier)
    #expect(graph.contents.objects.map(\.id.rawValue) == numbers)
  }
}
