import Foundation
import Testing

@testable import ObjectGraph

// The four seed stories once more, with models declared as SwiftData apps declare them:
// stored properties without defaults set in a designated initializer after `super.init()`,
// relationships with `= []` and `= nil`, inverses between two classes left to inference, and
// a class related to itself naming its inverse on the to-many side.

/// Story 1's folder tree (a self-relationship: its inverse is declared, as it must be).
final class SDFolder: ManagedObject {
  @Attribute var title: String
  @Relationship var parent: SDFolder? = nil
  @Relationship(deleteRule: .cascade, inverse: \SDFolder.parent) var children: [SDFolder] = []

  init(title: String, parent: SDFolder? = nil) {
    super.init()
    self.title = title
    self.parent = parent
  }

  required init() { super.init() }
}

/// Story 2's items and their ordered notes (no inverse declared on either side).
final class SDItem: ManagedObject {
  @Attribute var name: String
  @Relationship(deleteRule: .cascade) var notes: [SDNote] = []

  init(name: String) {
    super.init()
    self.name = name
  }

  required init() { super.init() }
}

final class SDNote: ManagedObject {
  @Attribute var text: String
  @Relationship var item: SDItem? = nil

  init(text: String) {
    super.init()
    self.text = text
  }

  required init() { super.init() }
}

/// Story 3's list the user reorders by dragging (no inverse declared on either side).
final class SDList: ManagedObject {
  @Attribute var name: String
  @Relationship(deleteRule: .cascade) var tasks: [SDTask] = []

  init(name: String) {
    super.init()
    self.name = name
  }

  required init() { super.init() }
}

final class SDTask: ManagedObject {
  @Attribute var title: String
  @Attribute var isDone: Bool
  @Relationship var list: SDList? = nil

  init(title: String, isDone: Bool = false) {
    super.init()
    self.title = title
    self.isDone = isDone
  }

  required init() { super.init() }
}

/// Story 4's Notion-like blocks (a self-relationship, its inverse declared on the children).
final class SDBlock: ManagedObject {
  @Attribute var text: String
  @Attribute var created: Date
  @Relationship var parent: SDBlock? = nil
  @Relationship(deleteRule: .cascade, inverse: \SDBlock.parent) var children: [SDBlock] = []

  init(text: String, created: Date, parent: SDBlock? = nil) {
    super.init()
    self.text = text
    self.created = created
    self.parent = parent
  }

  required init() { super.init() }
}

/// What a view of a whole tree shows, filled by one fetch and then kept current only from
/// the context's deliveries, never by querying again.
private final class TitlesView {
  var titles: [ObjectID: String]
  var deliveries: [ObjectContextChanges] = []

  init(_ folders: [SDFolder]) {
    titles = Dictionary(
      uniqueKeysWithValues: folders.compactMap { folder in
        folder.objectID.map { ($0, folder.title) }
      })
  }

  func apply(_ changes: ObjectContextChanges) {
    deliveries.append(changes)
    for case let folder as SDFolder in changes.inserted {
      if let id = folder.objectID { titles[id] = folder.title }
    }
    for case let folder as SDFolder in changes.updated
    where changes.changedKeys(of: folder).contains("title") {
      if let id = folder.objectID { titles[id] = folder.title }
    }
    for id in changes.summary.deleted { titles[id] = nil }
  }
}

@Suite struct SwiftDataSeedStoryTests {
  private let folderModels: [ManagedObject.Type] = [SDFolder.self]
  private let itemModels: [ManagedObject.Type] = [SDItem.self, SDNote.self]
  private let listModels: [ManagedObject.Type] = [SDList.self, SDTask.self]
  private let blockModels: [ManagedObject.Type] = [SDBlock.self]

  private func folder(_ title: String, in stack: Stack) throws -> SDFolder {
    let found = try stack.context.fetch(
      FetchDescriptor<SDFolder>(predicate: #Predicate { $0.title == title }))
    #expect(found.count == 1)
    return try #require(found.first)
  }

  /// Every folder's title by identifier, from a fetch: what the view must agree with.
  private func fetchedTitles(in stack: Stack) throws -> [ObjectID: String] {
    var titles: [ObjectID: String] = [:]
    for folder in try stack.context.fetch(FetchDescriptor<SDFolder>()) {
      titles[try #require(folder.objectID)] = folder.title
    }
    return titles
  }

  /// Expects `changes` to be one edit of a list made only of `count` moves, which turn the
  /// stored identifiers `before` into `after`: a drag costs the store its moves, not a
  /// rewrite of every sibling.
  private func expectMoves(
    _ changes: [PropertyChange], count: Int, turning before: [ObjectID], into after: [ObjectID]
  ) throws {
    guard changes.count == 1, case .edit(let edits) = changes[0].kind else {
      Issue.record("the drag reached the store as \(changes), not as list edits")
      return
    }
    #expect(edits.count == count)
    #expect(edits.allSatisfy { if case .move = $0 { true } else { false } })
    var applied = before
    try applied.apply(edits)
    #expect(applied == after)
  }

  /// Story 1: a tree of folders nested to any depth, with add, rename, move, cascade delete
  /// and delete-all, a context-wide observer told of every change.
  @Test(arguments: StoreKind.allCases)
  func foldersNestToAnyDepthAndCascadeAndDeleteAll(store: StoreKind) throws {
    var stack = try Stack(store, models: folderModels)
    let home = SDFolder(title: "Home")
    stack.context.insert(home)
    var deepest = home
    for level in 1...50 { deepest = SDFolder(title: "Level \(level)", parent: deepest) }
    home.children.append(SDFolder(title: "Kitchen"))  // the other side of the inverse
    #expect(home.children.map(\.title) == ["Level 1", "Kitchen"])
    #expect(home.children[1].parent === home)
    #expect(deepest.parent?.title == "Level 49")
    try stack.context.save()

    stack = try stack.reopened()
    #expect(try stack.context.fetchCount(FetchDescriptor<SDFolder>()) == 52)
    var level = try folder("Home", in: stack)
    #expect(level.children.map(\.title) == ["Level 1", "Kitchen"])
    for depth in 1...50 {
      let child = try #require(level.children.first)
      #expect(child.title == "Level \(depth)")
      #expect(child.parent === level)
      level = child
    }
    #expect(level.children.isEmpty)

    // One fetch fills the view; from here on, only the observer keeps it current.
    var view = TitlesView(try stack.context.fetch(FetchDescriptor<SDFolder>()))
    var token = stack.context.observeChanges { [view] in view.apply($0) }
    let reopenedHome = try folder("Home", in: stack)
    let kitchen = reopenedHome.children[1]
    let level30 = try folder("Level 30", in: stack)

    // Add, by the designated initializer's parent: inserted at once, the view is told.
    var garage: SDFolder?
    #expect(
      observes({ _ = reopenedHome.children }) {
        garage = SDFolder(title: "Garage", parent: reopenedHome)
      })
    let newGarage = try #require(garage)
    #expect(newGarage.context === stack.context)
    stack.context.processPendingChanges()
    var delivery = try #require(view.deliveries.last)
    #expect(view.deliveries.count == 1)
    #expect(delivery.inserted == [newGarage])
    #expect(delivery.updated == [reopenedHome])
    #expect(delivery.changedKeys(of: reopenedHome) == ["children"])
    #expect(delivery.deleted.isEmpty)
    #expect(reopenedHome.children.map(\.title) == ["Level 1", "Kitchen", "Garage"])

    // Rename deep in the tree and near the top: one coalesced delivery naming both.
    level30.title = "Thirty"
    kitchen.title = "Pantry"
    stack.context.processPendingChanges()
    delivery = try #require(view.deliveries.last)
    #expect(view.deliveries.count == 2)
    #expect(Set(delivery.updated) == [level30, kitchen])
    #expect(delivery.changedKeys(of: level30) == ["title"])
    #expect(delivery.changedKeys(of: kitchen) == ["title"])

    // Move the pantry into the garage: both parents and the child are told.
    kitchen.parent = newGarage
    stack.context.processPendingChanges()
    delivery = try #require(view.deliveries.last)
    #expect(Set(delivery.updated) == [reopenedHome, newGarage, kitchen])
    #expect(delivery.changedKeys(of: reopenedHome) == ["children"])
    #expect(delivery.changedKeys(of: newGarage) == ["children"])
    #expect(delivery.changedKeys(of: kitchen) == ["parent"])
    #expect(reopenedHome.children.map(\.title) == ["Level 1", "Garage"])
    #expect(newGarage.children.map(\.title) == ["Pantry"])
    #expect(view.titles == (try fetchedTitles(in: stack)))
    try stack.context.save()
    token.cancel()

    // The view's identifiers outlive the relaunch: it agrees with what the store holds.
    stack = try stack.reopened()
    #expect(view.titles == (try fetchedTitles(in: stack)))
    #expect(view.titles.count == 53)
    #expect(try folder("Thirty", in: stack).parent?.title == "Level 29")
    #expect(try folder("Garage", in: stack).children.map(\.title) == ["Pantry"])

    // Cascade delete of the deep branch: 50 folders go at once, told in one delivery.
    token = stack.context.observeChanges { [view] in view.apply($0) }
    let deliveriesBefore = view.deliveries.count
    let home2 = try folder("Home", in: stack)
    let branch = home2.children[0]
    var branchIDs = Set<ObjectID>()
    var walk = [branch]
    while let next = walk.popLast() {
      branchIDs.insert(try #require(next.objectID))
      walk += next.children
    }
    #expect(branchIDs.count == 50)
    #expect(observes({ _ = home2.children }) { stack.context.delete(branch) })
    #expect(home2.children.map(\.title) == ["Garage"])
    #expect(branch.isDeleted)
    stack.context.processPendingChanges()
    #expect(view.deliveries.count == deliveriesBefore + 1)
    delivery = try #require(view.deliveries.last)
    #expect(Set(delivery.summary.deleted) == branchIDs)
    #expect(delivery.inserted.isEmpty)
    #expect(delivery.updated == [home2])
    #expect(delivery.changedKeys(of: home2) == ["children"])
    #expect(view.titles.count == 3)
    #expect(view.titles == (try fetchedTitles(in: stack)))  // the fetch sees the delete
    try stack.context.save()
    token.cancel()

    stack = try stack.reopened()
    #expect(try stack.context.fetchCount(FetchDescriptor<SDFolder>()) == 3)
    #expect(view.titles == (try fetchedTitles(in: stack)))
    #expect(Set(view.titles.values) == ["Home", "Garage", "Pantry"])
    #expect(try folder("Home", in: stack).children.map(\.title) == ["Garage"])

    // Delete all: the button empties the store, and the view hears of every folder.
    view = TitlesView(try stack.context.fetch(FetchDescriptor<SDFolder>()))
    token = stack.context.observeChanges { [view] in view.apply($0) }
    let everyID = Set(view.titles.keys)
    try stack.context.delete(model: SDFolder.self)
    stack.context.processPendingChanges()
    #expect(view.deliveries.count == 1)
    #expect(Set(try #require(view.deliveries.last).summary.deleted) == everyID)
    #expect(view.titles.isEmpty)
    #expect(try stack.context.fetchCount(FetchDescriptor<SDFolder>()) == 0)
    #expect(stack.context.hasChanges)
    try stack.context.save()
    token.cancel()
    stack = try stack.reopened()
    #expect(try stack.context.fetchCount(FetchDescriptor<SDFolder>()) == 0)
  }

  /// Story 2: items whose ordered notes, related from either side through an inferred
  /// inverse, come back in their order after every reopen.
  @Test(arguments: StoreKind.allCases)
  func notesKeepTheirOrderThroughEveryReopen(store: StoreKind) throws {
    var stack = try Stack(store, models: itemModels)
    let schema = stack.container.schema
    let noteEntity = try #require(schema.entities.first { $0.name == "SDNote" })
    let itemEntity = try #require(schema.entities.first { $0.name == "SDItem" })
    #expect(noteEntity.properties.first { $0.name == "item" }?.relationship?.inverse == "notes")
    #expect(itemEntity.properties.first { $0.name == "notes" }?.relationship?.inverse == "item")

    // Each item's notes in an order that is neither their creation order nor their text's.
    let orders = [
      ["A", "B", "C"], ["C", "A", "B"], ["B", "C", "A"], ["C", "B", "A"], ["A", "C", "B"],
      ["B", "A", "C"],
    ]
    func expected(_ number: Int) -> [String] { orders[number % orders.count] }
    for number in 0..<30 {
      let item = SDItem(name: String(format: "Item %03d", number))
      stack.context.insert(item)
      let notes = Dictionary(uniqueKeysWithValues: ["A", "B", "C"].map { ($0, SDNote(text: $0)) })
      let ordered = expected(number).map { notes[$0]! }
      if number.isMultiple(of: 2) {
        item.notes = ordered  // from the to-many side
      } else {
        for note in ordered { note.item = item }  // from the to-one side: appended in turn
      }
      #expect(item.notes.map(\.text) == expected(number))
      #expect(item.notes.allSatisfy { $0.item === item && $0.context === stack.context })
    }
    try stack.context.save()

    func items(in stack: Stack) throws -> [SDItem] {
      try stack.context.fetch(FetchDescriptor<SDItem>(sortBy: [SortDescriptor(\.name)]))
    }
    for _ in 0..<3 {
      stack = try stack.reopened()
      let loaded = try items(in: stack)
      #expect(loaded.count == 30)
      for (number, item) in loaded.enumerated() {
        #expect(item.name == String(format: "Item %03d", number))
        #expect(item.notes.map(\.text) == expected(number))
        #expect(item.notes.allSatisfy { $0.item === item })
      }
      #expect(try stack.context.fetchCount(FetchDescriptor<SDNote>()) == 90)
    }

    // An open item is told of each edit of its notes, exactly; the context of each object.
    let loaded = try items(in: stack)
    let item = loaded[1]  // C, A, B
    let other = loaded[2]  // B, C, A
    var listChanges: [ListChange] = []
    var contextChanges: [ObjectContextChanges] = []
    let listToken = stack.context.observe(item, relationship: \.notes) { listChanges.append($0) }
    let contextToken = stack.context.observeChanges { contextChanges.append($0) }

    #expect(observes({ _ = item.notes }) { item.notes.move(fromOffsets: [0], toOffset: 3) })
    stack.context.processPendingChanges()
    #expect(item.notes.map(\.text) == ["A", "B", "C"])
    #expect(listChanges == [ListChange(moved: [.init(from: 0, to: 2)])])

    let d = SDNote(text: "D")
    item.notes.insert(d, at: 1)
    stack.context.processPendingChanges()
    #expect(item.notes.map(\.text) == ["A", "D", "B", "C"])
    #expect(d.item === item)
    #expect(listChanges.last == ListChange(inserted: [1]))
    #expect(contextChanges.last?.inserted == [d])

    let b = item.notes[2]
    #expect(observes({ _ = item.notes.map(\.text) }) { b.text = "B!" })
    stack.context.processPendingChanges()
    #expect(listChanges.last == ListChange(updated: [2]))
    #expect(contextChanges.last?.updated == [b])
    #expect(contextChanges.last?.changedKeys(of: b) == ["text"])

    // A note moved to another item, from its to-one side: it leaves this list.
    let a = item.notes[0]
    a.item = other
    stack.context.processPendingChanges()
    #expect(item.notes.map(\.text) == ["D", "B!", "C"])
    #expect(other.notes.map(\.text) == ["B", "C", "A", "A"])
    #expect(listChanges.last == ListChange(removed: [0]))
    #expect(Set(try #require(contextChanges.last).updated) == [item, other, a])

    let c = item.notes[2]
    stack.context.delete(c)
    stack.context.processPendingChanges()
    #expect(item.notes.map(\.text) == ["D", "B!"])
    #expect(listChanges.last == ListChange(removed: [2]))
    #expect(contextChanges.last?.deleted == [c])
    #expect(listChanges.count == 5)
    #expect(contextChanges.count == 5)
    try stack.context.save()
    withExtendedLifetime((listToken, contextToken)) {}

    stack = try stack.reopened()
    var again = try items(in: stack)
    #expect(again[1].notes.map(\.text) == ["D", "B!"])
    #expect(again[2].notes.map(\.text) == ["B", "C", "A", "A"])
    #expect(again[2].notes[3].item === again[2])
    #expect(try stack.context.fetchCount(FetchDescriptor<SDNote>()) == 90)

    // Deleting an item takes its notes (cascade); the others keep theirs, in order.
    stack.context.delete(again[2])
    try stack.context.save()
    stack = try stack.reopened()
    again = try items(in: stack)
    #expect(again.count == 29)
    #expect(try stack.context.fetchCount(FetchDescriptor<SDNote>()) == 86)
    #expect(again[1].notes.map(\.text) == ["D", "B!"])
    #expect(again[2].name == "Item 003")
    #expect(again[2].notes.map(\.text) == expected(3))
  }

  /// Story 3: a list the user reorders by dragging; each drop reaches the observer as the
  /// exact move and the store as moves, never a rewrite, and the order survives the relaunch.
  @Test(arguments: StoreKind.allCases)
  func aDraggedListKeepsItsNewOrder(store: StoreKind) throws {
    var stack = try Stack(store, models: listModels)
    let created = SDList(name: "Groceries")
    stack.context.insert(created)
    for title in ["A", "B", "C", "D", "E"] { created.tasks.append(SDTask(title: title)) }
    #expect(created.tasks.allSatisfy { $0.list === created })
    try stack.context.save()
    let listEntity = try #require(stack.container.schema.entities.first { $0.name == "SDList" })
    let tasksProperty = try #require(listEntity.propertyIndex(named: "tasks"))

    func groceries(in stack: Stack) throws -> SDList {
      try #require(try stack.context.fetch(FetchDescriptor<SDList>()).first)
    }
    let drags: [(offsets: IndexSet, to: Int, expected: [String], change: ListChange)] = [
      ([0], 3, ["B", "C", "A", "D", "E"], ListChange(moved: [.init(from: 0, to: 2)])),
      ([4], 0, ["E", "B", "C", "A", "D"], ListChange(moved: [.init(from: 4, to: 0)])),
      ([1], 5, ["E", "C", "A", "D", "B"], ListChange(moved: [.init(from: 1, to: 4)])),
      // Two rows selected and dragged to the end together.
      (
        [0, 2], 5, ["C", "D", "B", "E", "A"],
        ListChange(moved: [.init(from: 0, to: 3), .init(from: 2, to: 4)])
      ),
    ]
    for drag in drags {
      stack = try stack.reopened()  // every drop in a fresh launch
      let list = try groceries(in: stack)
      let before = try list.tasks.map { try #require($0.objectID) }
      var heard: [ListChange] = []
      var saved: [Changeset] = []
      let listToken = stack.context.observe(list, relationship: \.tasks) { heard.append($0) }
      let saveToken = stack.context.observeSaves { event in
        if case .didSave(let changeset) = event { saved.append(changeset) }
      }
      #expect(
        observes({ _ = list.tasks }) {
          list.tasks.move(fromOffsets: drag.offsets, toOffset: drag.to)
        })
      #expect(list.tasks.map(\.title) == drag.expected)
      stack.context.processPendingChanges()
      #expect(heard == [drag.change])
      let after = try list.tasks.map { try #require($0.objectID) }
      #expect(heard.first?.apply(to: before, takingInsertionsFrom: after) == after)
      try stack.context.save()

      // The store is handed moves of the list alone, which give the new order.
      #expect(saved.count == 1)
      let changeset = try #require(saved.first)
      #expect(changeset.insertedObjects.isEmpty && changeset.deleted.isEmpty)
      #expect(changeset.updated.map(\.id) == [try #require(list.objectID)])
      let changes = changeset.updated.flatMap(\.changes)
      #expect(changes.map(\.property) == [tasksProperty])
      // A drag of k rows reaches the store as k moves, not a rewrite of the rows between.
      try expectMoves(changes, count: drag.offsets.count, turning: before, into: after)
      withExtendedLifetime((listToken, saveToken)) {}
    }

    // Checking a task and adding one at the top are told as exactly that.
    stack = try stack.reopened()
    let list = try groceries(in: stack)
    #expect(list.tasks.map(\.title) == ["C", "D", "B", "E", "A"])
    var heard: [ListChange] = []
    let token = stack.context.observe(list, relationship: \.tasks) { heard.append($0) }
    // A row dropped where it was picked up (either side of itself) changes nothing.
    list.tasks.move(fromOffsets: [2], toOffset: 3)
    list.tasks.move(fromOffsets: [2], toOffset: 2)
    stack.context.processPendingChanges()
    #expect(heard.isEmpty)
    #expect(!stack.context.hasChanges)
    list.tasks[2].isDone = true
    stack.context.processPendingChanges()
    #expect(heard == [ListChange(updated: [2])])
    let first = SDTask(title: "F")
    list.tasks.insert(first, at: 0)
    stack.context.processPendingChanges()
    #expect(heard.last == ListChange(inserted: [0]))
    #expect(first.list === list)
    list.tasks.move(fromOffsets: [0], toOffset: 6)
    stack.context.processPendingChanges()
    #expect(heard.last == ListChange(moved: [.init(from: 0, to: 5)]))
    #expect(heard.count == 3)
    try stack.context.save()
    withExtendedLifetime(token) {}

    stack = try stack.reopened()
    let reopened = try groceries(in: stack)
    #expect(reopened.tasks.map(\.title) == ["C", "D", "B", "E", "A", "F"])
    #expect(reopened.tasks.map(\.isDone) == [false, false, true, false, false, false])
    #expect(reopened.tasks.allSatisfy { $0.list === reopened })
  }

  /// Story 4: a Notion-like block tree browsed level by level; the open page and the
  /// sidebar of pages are told of every change without querying again.
  @Test(arguments: StoreKind.allCases)
  func aBlockTreeIsBrowsedLevelByLevel(store: StoreKind) throws {
    var stack = try Stack(store, models: blockModels)
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    for page in 0..<3 {
      // Created out of order, browsed by date.
      let root = SDBlock(text: "Page \(2 - page)", created: start + Double(2 - page))
      stack.context.insert(root)
      for line in 0..<4 {
        let block = SDBlock(text: "Line \(line)", created: start + 100 + Double(line), parent: root)
        for word in 0..<2 {
          block.children.append(SDBlock(text: "Word \(line).\(word)", created: start + 200))
        }
      }
    }
    try stack.context.save()

    func pages(in stack: Stack) throws -> [SDBlock] {
      try stack.context.fetch(
        FetchDescriptor<SDBlock>(
          predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.created)]))
    }
    func page1(in stack: Stack) throws -> SDBlock {
      let roots = try pages(in: stack)
      #expect(roots.map(\.text) == ["Page 0", "Page 1", "Page 2"])
      return try #require(roots.count > 1 ? roots[1] : nil)
    }

    // Level by level: the pages, a page's lines, a line's words.
    stack = try stack.reopened()
    var page = try page1(in: stack)
    #expect(page.children.map(\.text) == ["Line 0", "Line 1", "Line 2", "Line 3"])
    let pageID = try #require(page.objectID)
    let level2 = try stack.context.fetch(
      FetchDescriptor<SDBlock>(predicate: #Predicate { $0.parent?.objectID == pageID }))
    #expect(Set(level2) == Set(page.children))
    #expect(page.children[2].children.map(\.text) == ["Word 2.0", "Word 2.1"])
    #expect(page.children[2].children.allSatisfy { $0.parent?.parent === page })
    #expect(try stack.context.fetchCount(FetchDescriptor<SDBlock>()) == 3 + 12 + 24)

    // The open page and the sidebar (a live query of the pages) hear of each change.
    let sidebar = try stack.context.liveQuery(
      FetchDescriptor<SDBlock>(
        predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.created)]))
    var sidebarChanges: [ListChange] = []
    var pageChanges: [ListChange] = []
    var tokens = [
      sidebar.observe { sidebarChanges.append($0) },
      stack.context.observe(page, relationship: \.children) { pageChanges.append($0) },
    ]
    let line1 = page.children[1]
    #expect(observes({ _ = page.children.map(\.text) }) { line1.text = "Edited" })
    stack.context.processPendingChanges()
    #expect(pageChanges == [ListChange(updated: [1])])
    #expect(sidebarChanges.isEmpty)
    // A new line typed between two others.
    let typed = SDBlock(text: "Typed", created: start + 300)
    page.children.insert(typed, at: 2)
    stack.context.processPendingChanges()
    #expect(typed.parent === page)
    #expect(pageChanges.last == ListChange(inserted: [2]))
    #expect(page.children.map(\.text) == ["Line 0", "Edited", "Typed", "Line 2", "Line 3"])
    // Indent: the typed line goes under the line above it, after its words.
    typed.parent = line1
    stack.context.processPendingChanges()
    // The line above stays, its children changed: it is reported updated too.
    #expect(pageChanges.last == ListChange(removed: [2], updated: [1]))
    #expect(line1.children.map(\.text) == ["Word 1.0", "Word 1.1", "Typed"])
    // A new page, dated before the others, lands first in the sidebar.
    let newPage = SDBlock(text: "Page -1", created: start - 10)
    stack.context.insert(newPage)
    stack.context.processPendingChanges()
    // The sidebar heard of Page 1 each time its children changed, and of the new page.
    #expect(
      sidebarChanges == [
        ListChange(updated: [1]), ListChange(updated: [1]), ListChange(inserted: [0]),
      ])
    #expect(sidebar.results.map(\.text) == ["Page -1", "Page 0", "Page 1", "Page 2"])
    #expect(pageChanges.count == 3)
    try stack.context.save()
    tokens.removeAll()

    stack = try stack.reopened()
    #expect(try pages(in: stack).map(\.text) == ["Page -1", "Page 0", "Page 1", "Page 2"])
    page = try pages(in: stack)[2]
    #expect(page.text == "Page 1")
    #expect(page.children.map(\.text) == ["Line 0", "Edited", "Line 2", "Line 3"])
    #expect(page.children[1].children.map(\.text) == ["Word 1.0", "Word 1.1", "Typed"])

    // Delete a line with its words (cascade), and a whole page: both views are told.
    let sidebarAgain = try stack.context.liveQuery(
      FetchDescriptor<SDBlock>(
        predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.created)]))
    sidebarChanges.removeAll()
    pageChanges.removeAll()
    var deleted: [ObjectID] = []
    tokens = [
      sidebarAgain.observe { sidebarChanges.append($0) },
      stack.context.observe(page, relationship: \.children) { pageChanges.append($0) },
      stack.context.observeChanges { deleted += $0.summary.deleted },
    ]
    let edited = page.children[1]
    #expect(observes({ _ = page.children }) { stack.context.delete(edited) })
    stack.context.processPendingChanges()
    #expect(pageChanges == [ListChange(removed: [1])])
    #expect(deleted.count == 4)  // the line, its two words and the typed line
    #expect(page.children.map(\.text) == ["Line 0", "Line 2", "Line 3"])
    let page2 = try #require(sidebarAgain.results.last)
    #expect(page2.text == "Page 2")
    stack.context.delete(page2)
    stack.context.processPendingChanges()
    #expect(sidebarChanges == [ListChange(updated: [2]), ListChange(removed: [3])])
    #expect(deleted.count == 4 + 1 + 4 + 8)
    #expect(pageChanges.count == 1)
    try stack.context.save()
    tokens.removeAll()

    stack = try stack.reopened()
    #expect(try pages(in: stack).map(\.text) == ["Page -1", "Page 0", "Page 1"])
    page = try pages(in: stack)[2]
    #expect(page.children.map(\.text) == ["Line 0", "Line 2", "Line 3"])
    #expect(page.children[1].children.map(\.text) == ["Word 2.0", "Word 2.1"])
    #expect(try stack.context.fetchCount(FetchDescriptor<SDBlock>()) == 3 + 12 + 24 + 2 - 17)
  }
}
