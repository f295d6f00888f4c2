import Foundation
import Testing

@testable import ObjectGraph

/// The four stories that started ObjectGraph, end to end on every store, reopening the
/// store between steps (a relaunch sees only what was saved).
@Suite struct SeedStoryTests {
  private func roots<T: ManagedObject>(
    _ type: T.Type, in stack: Stack, sortBy: [SortDescriptor<T>] = []
  ) throws -> [T] where T: Box {
    try stack.context.fetch(
      FetchDescriptor<T>(predicate: #Predicate { $0.parent == nil }, sortBy: sortBy))
  }

  private func home(in stack: Stack) throws -> Box {
    try #require(
      try stack.context.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.title == "Home" }))
        .first)
  }

  /// Story 1: a tree of boxes nested to any depth, with add, cascade delete and delete-all.
  @Test(arguments: StoreKind.allCases)
  func boxesNestToAnyDepthAndCascadeAndDeleteAll(store: StoreKind) throws {
    var stack = try Stack(store)
    let root = Box(title: "Home")
    stack.context.insert(root)
    var deepest = root
    for level in 1...50 { deepest = Box(title: "Level \(level)", parent: deepest) }
    _ = Box(title: "Kitchen", parent: root)
    try stack.context.save()

    stack = try stack.reopened()
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 52)
    var level = try home(in: stack)
    for depth in 1...50 {
      level = try #require(level.children.first)
      #expect(level.title == "Level \(depth)")
    }

    // Add: an observer of the parent's children hears of it without a query.
    let home = try home(in: stack)
    #expect(observes({ _ = home.children }) { _ = Box(title: "Garage", parent: home) })
    #expect(home.children.map(\.title) == ["Level 1", "Kitchen", "Garage"])
    try stack.context.save()

    // Cascade delete of the deep branch, heard by the same kind of observer.
    stack = try stack.reopened()
    let reopenedHome = try self.home(in: stack)
    #expect(reopenedHome.children.map(\.title) == ["Level 1", "Kitchen", "Garage"])
    let branch = reopenedHome.children[0]
    #expect(observes({ _ = reopenedHome.children }) { stack.context.delete(branch) })
    #expect(reopenedHome.children.map(\.title) == ["Kitchen", "Garage"])
    try stack.context.save()

    stack = try stack.reopened()
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 3)
    #expect(try self.home(in: stack).children.map(\.title) == ["Kitchen", "Garage"])

    // Delete all: the button empties the store.
    try stack.context.delete(model: Box.self)
    try stack.context.save()
    stack = try stack.reopened()
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 0)
  }

  /// Story 2: items whose ordered notes come back A, B, C from the store, every time.
  @Test(arguments: StoreKind.allCases)
  func notesComeBackInTheirOrderAfterEveryReopen(store: StoreKind) throws {
    var stack = try Stack(store)
    for number in 0..<100 {
      let item = Item(name: String(format: "Item %03d", number))
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
    // An observer of one item's notes hears of an edit of the list; the edit is saved.
    let item = try #require(
      try stack.context.fetch(FetchDescriptor<Item>(sortBy: [SortDescriptor(\.name)])).first)
    #expect(observes({ _ = item.notes }) { item.$notes.move(from: 0, to: 2) })
    try stack.context.save()
    stack = try stack.reopened()
    let again = try #require(
      try stack.context.fetch(FetchDescriptor<Item>(sortBy: [SortDescriptor(\.name)])).first)
    #expect(again.notes.map(\.text) == ["B", "C", "A"])
  }

  /// Story 3: a list the user reorders by dragging; each drop is saved as one move.
  @Test(arguments: StoreKind.allCases)
  func aDraggedListKeepsItsNewOrder(store: StoreKind) throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("list.ogstore")
    let memory = InMemoryStore()
    func makeStore() -> RecordingStore {
      RecordingStore(base: store == .binary ? BinaryStore(url: url) : memory)
    }
    func list(in context: ObjectContext) throws -> Box {
      try #require(
        try context.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.title == "List" })).first)
    }
    var recorder = makeStore()
    var container = try ObjectContainer(for: allModels, store: recorder)
    var context = try ObjectContext(container)
    let created = Box(title: "List")
    context.insert(created)
    for title in ["A", "B", "C", "D", "E"] { _ = Box(title: title, parent: created) }
    try context.save()
    let children = try #require(container.schema.entities[0].propertyIndex(named: "children"))

    let drags: [(from: Int, to: Int, expected: [String], move: ListEdit)] = [
      (0, 3, ["B", "C", "A", "D", "E"], .move(from: 0, to: 2)),
      (4, 0, ["E", "B", "C", "A", "D"], .move(from: 4, to: 0)),
      (1, 5, ["E", "C", "A", "D", "B"], .move(from: 1, to: 4)),
    ]
    for drag in drags {
      container.close()
      recorder = makeStore()
      container = try ObjectContainer(for: allModels, store: recorder)
      context = try ObjectContext(container)
      let list = try list(in: context)
      #expect(
        observes({ _ = list.children }) {
          list.children.move(fromOffsets: [drag.from], toOffset: drag.to)
        })
      #expect(list.children.map(\.title) == drag.expected)
      try context.save()
      // The drag reached the store as a single move, not a rewrite of every sibling.
      #expect(
        recorder.changesets.map { $0.updated.flatMap(\.changes) } == [
          [PropertyChange(property: children, kind: .edit([drag.move]))]
        ])
    }
    container.close()
    container = try ObjectContainer(for: allModels, store: makeStore())
    context = try ObjectContext(container)
    #expect(try list(in: context).children.map(\.title) == ["E", "C", "A", "D", "B"])
  }

  /// Story 4: a Notion-like block tree browsed level by level.
  @Test(arguments: StoreKind.allCases)
  func aBlockTreeIsBrowsedLevelByLevel(store: StoreKind) throws {
    var stack = try Stack(store)
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

    func page1() throws -> Block {
      let roots = try stack.context.fetch(
        FetchDescriptor<Block>(
          predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.created)]))
      #expect(roots.map(\.text) == ["Page 0", "Page 1", "Page 2"])
      return roots[1]
    }
    var page = try page1()
    #expect(page.children.map(\.text) == ["Line 0", "Line 1", "Line 2", "Line 3"])
    let pageID = try #require(page.objectID)
    let level2 = try stack.context.fetch(
      FetchDescriptor<Block>(predicate: #Predicate { $0.parent?.objectID == pageID }))
    #expect(Set(level2) == Set(page.children))
    #expect(page.children[2].children.map(\.text) == ["Word 0", "Word 1"])

    // The open page hears of every change of its children without re-querying.
    let line = page.children[1]
    #expect(observes({ _ = page.children.map(\.text) }) { line.text = "Edited" })
    try stack.context.save()
    stack = try stack.reopened()
    page = try page1()
    #expect(observes({ _ = page.children }) { _ = Block("Line 4", parent: page, created: start) })
    try stack.context.save()
    stack = try stack.reopened()
    page = try page1()
    #expect(page.children.map(\.text) == ["Line 0", "Edited", "Line 2", "Line 3", "Line 4"])
    let edited = page.children[1]
    #expect(observes({ _ = page.children }) { stack.context.delete(edited) })
    try stack.context.save()
    stack = try stack.reopened()
    page = try page1()
    #expect(page.children.map(\.text) == ["Line 0", "Line 2", "Line 3", "Line 4"])
    #expect(try stack.context.fetchCount(FetchDescriptor<Block>()) == 3 + 12 + 24 - 3 + 1)
  }
}
