import Foundation
import Testing

@testable import ObjectGraph

/// Delete rules apply when `delete` is called; deny is checked at save.
@Suite struct DeleteRuleTests {
  @Test func nullifyRemovesTheObjectFromItsParent() throws {
    let stack = try Stack()
    let inbox = Box(title: "Inbox")
    stack.context.insert(inbox)
    let a = Box(title: "A", parent: inbox)
    let b = Box(title: "B", parent: inbox)
    try stack.context.save()
    stack.context.delete(a)
    #expect(inbox.children == [b])
    #expect(a.isDeleted)
    try stack.context.save()
    #expect(a.context == nil)
    #expect(try stack.reopened().context.fetchCount(FetchDescriptor<Box>()) == 2)
  }

  @Test func cascadeDeletesTheWholeSubtree() throws {
    let stack = try Stack()
    let root = Box(title: "Root")
    stack.context.insert(root)
    let child = Box(title: "Child", parent: root)
    for index in 0..<10 { _ = Box(title: "\(index)", parent: child) }
    let sibling = Box(title: "Sibling", parent: root)
    try stack.context.save()
    stack.context.delete(child)
    #expect(root.children == [sibling])
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 2)
    try stack.context.save()
    #expect(try stack.reopened().context.fetchCount(FetchDescriptor<Box>()) == 2)
  }

  /// 10,000 levels under a sanitizer, which looks for memory errors, not for the stack's end.
  @Test func cascadeReachesAHundredThousandLevelsWithoutRecursion() throws {
    let stack = try Stack()
    let root = Box(title: "Root")
    stack.context.insert(root)
    var parent = root
    for _ in 0..<TestScale.steps(100_000, sanitized: 10_000) {
      parent = Box(title: "", parent: parent)
    }
    try stack.context.save()
    weak let deepest = parent
    stack.context.delete(root)
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 0)
    try stack.context.save()
    parent = root
    #expect(deepest == nil)
    #expect(try stack.reopened().context.fetchCount(FetchDescriptor<Box>()) == 0)
  }

  @Test func denyFailsTheSaveNamingObjectAndRelationship() throws {
    let stack = try Stack()
    let ann = Person(name: "Ann")
    stack.context.insert(ann)
    let loan = Loan()
    loan.borrower = ann
    try stack.context.save()

    stack.context.delete(ann)
    let error = try #require(throws: ObjectGraphError.self) { try stack.context.save() }
    #expect(error.code == .denyRule)
    #expect(error.entity == "Person")
    #expect(error.property == "loans")
    #expect(error.objectID == ann.objectID)
    #expect(stack.context.hasChanges)
    // The store is untouched; rolling back restores Ann.
    stack.context.rollback()
    #expect(!ann.isDeleted)
    #expect(loan.borrower === ann)
    // Deleting the loan first lets Ann go.
    stack.context.delete(loan)
    stack.context.delete(ann)
    try stack.context.save()
    #expect(try stack.reopened().context.fetchCount(FetchDescriptor<Person>()) == 0)
  }

  @Test func noActionLeavesTheInverseAlone() throws {
    let stack = try Stack()
    let ann = Person(name: "Ann")
    stack.context.insert(ann)
    let pet = Pet()
    pet.owner = ann
    try stack.context.save()
    stack.context.delete(ann)
    #expect(pet.owner === ann)
    #expect(ann.pets == [pet])
  }

  @Test func deletingAnUnsavedObjectJustDropsIt() throws {
    let stack = try Stack()
    let inbox = Box(title: "Inbox")
    stack.context.insert(inbox)
    try stack.context.save()
    let draft = Box(title: "Draft", parent: inbox)
    stack.context.delete(draft)
    #expect(inbox.children.isEmpty)
    #expect(draft.context == nil)
    #expect(stack.context.insertedObjects.isEmpty)
    try stack.context.save()
    #expect(try stack.reopened().context.fetchCount(FetchDescriptor<Box>()) == 1)
  }

  @Test func deletingATargetOfAOneWayRelationshipRemovesIt() throws {
    let stack = try Stack()
    let item = Item(name: "Item")
    let red = Tag(name: "red")
    let blue = Tag(name: "blue")
    item.tags = [red, blue]
    stack.context.insert(item)
    try stack.context.save()
    stack.context.delete(red)
    #expect(item.tags == [blue])
    try stack.context.save()
    let reopened = try stack.reopened()
    let saved = try #require(try reopened.context.fetch(FetchDescriptor<Item>()).first)
    #expect(saved.tags.map(\.name) == ["blue"])
  }

  @Test func deleteAllOfAModelAppliesTheSameRules() throws {
    let stack = try Stack()
    for name in ["A", "B", "C"] {
      let item = Item(name: name)
      stack.context.insert(item)
      item.notes = [Note("1"), Note("2")]
    }
    try stack.context.save()
    try stack.context.delete(model: Item.self, where: #Predicate { $0.name != "B" })
    #expect(try stack.context.fetchCount(FetchDescriptor<Note>()) == 2)
    try stack.context.delete(model: Item.self)
    try stack.context.save()
    let reopened = try stack.reopened()
    #expect(try reopened.context.fetchCount(FetchDescriptor<Item>()) == 0)
    #expect(try reopened.context.fetchCount(FetchDescriptor<Note>()) == 0)
  }
}
