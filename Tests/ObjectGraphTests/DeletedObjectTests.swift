import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// No save may refer to an object it deletes: relating an object to one deleted earlier in
/// the same context follows the delete rule as if the relation had been there at the
/// delete, a no-action rule's leftover reference fails the save, and the store itself
/// refuses a changeset that would leave it unopenable.
@Suite struct DeletedObjectTests {
  @Test(arguments: StoreKind.allCases)
  func aChildGivenADeletedParentIsDeletedByItsCascade(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let parent = Box(title: "Parent")
    stack.context.insert(parent)
    try stack.context.save()
    stack.context.delete(parent)
    let child = Box(title: "Child", parent: parent)  // the issue's "relate a new object to it"
    #expect(child.isDeleted == false && child.context == nil, "cascaded: never inserted")
    try stack.context.save()
    let reopened = try stack.reopened()
    #expect(try reopened.context.fetchCount(FetchDescriptor<Box>()) == 0)
  }

  @Test(arguments: StoreKind.allCases)
  func aDeletedChildAppendedToAParentIsNullifiedByItsRule(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let old = Box(title: "Old parent")
    let child = Box(title: "Child", parent: old)
    stack.context.insert(old)
    try stack.context.save()
    stack.context.delete(child)
    let parent = Box(title: "New parent")
    stack.context.insert(parent)
    parent.children.append(child)  // parent's nullify rule: the relation is undone
    #expect(parent.children.isEmpty && child.parent == nil)
    try stack.context.save()
    let reopened = try stack.reopened()
    let titles = try reopened.context.fetch(FetchDescriptor<Box>()).map(\.title).sorted()
    #expect(titles == ["New parent", "Old parent"])
  }

  @Test(arguments: StoreKind.allCases)
  func aReferenceLeftByNoActionFailsTheSaveNamingIt(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let owner = Person()
    let pet = Pet()
    pet.name = "Rex"
    owner.pets = [pet]
    stack.context.insert(owner)
    try stack.context.save()
    stack.context.delete(owner)
    #expect(pet.owner === owner, "no action leaves the inverse alone")
    let error = try #require(throws: ObjectGraphError.self) { try stack.context.save() }
    #expect(error.code == .danglingReference && error.entity == "Pet" && error.property == "owner")
    #expect(error.objectID == pet.objectID && error.message.contains("Person"))
    pet.owner = nil
    try stack.context.save()
    let reopened = try stack.reopened()
    #expect(try reopened.context.fetch(FetchDescriptor<Pet>()).map(\.name) == ["Rex"])
  }

  @Test func theBinaryStoreRefusesAChangesetThatWouldNotOpen() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    let before = try fileBytes(recorded.url)
    let reference = { (id: UInt64) in PersistentValue.reference(ObjectID(rawValue: id)) }
    let refused: [(Changeset, String)] = [
      (
        Changeset(
          inserted: [ConformanceSchema.item(20, parent: 3)], deleted: [ObjectID(rawValue: 3)],
          nextObjectNumber: 21),
        "refers through parent to #3, which this save deletes"
      ),
      (
        Changeset(inserted: [ConformanceSchema.item(20, parent: 99)], nextObjectNumber: 21),
        "refers through parent to #99, which is not stored"
      ),
      (
        Changeset(
          updated: [
            ObjectUpdate(
              id: ObjectID(rawValue: 2), entity: ConformanceSchema.item,
              changes: [
                PropertyChange(property: ConformanceSchema.parent, kind: .set(reference(77)))
              ])
          ], nextObjectNumber: 21),
        "refers through parent to #77"
      ),
      (
        Changeset(
          updated: [
            ObjectUpdate(
              id: ObjectID(rawValue: 1), entity: ConformanceSchema.item,
              changes: [
                PropertyChange(
                  property: ConformanceSchema.children,
                  kind: .edit([.insert(ObjectID(rawValue: 55), at: 0)]))
              ])
          ], nextObjectNumber: 21),
        "refers through children to #55"
      ),
      (
        ConformanceSchema.update(2, property: 0, .set(.int(57)), nextObjectNumber: 21),
        "saves 57 in flag, which is a bool attribute"
      ),
      (
        ConformanceSchema.update(
          2, property: ConformanceSchema.title, .set(.null), nextObjectNumber: 21),
        "in title, which is a string attribute"
      ),
    ]
    for (changeset, message) in refused {
      let error = try #require(throws: ObjectGraphError.self) { try recorded.store.save(changeset) }
      #expect(error.code == .corruptStore, "\(message)")
      #expect(error.message.contains("nothing written") && error.message.contains(message))
      #expect(try fileBytes(recorded.url) == before, "nothing written: \(message)")
    }
    try recorded.save(rename(2, "still usable"))
    recorded.store.close()
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
  }

  // MARK: Inserting a deleted object again

  @Test(arguments: StoreKind.allCases)
  func insertingAnObjectDeletedBeforeTheSaveCancelsItsDeletion(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let home = Box(title: "Home")
    let kitchen = Box(title: "Kitchen", parent: home)
    stack.context.insert(home)
    try stack.context.save()
    let id = try #require(kitchen.objectID)

    stack.context.delete(kitchen)
    #expect(kitchen.isDeleted && home.children.isEmpty)
    stack.context.insert(kitchen)
    #expect(!kitchen.isDeleted && kitchen.context === stack.context)
    #expect(kitchen.objectID == id, "the same object, not a new one")
    #expect(try stack.context.fetch(FetchDescriptor<Box>()).contains(kitchen))
    #expect(home.children.isEmpty, "the delete's nullify stays done")
    kitchen.parent = home
    try stack.context.save()

    let reopened = try stack.reopened()
    let loaded = try reopened.context.fetch(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)]))
    #expect(loaded.map(\.title) == ["Home", "Kitchen"])
    #expect(loaded[1].parent === loaded[0] && loaded[1].objectID == id)
  }

  @Test(arguments: StoreKind.allCases)
  func reloadingSampleDataDeletesEverythingAndRelatesTheSameObjectsAgain(_ kind: StoreKind) throws {
    var stack = try Stack(kind)
    // Apple's animals sample keeps its sample objects in statics and reloads them so.
    let categories = [Box(title: "Mammal"), Box(title: "Bird")]
    let animals = [Box(title: "Dog"), Box(title: "Cat"), Box(title: "Robin")]
    func insertSampleData(into context: ObjectContext) {
      for category in categories { context.insert(category) }
      for animal in animals { context.insert(animal) }
      animals[0].parent = categories[0]
      animals[1].parent = categories[0]
      animals[2].parent = categories[1]
    }
    insertSampleData(into: stack.context)
    try stack.context.save()
    for _ in 1...2 {
      try stack.context.delete(model: Box.self)  // cascades to the animals
      insertSampleData(into: stack.context)
      try stack.context.save()
      #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 5)
    }

    stack = try stack.reopened()
    let mammals = try #require(
      try stack.context.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.title == "Mammal" }))
        .first)
    #expect(mammals.children.map(\.title) == ["Dog", "Cat"])
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 5)
  }

  @Test(arguments: StoreKind.allCases)
  func insertingAnObjectWhoseDeletionWasSavedMakesANewObject(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let home = Box(title: "Home")
    let attic = Box(title: "Attic", parent: home)
    stack.context.insert(home)
    try stack.context.save()
    let oldID = try #require(attic.objectID)
    stack.context.delete(attic)
    try stack.context.save()
    #expect(attic.context == nil)

    stack.context.insert(attic)
    let newID = try #require(attic.objectID)
    #expect(newID != oldID && newID > oldID, "a new identifier, never a reused one")
    #expect(attic.title == "Attic" && attic.parent == nil, "its values, no relations")
    try stack.context.save()
    let reopened = try stack.reopened()
    let titles = try reopened.context.fetch(FetchDescriptor<Box>()).map(\.title).sorted()
    #expect(titles == ["Attic", "Home"])
  }

  /// The save/open invariant: random inserts, deletes (cascading), re-inserts of deleted
  /// objects (before and after their deletion is saved), relations to deleted objects and
  /// branches built before they are inserted (or thrown away); every save that returns
  /// leaves a file that opens, and holds what the context held.
  @Test(arguments: [1, 2, 3] as [UInt64])
  func everySaveLeavesAStoreThatOpensAndEqualsTheContext(seed: UInt64) throws {
    var random = SplitMix64(seed: TestScale.seed(seed))
    var stack = try Stack(.binary)
    var counter = 0
    var deletedBeforeSave: [Box] = []
    var deletedAndSaved: [Box] = []
    func live() throws -> [Box] {
      try stack.context.fetch(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)]))
    }
    for step in 0..<250 {
      var boxes = try live()
      switch random.next() % 10 {
      case 0, 1, 2:
        counter += 1
        let parent =
          boxes.isEmpty || random.next() % 4 == 0 ? nil : boxes.randomElement(using: &random)
        let box = Box(title: String(format: "box %04d", counter), parent: parent)
        stack.context.insert(box)
      case 3:
        guard let doomed = boxes.randomElement(using: &random) else { continue }
        stack.context.delete(doomed)
        deletedBeforeSave.append(doomed)
      case 4:
        // Insert again an object deleted earlier (saved or not).
        if random.next() % 2 == 0, let again = deletedBeforeSave.popLast() {
          if again.isDeleted || again.context == nil { stack.context.insert(again) }
        } else if let again = deletedAndSaved.popLast(), again.context == nil {
          stack.context.insert(again)
        }
      case 5:
        // Relate a live object to a deleted one (the delete rule decides), or two live ones.
        guard let child = boxes.randomElement(using: &random) else { continue }
        let parent =
          deletedBeforeSave.filter(\.isDeleted).randomElement(using: &random)
          ?? boxes.randomElement(using: &random)
        if let parent, parent !== child, !isAncestor(child, of: parent) { child.parent = parent }
      case 6:
        guard let parent = boxes.randomElement(using: &random), parent.children.count > 1 else {
          continue
        }
        parent.children.move(fromOffsets: [0], toOffset: parent.children.count)
      case 7:
        stack.context.rollback()
        deletedBeforeSave.removeAll()
      case 8:
        // A branch built before it is inserted, then related to a live box (which inserts
        // it), inserted on its own, or thrown away.
        var branch: [Box] = []
        for _ in 0..<(1 + Int(random.next() % 4)) {
          counter += 1
          let parent = branch.isEmpty ? nil : branch.randomElement(using: &random)
          branch.append(Box(title: String(format: "box %04d", counter), parent: parent))
        }
        switch random.next() % 3 {
        case 0:
          if let parent = boxes.randomElement(using: &random) {
            parent.children.insert(
              branch[0], at: random.next() % 2 == 0 ? 0 : parent.children.count)
          }
        case 1: stack.context.insert(branch.randomElement(using: &random)!)
        default: break
        }
      default:
        try stack.context.save()
        deletedAndSaved += deletedBeforeSave.filter { $0.context == nil }
        deletedBeforeSave.removeAll()
        let expected = try snapshot(of: try live())
        if step % 3 == 0 {
          stack = try stack.reopened()
          deletedBeforeSave.removeAll()
          deletedAndSaved.removeAll()
          #expect(try snapshot(of: try live()) == expected, "seed \(seed), step \(step)")
        }
      }
      boxes = []
    }
  }

  /// Whether `box` is `other` or one of its ancestors (relating them would make a cycle).

  /// Each box's title, its parent's title and its children's titles in order.
  private func snapshot(of boxes: [Box]) throws -> [String] {
    boxes.map { box in
      "\(box.title) < \(box.parent?.title ?? "-") > \(box.children.map(\.title).joined(separator: ","))"
    }
  }
}
