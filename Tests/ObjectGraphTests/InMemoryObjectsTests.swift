import Testing

@testable import ObjectGraph

/// ``InMemoryObjects`` (the in-memory store's storage) and ``LiveGraph`` (a replayed file's),
/// which keep long edited lists apart in chunks, against a plain dictionary of snapshots:
/// the same random changesets, applied by the same applier, leave the same objects, read
/// whole or a value at a time, and a changeset that does not fit changes none of them.
@Suite struct InMemoryObjectsTests {
  /// One entity: a title and an ordered list of other objects.
  private let schema = Schema.titleAndList("Holder")

  @Test func randomChangesetsLeaveWhatADictionaryLeaves() throws {
    let applier = ChangesetApplier(schema: schema)
    var random = SplitMix64(seed: TestScale.seed(5))
    var chunked = InMemoryObjects()
    var live = LiveGraph()
    var plain: [ObjectID: ObjectSnapshot] = [:]
    var lengths: [ObjectID: Int] = [:]
    var nextNumber: UInt64 = 1
    func newID() -> ObjectID {
      defer { nextNumber += 1 }
      return ObjectID(rawValue: nextNumber)
    }
    // Two holders with long lists (past a chunk) and one with a short list.
    var inserted: [ObjectSnapshot] = []
    for length in [1_200, 700, 30] {
      let id = newID()
      let items = (0..<length).map { _ in ObjectID(rawValue: 1_000_000 + UInt64.random(in: 0...9)) }
      inserted.append(
        ObjectSnapshot(id: id, entity: 0, values: [.string("h"), .references(items)]))
      lengths[id] = length
    }
    let first = Changeset(inserted: inserted, updated: [], deleted: [])
    try applier.apply(first, to: &chunked)
    try live.apply(first, with: applier)
    try applier.apply(first, to: &plain)

    for round in 0..<600 {
      var updates: [ObjectUpdate] = []
      var deleted: [ObjectID] = []
      var insertedNow: [ObjectSnapshot] = []
      for id in lengths.keys.sorted() where random.next() % 2 == 0 {
        var length = lengths[id]!
        var changes: [PropertyChange] = []
        switch random.next() % 10 {
        case 0:  // the whole list set, then maybe edited in the same changeset
          length = Int(random.next() % 900)
          changes.append(
            PropertyChange(
              property: 1,
              kind: .set(.references((0..<length).map { ObjectID(rawValue: UInt64($0) + 5_000) }))))
        case 1:
          changes.append(PropertyChange(property: 0, kind: .set(.string("r\(round)"))))
        case 2 where random.next() % 4 == 0:
          deleted.append(id)
          lengths[id] = nil
          continue
        default:
          break
        }
        var edits: [ListEdit] = []
        for _ in 0..<(1 + Int(random.next() % 4)) {
          let pick = { (bound: Int) in Int(random.next() % UInt64(max(bound, 1))) }
          switch random.next() % 4 {
          case 0:
            edits.append(.insert(ObjectID(rawValue: 9_000 + UInt64(round)), at: pick(length + 1)))
            length += 1
          case 1 where length > 0:
            edits.append(.remove(at: pick(length)))
            length -= 1
          case 2 where length > 1:
            let low = pick(length - 1)
            let high = low + 1 + pick(length - low - 1)
            edits += [.move(from: high, to: low), .move(from: low + 1, to: high)]
          default:
            if length > 0 { edits.append(.move(from: pick(length), to: pick(length))) }
          }
        }
        if !edits.isEmpty { changes.append(PropertyChange(property: 1, kind: .edit(edits))) }
        lengths[id] = length
        if !changes.isEmpty { updates.append(ObjectUpdate(id: id, entity: 0, changes: changes)) }
      }
      if random.next() % 8 == 0 {
        let id = newID()
        let length = 513 + Int(random.next() % 600)
        let items = (0..<length).map { ObjectID(rawValue: 7_000 + UInt64($0)) }
        insertedNow.append(
          ObjectSnapshot(id: id, entity: 0, values: [.string("n"), .references(items)]))
        lengths[id] = length
      }
      let changeset = Changeset(inserted: insertedNow, updated: updates, deleted: deleted)
      try applier.apply(changeset, to: &chunked)
      try live.apply(changeset, with: applier)
      try applier.apply(changeset, to: &plain)
      if round % 20 == 0 || deleted.count > 0 {
        let expected = plain.values.sorted { $0.id < $1.id }
        #expect(chunked.sortedSnapshots == expected, "round \(round)")
        #expect(expected.map { live[$0.id] } == expected, "round \(round)")
        #expect(
          expected.map { live.value(of: $0.id, 1) } == expected.map { $0.values[1] },
          "round \(round)")
      }
    }
    #expect(chunked.sortedSnapshots == plain.values.sorted { $0.id < $1.id })
    let beforeJoining = plain.values.sorted { $0.id < $1.id }.map { live[$0.id] }
    live.joinListsKeptApart()
    #expect(live.sortedObjects == plain.values.sorted { $0.id < $1.id })
    #expect(beforeJoining == live.sortedObjects)

    // A changeset whose last edit does not fit changes nothing, chunked lists included.
    let before = chunked.sortedSnapshots
    let longest = lengths.max { $0.value < $1.value }!
    let misfit = Changeset(
      inserted: [],
      updated: [
        ObjectUpdate(
          id: longest.key, entity: 0,
          changes: [
            PropertyChange(
              property: 1, kind: .edit([.move(from: 0, to: 1), .remove(at: longest.value)]))
          ])
      ], deleted: [])
    #expect(throws: ObjectGraphError.self) { try applier.apply(misfit, to: &chunked) }
    #expect(chunked.sortedSnapshots == before)
    try live.apply(
      Changeset(
        inserted: [],
        updated: [
          ObjectUpdate(
            id: longest.key, entity: 0,
            changes: [PropertyChange(property: 1, kind: .edit([.move(from: 0, to: 1)]))])
        ], deleted: []), with: applier)
    #expect(throws: ObjectGraphError.self) { try live.apply(misfit, with: applier) }
    live.joinListsKeptApart()
    var edited = before
    let position = edited.firstIndex { $0.id == longest.key }!
    edited[position].values[1].editList([.move(from: 0, to: 1)])
    #expect(live.sortedObjects == edited)
  }
}
