import Foundation
import Testing

@testable import ObjectGraph

/// Relationship observers and live queries report differences that, applied to the previous
/// arrays, give the current ones; views kept by observation alone never go stale.
@Suite struct LiveObservationTests {
  /// A view's rows, kept current purely from the reported differences.
  final class Rows<Element: AnyObject> {
    var rows: [Element]
    var changes: [ListChange] = []
    init(_ rows: [Element]) { self.rows = rows }
    func apply(_ change: ListChange, current: [Element]) {
      changes.append(change)
      rows = change.apply(to: rows, takingInsertionsFrom: current)
    }
  }

  @Test func aRelationshipObserverGetsEachKindOfEdit() throws {
    let stack = try Stack()
    let list = Box(title: "List")
    stack.context.insert(list)
    let boxes = ["A", "B", "C", "D"].map { Box(title: $0, parent: list) }
    try stack.context.save()
    let view = Rows(list.children)
    let token = stack.context.observe(list, relationship: \.children) {
      view.apply($0, current: list.children)
    }

    list.$children.move(from: 0, to: 3)
    stack.context.processPendingChanges()
    #expect(view.changes.last == ListChange(moved: [.init(from: 0, to: 3)]))

    let e = Box(title: "E", parent: list)
    stack.context.processPendingChanges()
    #expect(view.changes.last == ListChange(inserted: [4]))

    boxes[2].title = "C!"
    stack.context.processPendingChanges()
    #expect(view.changes.last == ListChange(updated: [1]))

    stack.context.delete(boxes[1])
    stack.context.processPendingChanges()
    #expect(view.changes.last == ListChange(removed: [0]))

    list.children = [e, boxes[3]]
    stack.context.processPendingChanges()
    #expect(view.rows == list.children)
    #expect(view.changes.count == 5)
    _ = token
  }

  @Test func aLiveQueryFollowsInsertsDeletesAndSortChanges() throws {
    let stack = try Stack()
    for (index, title) in ["b", "d", "f"].enumerated() {
      stack.context.insert(Box(title: title, created: Date(timeIntervalSince1970: Double(index))))
    }
    let query = try stack.context.liveQuery(
      FetchDescriptor<Box>(
        predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.title)]))
    let view = Rows(query.results)
    let token = query.observe { view.apply($0, current: query.results) }
    #expect(query.results.map(\.title) == ["b", "d", "f"])

    let a = Box(title: "a")
    stack.context.insert(a)
    stack.context.processPendingChanges()
    #expect(query.lastChange == ListChange(inserted: [0]))

    query.results[3].title = "c"  // f moves between b and d
    stack.context.processPendingChanges()
    #expect(query.results.map(\.title) == ["a", "b", "c", "d"])
    #expect(query.lastChange.moved == [.init(from: 3, to: 2)])
    #expect(query.lastChange.updated == [2])

    _ = Box(title: "child", parent: a)  // not a root: stays out
    query.results[1].parent = a  // leaves the query
    stack.context.processPendingChanges()
    #expect(query.results.map(\.title) == ["a", "c", "d"])
    #expect(query.lastChange.removed == [1])
    #expect(query.lastChange.updated == [0] || query.lastChange.updated.isEmpty)

    stack.context.delete(query.results[2])
    stack.context.processPendingChanges()
    #expect(query.results.map(\.title) == ["a", "c"])
    #expect(view.rows == query.results)
    _ = token
  }

  @Test func aLimitedLiveQueryKeepsItsWindow() throws {
    let stack = try Stack()
    for title in ["c", "d", "e"] { stack.context.insert(Box(title: title)) }
    var descriptor = FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)])
    descriptor.fetchLimit = 2
    let query = try stack.context.liveQuery(descriptor)
    let view = Rows(query.results)
    let token = query.observe { view.apply($0, current: query.results) }
    stack.context.insert(Box(title: "a"))
    stack.context.processPendingChanges()
    #expect(query.results.map(\.title) == ["a", "c"])
    #expect(view.rows == query.results)
    _ = token
  }

  /// A list reordered and its owner renamed, both delivered, then the owner deleted
  /// (directly, or by a cascade from its parent) and brought back by `rollback()`: the
  /// list's observer hears of the saved order coming back, and a live query sorted by title
  /// of the saved title.
  @Test(arguments: [false, true])
  func aRollbackOfADeletedReorderedListDeliversItsSavedOrder(byCascade: Bool) throws {
    let stack = try Stack()
    let top = Box(title: "top")
    stack.context.insert(top)
    let list = Box(title: "list", parent: top)
    _ = ["a", "b", "c"].map { Box(title: $0, parent: list) }
    try stack.context.save()
    let saved = list.children
    let view = Rows(list.children)
    let token = stack.context.observe(list, relationship: \.children) {
      view.apply($0, current: list.children)
    }
    let byTitle = FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)])
    let query = try stack.context.liveQuery(byTitle)
    let rows = Rows(query.results)
    let queryToken = query.observe { rows.apply($0, current: query.results) }
    list.$children.move(from: 2, to: 0)
    list.title = "z list"
    stack.context.processPendingChanges()
    #expect(view.rows == list.children)
    #expect(query.results.last === list)
    stack.context.delete(byCascade ? top : list)
    stack.context.rollback()
    stack.context.processPendingChanges()
    #expect(list.children == saved)
    #expect(view.rows == list.children)
    #expect(query.results == (try stack.context.fetch(byTitle)))
    #expect(rows.rows == query.results)
    _ = (token, queryToken)
  }

  /// Random mutations of a random tree: after each delivery, every reported difference
  /// applied to the previous arrays gives the current ones.
  @Test(arguments: [7, 8, 9, 10] as [UInt64])
  func reportedDifferencesAlwaysRebuildTheCurrentArrays(seed: UInt64) throws {
    var random = SplitMix64(seed: TestScale.seed(seed))
    let stack = try Stack()
    var boxes: [Box] = []
    for index in 0..<30 {
      let box = Box(
        title: "\(random.next() % 50)", created: Date(timeIntervalSince1970: Double(index)))
      box.parent =
        boxes.isEmpty || random.next() % 3 == 0 ? nil : boxes.randomElement(using: &random)
      stack.context.insert(box)
      boxes.append(box)
    }
    try stack.context.save()
    let watched = Array(boxes.prefix(6))
    var views: [Rows<Box>] = []
    var tokens: [ObservationToken] = []
    for box in watched {
      let view = Rows(box.children)
      views.append(view)
      tokens.append(
        stack.context.observe(box, relationship: \.children) {
          view.apply($0, current: box.children)
        })
    }
    let query = try stack.context.liveQuery(
      FetchDescriptor<Box>(
        predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.title)]))
    let rootsView = Rows(query.results)
    tokens.append(query.observe { rootsView.apply($0, current: query.results) })
    let everything = try stack.context.liveQuery(
      FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title), SortDescriptor(\.created)]))
    let allView = Rows(everything.results)
    tokens.append(everything.observe { allView.apply($0, current: everything.results) })

    for round in 0..<40 {
      for _ in 0..<Int(random.next() % 6) {
        let live = boxes.filter { !$0.isDeleted && $0.context != nil }
        guard let box = live.randomElement(using: &random) else { break }
        switch random.next() % 7 {
        case 0: box.title = "\(random.next() % 50)"
        case 1:
          let parent = live.randomElement(using: &random)
          if let parent, parent !== box, !isAncestor(box, of: parent) {
            box.parent = parent
          } else {
            box.parent = nil
          }
        case 2:
          if box.children.count > 1 {
            box.$children.move(
              from: Int(random.next() % UInt64(box.children.count)),
              to: Int(random.next() % UInt64(box.children.count)))
          }
        case 3:
          let child = Box(
            title: "\(random.next() % 50)",
            created: Date(timeIntervalSince1970: Double(1000 + round)))
          box.$children.insert(child, at: Int(random.next() % UInt64(box.children.count + 1)))
          boxes.append(child)
        case 4:
          if !watched.contains(box) { stack.context.delete(box) }
        case 5: box.children = box.children.shuffled(using: &random)
        default: box.detail = "\(round)"
        }
      }
      if random.next() % 5 == 0 {
        stack.context.rollback()
      } else {
        stack.context.processPendingChanges()
      }
      for (box, view) in zip(watched, views) { #expect(view.rows == box.children) }
      #expect(rootsView.rows == query.results)
      #expect(
        query.results
          == (try stack.context.fetch(
            FetchDescriptor<Box>(
              predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.title)]))))
      #expect(allView.rows == everything.results)
      #expect(everything.results.count == (try stack.context.fetchCount(FetchDescriptor<Box>())))
      if random.next() % 4 == 0 { try stack.context.save() }
    }
  }

  /// Seed story: a nested child list, three levels deep, kept current by observation alone
  /// while children are added, edited, reordered and deleted.
  @Test func aNestedChildListStaysCurrentWithoutQueries() throws {
    let stack = try Stack()
    let root = Box(title: "Root")
    stack.context.insert(root)
    let level1 = ["A", "B"].map { Box(title: $0, parent: root) }
    let level2 = ["A1", "A2"].map { Box(title: $0, parent: level1[0]) }
    _ = ["A1a", "A1b"].map { Box(title: $0, parent: level2[0]) }
    try stack.context.save()

    // Each nested view keeps its rows (titles) from its own relationship observer.
    final class NestedView {
      let box: Box
      var titles: [String]
      var token: ObservationToken?
      var refreshes = 0
      init(_ box: Box, _ context: ObjectContext) {
        self.box = box
        titles = box.children.map(\.title)
        token = context.observe(box, relationship: \.children) { [unowned self] change in
          refreshes += 1
          var rows = change.apply(to: titles, takingInsertionsFrom: self.box.children.map(\.title))
          for index in change.updated { rows[index] = self.box.children[index].title }
          titles = rows
        }
      }
    }
    let views = [root, level1[0], level2[0]].map { NestedView($0, stack.context) }

    _ = Box(title: "A1c", parent: level2[0])  // add at level 3
    level1[1].title = "B edited"  // edit at level 2
    level2[0].$children.move(from: 0, to: 2)  // reorder at level 3
    stack.context.delete(level1[0].children[1])  // delete at level 2
    stack.context.processPendingChanges()

    #expect(views[0].titles == ["A", "B edited"])
    #expect(views[1].titles == ["A1"])
    #expect(views[2].titles == ["A1b", "A1c", "A1a"])
    #expect(views.map(\.refreshes) == [1, 1, 1])
    for view in views { #expect(view.titles == view.box.children.map(\.title)) }
  }
}
