import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// The binary store refuses a changeset that deletes an object another live object still
/// refers to, when the changeset leaves that object alone: the save would return and leave
/// a store whose loader finds a reference to nothing. The store counts the references that
/// name each object, so the refusal costs nothing per save beyond the references changed.
@Suite struct BinaryStoreReferenceTests {
  private static func id(_ number: UInt64) -> ObjectID { ObjectID(rawValue: number) }

  private static func update(_ number: UInt64, _ property: Int, _ kind: PropertyChange.Kind)
    -> ObjectUpdate
  {
    ObjectUpdate(
      id: id(number), entity: ConformanceSchema.item,
      changes: [PropertyChange(property: property, kind: kind)])
  }

  /// After the standard script: 1's children are [3, 4], whose parent is 1; 3's children
  /// are [6], whose parent is 3.
  @Test func aDeleteOfAnObjectStillReferredToIsRefusedNamingTheReferrer() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    let before = try fileBytes(recorded.url)
    let refused: [(Changeset, referrer: UInt64, property: String, message: String)] = [
      (
        Changeset(deleted: [Self.id(6)], nextObjectNumber: 9), 3, "children",
        "deletes #6 of Item, which object #3 of Item still refers to through children"
      ),
      (
        Changeset(deleted: [Self.id(1)], nextObjectNumber: 9), 3, "parent",
        "deletes #1 of Item, which object #3 of Item still refers to through parent"
      ),
      (
        // 3 leaves 1's list, but its own child 6 still names it.
        Changeset(
          updated: [Self.update(1, ConformanceSchema.children, .edit([.remove(at: 0)]))],
          deleted: [Self.id(3)], nextObjectNumber: 9), 6, "parent",
        "deletes #3 of Item, which object #6 of Item still refers to through parent"
      ),
    ]
    for (changeset, referrer, property, message) in refused {
      let error = try #require(throws: ObjectGraphError.self) { try recorded.store.save(changeset) }
      #expect(error.code == .corruptStore && error.message.contains(message), "\(error)")
      #expect(error.message.contains("nothing written"))
      #expect(error.entity == "Item" && error.property == property)
      #expect(error.objectID == Self.id(referrer))
      #expect(try fileBytes(recorded.url) == before, "nothing written: \(message)")
    }
    // The same deletes, with the references that named them changed or deleted too.
    try recorded.save(
      Changeset(
        updated: [Self.update(3, ConformanceSchema.children, .set(.references([])))],
        deleted: [Self.id(6)], nextObjectNumber: 9))
    try recorded.save(
      Changeset(deleted: [Self.id(1), Self.id(3), Self.id(4)], nextObjectNumber: 9))
    recorded.store.close()
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
    #expect(recorded.states.last?.objects.isEmpty == false, "item 2 is left")
  }

  @Test func aReferenceWithoutAnInverseKeepsItsTargetFromBeingDeleted() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    try recorded.save(
      Changeset(
        inserted: [ConformanceSchema.note(9, text: "about four", item: 4)],
        nextObjectNumber: 10))
    let deleteFour = Changeset(
      updated: [Self.update(1, ConformanceSchema.children, .edit([.remove(at: 1)]))],
      deleted: [Self.id(4)], nextObjectNumber: 10)
    let error = try #require(throws: ObjectGraphError.self) { try recorded.store.save(deleteFour) }
    #expect(error.message.contains("deletes #4 of Item, which object #9 of Note still refers to"))
    #expect(error.entity == "Note" && error.property == "item" && error.objectID == Self.id(9))
    var withNote = deleteFour
    withNote.updated.append(
      ObjectUpdate(
        id: Self.id(9), entity: ConformanceSchema.note,
        changes: [PropertyChange(property: 1, kind: .set(.null))]))
    try recorded.save(withNote)
    recorded.store.close()
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
  }

  /// Random changesets over a small graph of items and notes, many of them refusable: each
  /// is accepted exactly when every reference of the graph it leaves names a live object.
  /// The store is reopened and compacted along the way, so the counts are also those an
  /// open builds (from a snapshot, from the saves after it, and from a compacted file), and
  /// the reopened store holds what the accepted changesets made.
  @Test(arguments: [1, 2, 3] as [UInt64])
  func randomChangesetsAreAcceptedExactlyWhenEveryReferenceStaysLive(_ seed: UInt64) throws {
    var random = SplitMix64(seed: seed)
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    var store = BinaryStore(url: url)
    try store.open(schema: ConformanceSchema.schema)
    let model = InMemoryStore()
    try model.open(schema: ConformanceSchema.schema)
    var graph: [ObjectID: ObjectSnapshot] = [:]
    var nextNumber: UInt64 = 1
    let applier = ChangesetApplier(schema: ConformanceSchema.schema)
    var (accepted, refused) = (0, 0)
    for step in 1...300 {
      if step % 60 == 0 {
        if step % 120 == 0 { try store.compact() }
        store.close()
        store = BinaryStore(url: url)
        try store.open(schema: ConformanceSchema.schema)
        #expect(try store.load().comparable == model.load().comparable, "step \(step)")
      }
      let changeset = RandomReferences.changeset(
        over: graph, nextNumber: &nextNumber, using: &random)
      var after = graph
      try applier.apply(changeset, to: &after)
      let fits = RandomReferences.everyReferenceIsLive(in: after)
      let length = fileLength(url)
      do {
        try store.save(changeset)
        try model.save(changeset)
        #expect(fits, "step \(step): the store took a changeset leaving a dangling reference")
        graph = after
        accepted += 1
      } catch let error as ObjectGraphError {
        #expect(!fits, "step \(step): refused a changeset that fits: \(error)")
        #expect(error.code == .corruptStore && fileLength(url) == length)
        refused += 1
      }
    }
    #expect(accepted > 50 && refused > 50, "both outcomes exercised: \(accepted)/\(refused)")
    store.close()
    #expect(try openAndLoad(url).get() == model.load().comparable)
  }
}

/// Random changesets over ``ConformanceSchema`` items (parent and children) and notes (item),
/// whose references may name objects that are deleted, never stored, or live.
private enum RandomReferences {
  static func changeset(
    over graph: [ObjectID: ObjectSnapshot], nextNumber: inout UInt64,
    using random: inout SplitMix64
  ) -> Changeset {
    let live = graph.keys.sorted()
    let items = live.filter { graph[$0]!.entity == ConformanceSchema.item }
    // A target: mostly a live item, sometimes nothing, a number never used, or one deleted.
    func target() -> ObjectID? {
      switch Int.random(in: 0..<10, using: &random) {
      case 0: return nil
      case 1: return ObjectID(rawValue: nextNumber + 50)
      case 2: return ObjectID(rawValue: UInt64.random(in: 1..<max(nextNumber, 2), using: &random))
      default: return items.randomElement(using: &random)
      }
    }
    var inserted: [ObjectSnapshot] = []
    for _ in 0..<Int.random(in: 0...2, using: &random) {
      let number = nextNumber
      nextNumber += 1
      if Bool.random(using: &random) {
        inserted.append(ConformanceSchema.item(number, parent: target()?.rawValue))
      } else {
        inserted.append(
          ConformanceSchema.note(number, text: "n\(number)", item: target()?.rawValue))
      }
    }
    var updated: [ObjectUpdate] = []
    for id in live.shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random)) {
      let snapshot = graph[id]!
      let change: PropertyChange
      if snapshot.entity == ConformanceSchema.note {
        change = PropertyChange(property: 1, kind: .set(target().map { .reference($0) } ?? .null))
      } else if Bool.random(using: &random) {
        change = PropertyChange(
          property: ConformanceSchema.parent, kind: .set(target().map { .reference($0) } ?? .null))
      } else {
        guard case .references(let children) = snapshot.values[ConformanceSchema.children] else {
          continue
        }
        let seed = random.next()
        change = PropertyChange(
          property: ConformanceSchema.children,
          kind: .edit(edits(of: children, seed: seed, target)))
      }
      updated.append(ObjectUpdate(id: id, entity: snapshot.entity, changes: [change]))
    }
    let deleted = Array(live.shuffled(using: &random).prefix(Int.random(in: 0...2, using: &random)))
    return Changeset(
      inserted: inserted, updated: updated, deleted: deleted, nextObjectNumber: nextNumber)
  }

  /// A few edits that fit `children`: inserts of targets not in it, removes and moves.
  private static func edits(
    of children: [ObjectID], seed: UInt64, _ target: () -> ObjectID?
  ) -> [ListEdit] {
    var list = children
    var edits: [ListEdit] = []
    var random = SplitMix64(seed: seed)
    for _ in 0..<Int.random(in: 1...3, using: &random) {
      switch Int.random(in: 0..<3, using: &random) {
      case 0 where !list.isEmpty:
        let index = Int.random(in: 0..<list.count, using: &random)
        list.remove(at: index)
        edits.append(.remove(at: index))
      case 1 where list.count > 1:
        let (from, to) = (
          Int.random(in: 0..<list.count, using: &random),
          Int.random(in: 0..<list.count, using: &random)
        )
        list.insert(list.remove(at: from), at: to)
        edits.append(.move(from: from, to: to))
      default:
        guard let id = target(), !list.contains(id) else { continue }
        let index = Int.random(in: 0...list.count, using: &random)
        list.insert(id, at: index)
        edits.append(.insert(id, at: index))
      }
    }
    return edits
  }

  /// Whether every reference in `graph` names an object of it.
  static func everyReferenceIsLive(in graph: [ObjectID: ObjectSnapshot]) -> Bool {
    graph.values.allSatisfy { snapshot in
      snapshot.values.allSatisfy { value in
        switch value {
        case .reference(let target): graph[target] != nil
        case .references(let targets): targets.allSatisfy { graph[$0] != nil }
        default: true
        }
      }
    }
  }
}
