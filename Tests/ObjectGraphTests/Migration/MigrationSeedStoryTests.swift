import Foundation
import Testing

@testable import ObjectGraph

/// The seed stories' stores, written by one release and opened by the next (an attribute
/// added to each model): every list keeps its order, the tree its shape, and the delete
/// rules still cascade.
@Suite struct MigrationSeedStoryTests {
  static let firstRelease: [ManagedObject.Type] = [
    Box.self, Item.self, Note.self, Tag.self, Block.self,
  ]

  @Test(arguments: StoreKind.allCases)
  func theSeedStoriesStoresMigrateWithEveryOrderKept(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    var random = SplitMix64(seed: TestScale.seed(20))
    // Written by the first release: a box tree five deep, items with ordered notes, a list
    // reordered by dragging, and a block tree.
    let expected = try store.open(Self.firstRelease) { context in
      let root = Box(title: "root")
      context.insert(root)
      var level = [root]
      for depth in 1...5 {
        level = level.flatMap { parent in
          (0..<3).map { Box(title: "\(parent.title)/\(depth).\($0)", parent: parent) }
        }
      }
      let list = Box(title: "list")
      context.insert(list)
      for number in 0..<200 { _ = Box(title: "row \(number)", parent: list) }
      for _ in 0..<300 {
        let from = Int(random.next() % 200)
        let to = Int(random.next() % 201)
        list.children.move(fromOffsets: IndexSet(integer: from), toOffset: to)
      }
      let item = Item(name: "groceries")
      context.insert(item)
      for number in 0..<20 {
        item.notes.insert(Note("note \(number)"), at: number % 3 == 0 ? 0 : item.notes.count)
      }
      let page = Block("page", created: Date(timeIntervalSince1970: 0))
      context.insert(page)
      for number in 0..<5 {
        let heading = Block(
          "heading \(number)", parent: page, created: Date(timeIntervalSince1970: 0))
        for line in 0..<4 {
          _ = Block(
            "line \(number).\(line)", parent: heading, created: Date(timeIntervalSince1970: 0))
        }
      }
      try context.save()
      return Snapshot(
        tree: Self.walk(root), list: list.children.map(\.title), notes: item.notes.map(\.text),
        blocks: page.children.map { [$0.text] + $0.children.map(\.text) })
    }
    // Opened by the next release.
    try store.open(SeedStoriesV2.types) { context in
      let boxes = try context.fetch(
        FetchDescriptor<SeedStoriesV2.Box>(predicate: #Predicate { $0.parent == nil }))
      let root = try #require(boxes.first { $0.title == "root" })
      let list = try #require(boxes.first { $0.title == "list" })
      #expect(Self.walk(root) == expected.tree, "the tree keeps its shape and every order")
      #expect(list.children.map(\.title) == expected.list, "the dragged order is kept")
      #expect(list.children.allSatisfy { $0.color == "none" })
      let item = try #require(try context.fetch(FetchDescriptor<SeedStoriesV2.Item>()).first)
      #expect(item.notes.map(\.text) == expected.notes)
      #expect(!item.isPinned && item.notes.allSatisfy { $0.edited == nil && $0.item === item })
      let pages = try context.fetch(
        FetchDescriptor<SeedStoriesV2.Block>(predicate: #Predicate { $0.parent == nil }))
      #expect(pages.first?.children.map { [$0.text] + $0.children.map(\.text) } == expected.blocks)
      #expect(pages.first?.kind == "paragraph")
      // The delete rules still cascade.
      context.delete(root)
      try context.save()
      #expect(try context.fetchCount(FetchDescriptor<SeedStoriesV2.Box>()) == 201)
    }
  }

  struct Snapshot {
    var tree: [String]
    var list: [String]
    var notes: [String]
    var blocks: [[String]]
  }

  /// The titles of a tree, depth first, children in order.
  static func walk(_ box: Box) -> [String] {
    [box.title] + box.children.flatMap(walk)
  }

  static func walk(_ box: SeedStoriesV2.Box) -> [String] {
    [box.title] + box.children.flatMap(walk)
  }
}
