import Testing

@testable import ObjectGraph

/// ``ChangesetApplier`` stores a changeset's packed new objects whole when it can (ids
/// increasing, none stored, none updated by the same changeset) and through snapshots
/// otherwise: either way every storage ends as a dictionary of snapshots does, and a
/// changeset that does not fit changes nothing.
@Suite struct ChangesetApplierTests {
  /// One entity: a title and an ordered list of other objects.
  private let schema = Schema.titleAndList("Note")

  /// The three kinds of storage, fed the same changesets.
  private struct Storages {
    let applier: ChangesetApplier
    var live = LiveGraph()
    var chunked = InMemoryObjects()
    var plain: [ObjectID: ObjectSnapshot] = [:]

    mutating func apply(_ changeset: Changeset) throws {
      try live.apply(changeset, with: applier)
      try applier.apply(changeset, to: &chunked)
      try applier.apply(changeset, to: &plain)
    }

    /// Applies a changeset that must be refused by each storage, leaving it as it was.
    mutating func refuse(_ changeset: Changeset, _ message: String) {
      let before = plain
      let liveBefore = before.keys.map { live[$0] }
      #expect(throws: ObjectGraphError.self, "live graph") {
        try live.apply(changeset, with: applier)
      }
      #expect(throws: ObjectGraphError.self, "in memory") {
        try applier.apply(changeset, to: &chunked)
      }
      #expect(throws: ObjectGraphError.self, "dictionary") {
        try applier.apply(changeset, to: &plain)
      }
      #expect(plain == before, "\(message): the dictionary changed")
      #expect(chunked.sortedSnapshots == before.values.sorted { $0.id < $1.id }, "\(message)")
      #expect(before.keys.map { live[$0] } == liveBefore, "\(message): the live graph changed")
      #expect(live.contents.packed.liveCount == before.count, "\(message): live graph count")
    }

    /// Whether every storage holds what the dictionary holds, the live graph in the order
    /// the objects were inserted.
    func agree(insertedInOrder order: [ObjectID]) -> Bool {
      let expected = plain.values.sorted { $0.id < $1.id }
      return chunked.sortedSnapshots == expected && live.sortedObjects == expected
        && live.contents.packed.snapshots.map(\.id) == order
    }
  }

  private func note(_ number: UInt64, _ title: String, items: [UInt64] = []) -> ObjectSnapshot {
    ObjectSnapshot(
      id: ObjectID(rawValue: number), entity: 0,
      values: [.string(title), .references(items.map { ObjectID(rawValue: $0) })])
  }

  /// A changeset whose new objects are packed, as a store's reader and a context make them.
  private func packed(
    _ inserted: [ObjectSnapshot], updated: [ObjectUpdate] = [], deleted: [UInt64] = []
  ) -> Changeset {
    Changeset(
      insertedObjects: ObjectList(packed: PackedObjects(inserted)), updated: updated,
      deleted: deleted.map { ObjectID(rawValue: $0) }, nextObjectNumber: 1)
  }

  private func rename(_ number: UInt64, _ title: String) -> ObjectUpdate {
    ObjectUpdate(
      id: ObjectID(rawValue: number), entity: 0,
      changes: [PropertyChange(property: 0, kind: .set(.string(title)))])
  }

  @Test func manySavesOfNewObjectsLeaveWhatSnapshotsLeave() throws {
    var storages = Storages(applier: ChangesetApplier(schema: schema))
    var order: [ObjectID] = []
    // A large import, then 300 saves of one new object each, renaming and deleting older
    // ones on the way.
    let imported = (1...2_000).map { note(UInt64($0), "n\($0)", items: [UInt64($0 / 2)]) }
    try storages.apply(packed(imported))
    order += imported.map(\.id)
    for number in UInt64(2_001)...2_300 {
      let deleted: [UInt64] = number % 7 == 0 ? [number - 1_000] : []
      try storages.apply(
        packed(
          [note(number, "n\(number)", items: [number - 1, 1])],
          updated: [rename(number - 1, "r\(number)")], deleted: deleted))
      order.append(ObjectID(rawValue: number))
      order.removeAll { deleted.contains($0.rawValue) }
    }
    #expect(storages.agree(insertedInOrder: order))
    #expect(storages.plain.count == 2_300 - (2_001...2_300).filter { $0 % 7 == 0 }.count)
  }

  @Test func newObjectsThatTheSameChangesetUpdatesOrDeletesAreStored() throws {
    var storages = Storages(applier: ChangesetApplier(schema: schema))
    try storages.apply(packed([note(1, "a"), note(2, "b")]))
    // Updated and deleted in the changeset that inserts them: through snapshots.
    try storages.apply(
      packed(
        [note(3, "c"), note(4, "d"), note(5, "e")],
        updated: [rename(4, "d2"), rename(1, "a2")], deleted: [5, 2]))
    #expect(storages.plain[ObjectID(rawValue: 4)]?.values[0] == .string("d2"))
    #expect(storages.plain[ObjectID(rawValue: 5)] == nil)
    #expect(storages.agree(insertedInOrder: [1, 3, 4].map { ObjectID(rawValue: $0) }))
    // Ids out of order keep the changeset's order.
    try storages.apply(packed([note(9, "i"), note(7, "g")]))
    #expect(storages.agree(insertedInOrder: [1, 3, 4, 9, 7].map { ObjectID(rawValue: $0) }))
  }

  @Test func newObjectsThatDoNotFitChangeNothing() throws {
    var storages = Storages(applier: ChangesetApplier(schema: schema))
    try storages.apply(packed([note(1, "a"), note(2, "b")]))
    storages.refuse(packed([note(3, "c"), note(2, "again")]), "an id stored already")
    storages.refuse(packed([note(3, "c"), note(3, "twice")]), "an id twice, in order")
    storages.refuse(
      packed([note(4, "d"), note(3, "c"), note(4, "d")]), "an id twice, out of order")
    storages.refuse(
      packed([note(3, "c"), ObjectSnapshot(id: ObjectID(rawValue: 4), entity: 0, values: [.null])]),
      "a value missing")
    storages.refuse(
      packed([ObjectSnapshot(id: ObjectID(rawValue: 3), entity: 1, values: [.null, .null])]),
      "an unknown entity")
    storages.refuse(packed([note(3, "c")], updated: [rename(8, "x")]), "an update of no object")
    storages.refuse(packed([note(3, "c")], deleted: [8]), "a delete of no object")
    #expect(storages.agree(insertedInOrder: [1, 2].map { ObjectID(rawValue: $0) }))
  }
}
