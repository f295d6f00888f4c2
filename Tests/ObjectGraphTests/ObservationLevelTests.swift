import Foundation
import Observation
import Testing

@testable import ObjectGraph

/// Every kind of mutation reaches every level of observation once, with the right content:
/// the context, the object, the relationship, a live query and `withObservationTracking`.
@Suite struct ObservationLevelTests {
  enum Mutation: String, CaseIterable, CustomTestStringConvertible {
    case attributeSet, toOneSet, orderedInsert, orderedRemove, orderedMove, wholeArray
    case inverseSideEffect, cascadeDelete, rollback, save
    var testDescription: String { rawValue }
  }

  /// A saved list with children A, B, C (B has a child), observed at every level.
  final class Fixture {
    let stack: Stack
    let list: Box
    let other: Box
    var contextDeliveries: [ObjectContextChanges] = []
    var objectChanges: [ObjectChange] = []
    var listChanges: [ListChange] = []
    var queryChanges: [ListChange] = []
    var tokens: [ObservationToken] = []
    let query: LiveQuery<Box>
    let tracked = LockedBox(0)

    init() throws {
      stack = try Stack()
      list = Box(title: "List")
      other = Box(title: "Other")
      stack.context.insert(list)
      stack.context.insert(other)
      for title in ["A", "B", "C"] { _ = Box(title: title, parent: list) }
      _ = Box(title: "B1", parent: list.children[1])
      try stack.context.save()
      query = try stack.context.liveQuery(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)]))
      tokens.append(stack.context.observeChanges { [unowned self] in contextDeliveries.append($0) })
      tokens.append(stack.context.observe(list) { [unowned self] in objectChanges.append($0) })
      tokens.append(
        stack.context.observe(list, relationship: \.children) { [unowned self] in
          listChanges.append($0)
        })
      tokens.append(query.observe { [unowned self] in queryChanges.append($0) })
      let tracked = self.tracked
      let list = self.list
      withObservationTracking {
        _ = list.title
        _ = list.detail
        _ = list.children.map(\.title)
      } onChange: {
        tracked.withLock { $0 += 1 }
      }
    }

    func titles() -> [String] { list.children.map(\.title) }
  }

  @Test(arguments: Mutation.allCases)
  func eachMutationReachesEveryLevelOnce(mutation: Mutation) throws {
    let fixture = try Fixture()
    let list = fixture.list
    let context = fixture.stack.context
    let before = fixture.query.results
    let childrenBefore = list.children
    switch mutation {
    case .attributeSet: list.title = "Renamed"
    case .toOneSet: list.children[0].parent = fixture.other
    case .orderedInsert: list.$children.insert(Box(title: "New"), at: 1)
    case .orderedRemove: list.$children.remove(at: 2)
    case .orderedMove: list.$children.move(from: 0, to: 2)
    case .wholeArray: list.children = [list.children[2], list.children[0]]
    case .inverseSideEffect: fixture.other.children.append(list.children[1])
    case .cascadeDelete: context.delete(list.children[1])
    case .rollback:
      list.title = "Changed"
      list.$children.move(from: 0, to: 1)
      context.processPendingChanges()
      fixture.contextDeliveries.removeAll()
      fixture.objectChanges.removeAll()
      fixture.listChanges.removeAll()
      fixture.queryChanges.removeAll()
      context.rollback()
    case .save:
      list.detail = "Saved"
      try context.save()
    }
    context.processPendingChanges()
    context.processPendingChanges()

    // Context level: exactly one delivery naming the list (or its removed children).
    #expect(fixture.contextDeliveries.count == 1)
    let delivery = try #require(fixture.contextDeliveries.first)
    // withObservationTracking fired (at most once per arming: once).
    #expect(fixture.tracked.withLock { $0 } == 1)

    // Relationship level: applying the difference to the old children gives the new ones.
    let listChanged = Set([
      .toOneSet, .orderedInsert, .orderedRemove, .orderedMove, .wholeArray, .inverseSideEffect,
      .cascadeDelete, .rollback,
    ]).contains(mutation)
    if listChanged {
      #expect(fixture.listChanges.count == 1)
      let change = try #require(fixture.listChanges.first)
      let rebuilt = change.apply(to: childrenBefore, takingInsertionsFrom: list.children)
      if mutation != .rollback { #expect(rebuilt == list.children) }
      #expect(delivery.changedKeys(of: list).contains("children"))
    }

    // Object level: the list's own keys.
    switch mutation {
    case .attributeSet:
      #expect(fixture.objectChanges.map(\.changedKeys) == [["title"]])
      #expect(fixture.listChanges.isEmpty)
    case .save:
      #expect(fixture.objectChanges.map(\.changedKeys) == [["detail"]])
    case .rollback:
      #expect(fixture.objectChanges.map(\.changedKeys) == [["title", "children"]])
      #expect(list.title == "List")
      #expect(fixture.titles() == ["A", "B", "C"])
    default:
      #expect(fixture.objectChanges.map(\.changedKeys) == [["children"]])
    }

    // Live query level: the difference rebuilds the results.
    if mutation == .rollback { return }
    #expect(fixture.queryChanges.count == 1)
    let queryChange = try #require(fixture.queryChanges.first)
    #expect(
      queryChange.apply(to: before, takingInsertionsFrom: fixture.query.results)
        == fixture.query.results)
    #expect(
      fixture.query.results
        == (try context.fetch(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)]))))
    if mutation == .cascadeDelete {
      #expect(delivery.deleted.map { ($0 as! Box).title }.sorted() == ["B", "B1"])
      #expect(queryChange.removed.count == 2)
    }
    if mutation == .orderedInsert {
      #expect(delivery.inserted.map { ($0 as! Box).title } == ["New"])
      #expect(queryChange.inserted.count == 1)
    }
  }
}
