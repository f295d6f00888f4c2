import Foundation
import Testing

@testable import ObjectGraph

/// The context knows what changed, rolls back every kind of change, and a failed save
/// changes nothing.
@Suite struct ChangeTrackingTests {
  /// A saved tree: inbox with A, B, C; archive empty.
  private func savedTree() throws -> (Stack, inbox: Box, archive: Box) {
    let stack = try Stack()
    let inbox = Box(title: "Inbox")
    let archive = Box(title: "Archive")
    stack.context.insert(inbox)
    stack.context.insert(archive)
    for title in ["A", "B", "C"] { _ = Box(title: title, parent: inbox) }
    try stack.context.save()
    return (stack, inbox, archive)
  }

  @Test func insertedUpdatedAndDeletedObjectsAreTracked() throws {
    let (stack, inbox, archive) = try savedTree()
    #expect(!stack.context.hasChanges)
    inbox.title = "In"
    let fresh = Box(title: "New", parent: archive)
    stack.context.delete(inbox.children[0])
    #expect(stack.context.hasChanges)
    #expect(stack.context.insertedObjects == [fresh])
    #expect(Set(stack.context.updatedObjects) == [inbox, archive])
    #expect(stack.context.deletedObjects.map { ($0 as! Box).title } == ["A"])
    #expect(stack.context.changedValues(of: inbox)["title"] == .string("In"))
    #expect(stack.context.committedValues(of: inbox)["title"] == .string("Inbox"))
    #expect(stack.context.changedValues(of: archive).keys.sorted() == ["children"])
  }

  @Test func settingTheSameValueIsNotAChange() throws {
    let (stack, inbox, _) = try savedTree()
    inbox.title = "Inbox"
    inbox.children[0].parent = inbox
    #expect(!stack.context.hasChanges)
  }

  @Test func rollbackRestoresAttributes() throws {
    let (stack, inbox, _) = try savedTree()
    inbox.title = "Changed"
    inbox.detail = "More"
    stack.context.rollback()
    #expect(inbox.title == "Inbox")
    #expect(inbox.detail == "")
    #expect(!stack.context.hasChanges)
  }

  @Test func rollbackRestoresBothSidesOfAMovedChild() throws {
    let (stack, inbox, archive) = try savedTree()
    let b = inbox.children[1]
    b.parent = archive
    inbox.children.move(fromOffsets: [0], toOffset: 2)
    stack.context.rollback()
    #expect(inbox.children.map(\.title) == ["A", "B", "C"])
    #expect(archive.children.isEmpty)
    #expect(b.parent === inbox)
    // Index answers follow the rollback.
    let inArchive = try stack.context.fetch(
      FetchDescriptor<Box>(predicate: #Predicate { $0.parent?.title == "Archive" }))
    #expect(inArchive.isEmpty)
  }

  @Test func rollbackRemovesInsertedObjects() throws {
    let (stack, inbox, _) = try savedTree()
    let draft = Box(title: "Draft", parent: inbox)
    stack.context.rollback()
    #expect(draft.context == nil)
    #expect(draft.parent == nil)
    #expect(inbox.children.map(\.title) == ["A", "B", "C"])
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 5)
  }

  @Test func rollbackBringsDeletedSubtreesBack() throws {
    let (stack, inbox, _) = try savedTree()
    stack.context.delete(inbox)
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 1)
    stack.context.rollback()
    #expect(!inbox.isDeleted)
    #expect(inbox.children.map(\.title) == ["A", "B", "C"])
    #expect(inbox.children.allSatisfy { $0.parent === inbox && !$0.isDeleted })
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 5)
  }

  @Test func aUniqueClashFailsTheSaveAndChangesNothing() throws {
    let stack = try Stack()
    stack.context.insert(Tag(name: "red"))
    try stack.context.save()
    let before = try stack.store.load().objects
    let clash = Tag(name: "red")
    stack.context.insert(clash)
    let error = try #require(throws: ObjectGraphError.self) { try stack.context.save() }
    #expect(error.code == .uniqueConstraint)
    #expect(error.entity == "Tag")
    #expect(error.property == "name")
    #expect(error.message.contains("\"red\""))
    #expect(try stack.store.load().objects == before)
    #expect(stack.context.insertedObjects == [clash])
    // Fixing the value lets the same pending changes save.
    clash.name = "blue"
    try stack.context.save()
    #expect(try stack.reopened().context.fetchCount(FetchDescriptor<Tag>()) == 2)
  }

  /// Thousands of new unique values are indexed on another thread while the save makes its
  /// changeset: a clash among them must still fail the save, and nothing is written.
  @Test(arguments: StoreKind.allCases)
  func aClashAmongThousandsOfNewObjectsFailsTheSave(kind: StoreKind) throws {
    let stack = try Stack(kind)
    let count = EntityTable.backgroundBuildThreshold + 100
    let tags = (0..<count).map { Tag(name: "tag \($0)") }
    for tag in tags { stack.context.insert(tag) }
    tags[count - 1].name = "tag 7"
    let error = try #require(throws: ObjectGraphError.self) { try stack.context.save() }
    #expect(error.code == .uniqueConstraint)
    #expect(error.message.contains("\"tag 7\""))
    #expect(try stack.store.load().objects.isEmpty)
    tags[count - 1].name = "last"
    try stack.context.save()
    let reopened = try stack.reopened()
    #expect(try reopened.context.fetchCount(FetchDescriptor<Tag>()) == count)
    reopened.context.insert(Tag(name: "tag 9"))
    #expect(throws: ObjectGraphError.self) { try reopened.context.save() }
  }

  /// A save hands its new objects over in identifier order without sorting them, and a
  /// delivery lists them so: inserts, rollbacks, deletes of new objects and re-inserts must
  /// keep the inserted set in that order.
  @Test func newObjectsReachTheStoreAndObserversInIdentifierOrder() throws {
    let store = RecordingStore()
    let container = try ObjectContainer(for: allModels, store: store)
    let context = try ObjectContext(container)
    var delivered: [[ObjectID]] = []
    let token = context.observeChanges { delivered.append($0.inserted.map { $0.objectID! }) }
    defer { token.cancel() }
    let first = (0..<5).map { Box(title: "first \($0)") }
    for box in first { context.insert(box) }
    context.rollback()
    let second = (0..<6).map { Box(title: "second \($0)") }
    for box in second { context.insert(box) }
    context.delete(second[2])
    context.insert(first[1])  // rolled back, inserted again: a new, larger number
    let child = Box(title: "child", parent: second[0])
    try context.save()
    let saved = try #require(store.changesets.last).inserted.map(\.id)
    #expect(saved == saved.sorted())
    #expect(
      Set(saved)
        == Set((second.filter { $0 !== second[2] } + [first[1], child]).map { $0.objectID! }))
    #expect(delivered.allSatisfy { $0 == $0.sorted() })
    #expect(delivered.last.map(Set.init) == Set(saved))
  }

  @Test func everyClashIsFoundAfterEarlierOnesWereResolved() throws {
    let stack = try Stack()
    let tags = ["a", "b", "c"].map { Tag(name: $0) }
    for tag in tags { stack.context.insert(tag) }
    try stack.context.save()
    // Make and resolve clashes several ways: rename, delete, three holders of one value.
    tags[1].name = "a"
    tags[1].name = "b"
    try stack.context.save()
    let extra = Tag(name: "c")
    stack.context.insert(extra)
    stack.context.delete(extra)
    tags[0].name = "z"
    tags[1].name = "z"
    tags[2].name = "z"
    #expect(throws: ObjectGraphError.self) { try stack.context.save() }
    tags[1].name = "y"
    #expect(throws: ObjectGraphError.self) { try stack.context.save() }
    stack.context.delete(tags[2])
    try stack.context.save()
    // A later clash on a value never shared before is still refused.
    let late = Tag(name: "y")
    stack.context.insert(late)
    let error = try #require(throws: ObjectGraphError.self) { try stack.context.save() }
    #expect(error.code == .uniqueConstraint)
    #expect(error.message.contains("\"y\""))
  }

  @Test func uniqueValuesMayMoveBetweenObjectsInOneSave() throws {
    let stack = try Stack()
    let red = Tag(name: "red")
    let blue = Tag(name: "blue")
    stack.context.insert(red)
    stack.context.insert(blue)
    try stack.context.save()
    red.name = "tmp"
    blue.name = "red"
    red.name = "blue"
    try stack.context.save()
  }

  @Test func countBoundsAreCheckedAtSave() throws {
    let stack = try Stack()
    let club = Club(name: "Small")
    stack.context.insert(club)
    club.members = (0..<4).map { Person(name: "\($0)") }
    let error = try #require(throws: ObjectGraphError.self) { try stack.context.save() }
    #expect(error.code == .countBounds)
    #expect(error.property == "members")
    club.$members.remove(at: 0)
    try stack.context.save()
  }

  @Test func aFailingStoreLeavesTheContextAsItWas() throws {
    let (stack, inbox, _) = try savedTree()
    inbox.title = "Renamed"
    stack.container.close()
    #expect(throws: ObjectGraphError.self) { try stack.context.save() }
    #expect(stack.context.hasChanges)
    #expect(stack.context.committedValues(of: inbox)["title"] == .string("Inbox"))
  }

  @Test func saveHandsTheStoreOnlyWhatChanged() throws {
    let store = RecordingStore()
    let container = try ObjectContainer(for: allModels, store: store)
    let context = try ObjectContext(container)
    let inbox = Box(title: "Inbox")
    context.insert(inbox)
    for title in ["A", "B", "C"] { _ = Box(title: title, parent: inbox) }
    try context.save()
    #expect(store.changesets.last?.inserted.count == 4)

    inbox.children[1].title = "Renamed"
    try context.save()
    let entity = container.schema.entities[0]
    let title = try #require(entity.propertyIndex(named: "title"))
    let children = try #require(entity.propertyIndex(named: "children"))
    let parent = try #require(entity.propertyIndex(named: "parent"))
    #expect(
      store.changesets.last?.updated.map(\.changes) == [
        [PropertyChange(property: title, kind: .set(.string("Renamed")))]
      ])

    let d = Box(title: "D")
    inbox.$children.insert(d, at: 1)
    inbox.$children.remove(at: 0)
    try context.save()
    let last = try #require(store.changesets.last)
    #expect(last.inserted.map(\.id) == [d.objectID!])
    #expect(
      last.updated.first?.changes == [
        PropertyChange(
          property: children, kind: .edit([.insert(d.objectID!, at: 1), .remove(at: 0)]))
      ])
    #expect(
      last.updated.dropFirst().first?.changes == [
        PropertyChange(property: parent, kind: .set(.null))
      ])
  }
}
