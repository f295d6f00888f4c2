import Foundation
import Testing

@testable import ObjectGraph

/// The four stories that started ObjectGraph, end to end on the in-memory store.
@Suite struct SeedStoryTests {
  /// Story 1: a tree of boxes nested to any depth, with add, cascade delete and delete-all.
  @Test func boxesNestToAnyDepthAndCascadeAndDeleteAll() throws {
    var stack = try Stack()
    let home = Box(title: "Home")
    stack.context.insert(home)
    var deepest = home
    for level in 1...50 { deepest = Box(title: "Level \(level)", parent: deepest) }
    let kitchen = Box(title: "Kitchen", parent: home)
    try stack.context.save()
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 52)

    // An observer of the parent's children hears of the add and the delete without a query.
    #expect(observes({ _ = home.children }) { _ = Box(title: "Garage", parent: home) })
    #expect(home.children.titles == ["Level 1", "Kitchen", "Garage"])
    #expect(observes({ _ = home.children }) { stack.context.delete(home.children[0]) })
    #expect(home.children.titles == ["Kitchen", "Garage"])
    #expect(deepest.isDeleted)  // deleted with its ancestor, until the save
    try stack.context.save()
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 3)

    stack = try stack.reopened()
    let reopenedHome = try #require(
      try stack.context.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.parent == nil }))
        .first)
    #expect(reopenedHome.children.titles == ["Kitchen", "Garage"])
    _ = kitchen

    // Delete all: the button empties the store, children first or not.
    try stack.context.delete(model: Box.self)
    try stack.context.save()
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 0)
    stack = try stack.reopened()
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 0)
  }

  /// Story 2: items whose ordered notes come back A, B, C from the store, every time.
  @Test func notesComeBackInTheirOrderAfterEveryReopen() throws {
    var stack = try Stack()
    for number in 0..<100 {
      let item = Item(name: "Item \(number)")
      stack.context.insert(item)
      for text in ["A", "B", "C"] { item.notes.append(Note(text)) }
    }
    try stack.context.save()
    for _ in 0..<3 {
      stack = try stack.reopened()
      let items = try stack.context.fetch(FetchDescriptor<Item>(sortBy: [SortDescriptor(\.name)]))
      #expect(items.count == 100)
      for item in items {
        #expect(item.notes.map(\.text) == ["A", "B", "C"])
        #expect(item.notes.allSatisfy { $0.item === item })
      }
    }
    // An observer of one item's notes hears of an edit of the list.
    let item = try #require(try stack.context.fetch(FetchDescriptor<Item>()).first)
    #expect(observes({ _ = item.notes }) { item.$notes.move(from: 0, to: 2) })
    try stack.context.save()
    stack = try stack.reopened()
    let again = try #require(try stack.context.fetch(FetchDescriptor<Item>()).first)
    #expect(again.notes.map(\.text) == ["B", "C", "A"])
  }

  /// Story 3: a list the user reorders by dragging; each drop is saved as one move.
  @Test func aDraggedListKeepsItsNewOrder() throws {
    let store = RecordingStore()
    let container = try ObjectContainer(for: allModels, store: store)
    let context = try ObjectContext(container)
    let list = Box(title: "List")
    context.insert(list)
    for title in ["A", "B", "C", "D", "E"] { _ = Box(title: title, parent: list) }
    try context.save()

    #expect(observes({ _ = list.children }) { list.children.move(fromOffsets: [0], toOffset: 3) })
    #expect(list.children.titles == ["B", "C", "A", "D", "E"])
    try context.save()
    list.children.move(fromOffsets: [4], toOffset: 0)
    try context.save()
    #expect(list.children.titles == ["E", "B", "C", "A", "D"])

    // Each drag reached the store as a single move, not a rewrite of every sibling.
    let moves = store.changesets.suffix(2).map { $0.updated.flatMap(\.changes) }
    let listProperty = try #require(container.schema.entities[0].propertyIndex(named: "children"))
    #expect(
      moves[0] == [PropertyChange(property: listProperty, kind: .edit([.move(from: 0, to: 2)]))])
    #expect(
      moves[1] == [PropertyChange(property: listProperty, kind: .edit([.move(from: 4, to: 0)]))])

    let reopened = try ObjectContext(container)
    let saved = try #require(
      try reopened.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.title == "List" })).first)
    #expect(saved.children.titles == ["E", "B", "C", "A", "D"])
  }

  /// Story 4: a Notion-like block tree browsed level by level.
  @Test func aBlockTreeIsBrowsedLevelByLevel() throws {
    var stack = try Stack()
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    for page in 0..<3 {
      // Created out of order, browsed by date.
      let root = Block("Page \(2 - page)", created: start + Double(2 - page))
      stack.context.insert(root)
      for line in 0..<4 {
        let block = Block("Line \(line)", parent: root, created: start + 100 + Double(line))
        for word in 0..<2 { _ = Block("Word \(word)", parent: block, created: start + 200) }
      }
    }
    try stack.context.save()
    stack = try stack.reopened()

    let roots = try stack.context.fetch(
      FetchDescriptor<Block>(
        predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.created)]))
    #expect(roots.map(\.text) == ["Page 0", "Page 1", "Page 2"])
    let page = roots[1]
    #expect(page.children.map(\.text) == ["Line 0", "Line 1", "Line 2", "Line 3"])
    let pageID = try #require(page.objectID)
    let level2 = try stack.context.fetch(
      FetchDescriptor<Block>(predicate: #Predicate { $0.parent?.objectID == pageID }))
    #expect(Set(level2) == Set(page.children))
    #expect(page.children.allSatisfy { $0.parent?.objectID == pageID })
    #expect(page.children[2].children.map(\.text) == ["Word 0", "Word 1"])

    // The open page hears of an edit of a child without re-querying.
    let line = page.children[1]
    #expect(observes({ _ = page.children.map(\.text) }) { line.text = "Edited" })
    #expect(observes({ _ = page.children }) { _ = Block("Line 4", parent: page, created: start) })
    #expect(observes({ _ = page.children }) { stack.context.delete(line) })
    #expect(page.children.map(\.text) == ["Line 0", "Line 2", "Line 3", "Line 4"])
    try stack.context.save()
    #expect(try stack.context.fetchCount(FetchDescriptor<Block>()) == 3 + 12 + 24 - 3 + 1)
  }
}
