import Foundation
import Testing

@testable import ObjectGraph

/// Inverses are kept up to date at once, on both sides, in every direction and kind.
@Suite struct RelationshipTests {
  @Test func settingAParentAppendsTheChildToItsChildren() {
    let inbox = Box(title: "Inbox")
    let task = Box(title: "Task", parent: inbox)
    let other = Box(title: "Other", parent: inbox)
    #expect(inbox.children == [task, other])
    #expect(task.parent === inbox)
  }

  @Test func appendingAChildSetsItsParent() {
    let inbox = Box(title: "Inbox")
    let task = Box(title: "Task")
    inbox.children.append(task)
    #expect(task.parent === inbox)
    inbox.$children.insert(Box(title: "First"), at: 0)
    #expect(inbox.children.map(\.title) == ["First", "Task"])
    #expect(inbox.children.allSatisfy { $0.parent === inbox })
  }

  @Test func removingAChildClearsItsParent() {
    let inbox = Box(title: "Inbox")
    let task = Box(title: "Task", parent: inbox)
    let kept = Box(title: "Kept", parent: inbox)
    inbox.children.removeAll { $0 === task }
    #expect(task.parent == nil)
    #expect(kept.parent === inbox)
    inbox.$children.remove(at: 0)
    #expect(kept.parent == nil)
    #expect(inbox.children.isEmpty)
  }

  @Test func clearingTheParentRemovesTheChildFromItsSiblings() {
    let inbox = Box(title: "Inbox")
    let a = Box(title: "A", parent: inbox)
    let b = Box(title: "B", parent: inbox)
    a.parent = nil
    #expect(inbox.children == [b])
  }

  @Test func movingAChildBetweenParentsRemovesItFromTheOldOne() {
    let inbox = Box(title: "Inbox")
    let archive = Box(title: "Archive")
    let task = Box(title: "Task", parent: inbox)
    let kept = Box(title: "Kept", parent: inbox)
    task.parent = archive
    #expect(inbox.children == [kept])
    #expect(archive.children == [task])
    // Through the to-many side as well.
    inbox.children.append(task)
    #expect(archive.children.isEmpty)
    #expect(task.parent === inbox)
    #expect(inbox.children == [kept, task])
  }

  @Test func settingTheCurrentParentAgainKeepsTheChildsPlace() throws {
    let stack = try Stack()
    let inbox = Box(title: "Inbox")
    stack.context.insert(inbox)
    let a = Box(title: "A", parent: inbox)
    _ = Box(title: "B", parent: inbox)
    try stack.context.save()
    a.parent = inbox
    #expect(inbox.children.map(\.title) == ["A", "B"])
    #expect(!stack.context.hasChanges)
  }

  @Test func assigningAWholeArrayUpdatesEveryInverse() {
    let list = Box(title: "List")
    let a = Box(title: "A", parent: list)
    let b = Box(title: "B", parent: list)
    let c = Box(title: "C")
    list.children = [c, a, a]
    #expect(list.children == [c, a])  // duplicates keep their first place
    #expect(b.parent == nil)
    #expect(c.parent === list)
    #expect(a.parent === list)
  }

  @Test func oneToOneTakesTheObjectAwayFromItsPreviousOwner() {
    let ann = Person(name: "Ann")
    let bob = Person(name: "Bob")
    let passport = Passport()
    ann.passport = passport
    #expect(passport.owner === ann)
    bob.passport = passport
    #expect(ann.passport == nil)
    #expect(passport.owner === bob)
    passport.owner = ann
    #expect(bob.passport == nil)
    #expect(ann.passport === passport)
  }

  @Test func manyToManyKeepsBothSides() {
    let ann = Person(name: "Ann")
    let bob = Person(name: "Bob")
    let chess = Club(name: "Chess")
    let go = Club(name: "Go")
    ann.clubs = [chess, go]
    chess.members.append(bob)
    #expect(chess.members == [ann, bob])
    #expect(go.members == [ann])
    #expect(bob.clubs == [chess])
    ann.clubs.removeAll { $0 === chess }
    #expect(chess.members == [bob])
    go.members = [bob]
    #expect(ann.clubs.isEmpty)
    #expect(bob.clubs == [chess, go])
  }

  @Test func selfReferentialTreesAndBareDeclarationsWork() {
    let page = Block("Page", created: Date())
    let line = Block("Line", parent: page, created: Date())
    #expect(page.children == [line])
    page.children.removeAll()
    #expect(line.parent == nil)
  }

  @Test func relationshipsWithoutInverseHoldTheirObjects() {
    let item = Item(name: "Item")
    let tag = Tag(name: "red")
    item.tags = [tag]
    #expect(item.tags == [tag])
  }

  @Test func relatingANewObjectToAnInsertedOneInsertsIt() throws {
    let stack = try Stack()
    let inbox = Box(title: "Inbox")
    stack.context.insert(inbox)
    let task = Box(title: "Task", parent: inbox)
    #expect(task.context === stack.context)
    let note = Note("Loose")
    let item = Item(name: "Item")
    item.notes.append(note)
    stack.context.insert(note)  // inserting one side brings the other
    #expect(item.context === stack.context)
    #expect(stack.context.insertedObjects.count == 4)
  }

  @Test func insertingAnObjectInsertsEverythingItReaches() throws {
    let stack = try Stack()
    let root = Box(title: "Root")
    var parent = root
    for level in 0..<20 { parent = Box(title: "\(level)", parent: parent) }
    stack.context.insert(parent)  // the deepest one
    #expect(root.context === stack.context)
    #expect(stack.context.insertedObjects.count == 21)
  }

  @Test func indexOperationsOnTheProjectionKeepTheirOrder() {
    let list = Box(title: "List")
    let boxes = (0..<5).map { Box(title: "\($0)") }
    for box in boxes { list.$children.append(box) }
    list.$children.move(from: 0, to: 4)
    #expect(list.children.map(\.title) == ["1", "2", "3", "4", "0"])
    list.$children.move(fromOffsets: [1, 3], toOffset: 0)
    #expect(list.children.map(\.title) == ["2", "4", "1", "3", "0"])
    list.$children.insert(boxes[3], at: 0)  // already related: moved
    #expect(list.children.map(\.title) == ["3", "2", "4", "1", "0"])
    #expect(list.$children.count == 5)
  }
}
