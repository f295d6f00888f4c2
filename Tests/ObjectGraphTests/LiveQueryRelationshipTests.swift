import Foundation
import Testing

@testable import ObjectGraph

/// Live queries whose predicate or sort reads through to-one relationships stay equal to a
/// fresh fetch when only the related objects change: random edits of a forest of boxes
/// (titles, dates, new parents, deletes, inserts), each followed by a delivery.
@MainActor
@Suite struct LiveQueryRelationshipTests {
  @Test(arguments: StoreKind.allCases)
  func liveQueriesReadingThroughParentsMatchAFreshFetch(_ kind: StoreKind) throws {
    var random = SplitMix64(seed: TestScale.seed(21))
    let stack = try Stack(kind)
    var boxes: [Box] = []
    var made = 0
    func make(parent: Box?) -> Box {
      made += 1
      let box = Box(
        title: "t\(made % 7)", parent: parent,
        created: Date(timeIntervalSince1970: Double(made * 37 % 101)))
      if parent == nil { stack.context.insert(box) }
      boxes.append(box)
      return box
    }
    for _ in 0..<6 {
      let root = make(parent: nil)
      for _ in 0..<4 {
        let child = make(parent: root)
        for _ in 0..<3 { _ = make(parent: child) }
      }
    }
    try stack.context.save()
    let (past, threshold) = (Date.distantPast, Date(timeIntervalSince1970: 50))
    let descriptors: [FetchDescriptor<Box>] = [
      FetchDescriptor(
        predicate: #Predicate { $0.parent?.title == "t3" }, sortBy: [SortDescriptor(\.title)]),
      FetchDescriptor(
        predicate: #Predicate { $0.parent != nil },
        sortBy: [SortDescriptor(\Box.parent?.created), SortDescriptor(\.title)]),
      FetchDescriptor(
        predicate: #Predicate { $0.parent?.parent?.title == "t1" },
        sortBy: [SortDescriptor(\.created)]),
      FetchDescriptor(
        predicate: #Predicate { ($0.parent?.created ?? past) > threshold },
        sortBy: [SortDescriptor(\.title, order: .reverse)]),
    ]
    let queries = try descriptors.map { try stack.context.liveQuery($0) }
    for step in 0..<300 {
      let live = boxes.filter { !$0.isDeleted && $0.context != nil }
      guard let box = live.randomElement(using: &random) else { break }
      let described: String
      switch random.next() % 6 {
      case 0, 1:
        box.title = "t\(random.next() % 7)"
        described = "title"
      case 2:
        box.created = Date(timeIntervalSince1970: Double(random.next() % 101))
        described = "created"
      case 3:
        // A new parent with no descendants of its own below the box: a root or a leaf-less
        // box that is not the box itself.
        let parents = live.filter { $0 !== box && $0.children.isEmpty == false && $0.parent == nil }
        box.parent = random.next() % 4 == 0 ? nil : parents.randomElement(using: &random)
        described = "parent"
      case 4 where live.count > 20:
        stack.context.delete(box)
        described = "delete"
      default:
        _ = make(parent: box.parent == nil ? box : box.parent)
        described = "insert"
      }
      if step % 40 == 39 { try stack.context.save() }
      stack.context.processPendingChanges()
      for (number, query) in queries.enumerated() {
        let fresh = try stack.context.fetch(descriptors[number])
        #expect(
          query.results.map(\.objectID) == fresh.map(\.objectID),
          "step \(step) (\(described)): query \(number)")
      }
    }
  }
}
