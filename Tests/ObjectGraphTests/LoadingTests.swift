import Foundation
import Testing

@testable import ObjectGraph

/// A context makes the objects a store loads, of every entity in any order, and refuses
/// contents that do not fit the schema with an error naming the object.
@Suite struct LoadingTests {
  /// A store that loads the contents it was given and saves nothing.
  final class FixedStore: PersistentStore, @unchecked Sendable {
    let contents: StoreContents

    init(_ objects: [ObjectSnapshot]) {
      let largest = objects.map(\.id.rawValue).max() ?? 0
      contents = StoreContents(objects: objects, nextObjectNumber: max(100, largest + 1))
    }

    func open(schema: Schema) throws {}
    func load() throws -> StoreContents { contents }
    func save(_ changeset: Changeset) throws {}
    func close() {}
  }

  private static func box(
    _ number: UInt64, _ title: String, parent: UInt64? = nil, children: [UInt64] = []
  ) -> ObjectSnapshot {
    ObjectSnapshot(
      id: ObjectID(rawValue: number), entity: 0,
      values: [
        .uuid(UUID()), .string(title), .string(""), .date(Date(timeIntervalSince1970: 0)),
        parent.map { .reference(ObjectID(rawValue: $0)) } ?? .null,
        .references(children.map(ObjectID.init(rawValue:))),
      ])
  }

  private static func tag(_ number: UInt64, _ name: String) -> ObjectSnapshot {
    ObjectSnapshot(id: ObjectID(rawValue: number), entity: 1, values: [.string(name)])
  }

  private func load(_ objects: [ObjectSnapshot]) throws -> ObjectContext {
    let container = try ObjectContainer(for: [Box.self, Tag.self], store: FixedStore(objects))
    return try ObjectContext(container)
  }

  @Test func objectsOfSeveralEntitiesInAnyOrderAreLinked() throws {
    let context = try load([
      Self.box(1, "root", children: [3, 5]), Self.tag(2, "red"),
      Self.box(3, "first", parent: 1), Self.tag(4, "blue"), Self.box(5, "second", parent: 1),
    ])
    let roots = try context.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.parent == nil }))
    #expect(roots.map(\.title) == ["root"])
    #expect(roots[0].children.map(\.title) == ["first", "second"])
    #expect(roots[0].children.allSatisfy { $0.parent === roots[0] })
    let tags = try context.fetch(FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.name)]))
    #expect(tags.map(\.name) == ["blue", "red"])
    #expect(
      try context.fetch(FetchDescriptor<Tag>(predicate: #Predicate { $0.name == "red" })) == [
        tags[1]
      ])
  }

  @Test(arguments: [
    ("unknown entity", [ObjectSnapshot(id: ObjectID(rawValue: 1), entity: 7, values: [])]),
    (
      "has 5 values",
      [
        ObjectSnapshot(
          id: ObjectID(rawValue: 1), entity: 0, values: Array(repeating: .null, count: 5))
      ]
    ),
    ("which is not a stored Box", [LoadingTests.box(1, "child", parent: 9)]),
    (
      "which is not a stored Box",
      [LoadingTests.tag(2, "red"), LoadingTests.box(1, "child", parent: 2)]
    ),
    ("appears twice", [LoadingTests.box(1, "one"), LoadingTests.tag(1, "red")]),
    // Values after the failure (a string, a reference) are still to be freed.
    (
      "appears twice",
      [
        LoadingTests.box(1, "one"), LoadingTests.box(1, "again"),
        LoadingTests.box(2, "two", parent: 1),
      ]
    ),
    (
      "holds",
      [
        ObjectSnapshot(
          id: ObjectID(rawValue: 1), entity: 0, values: Array(repeating: .int(3), count: 6))
      ]
    ),
  ])
  func contentsThatDoNotFitTheSchemaAreRefused(words: String, objects: [ObjectSnapshot]) throws {
    let error = try #require(throws: ObjectGraphError.self) { _ = try load(objects) }
    #expect(error.code == .corruptStore)
    #expect(error.message.contains(words), "\(error.message)")
    #expect(error.objectID == ObjectID(rawValue: 1))
  }

  /// Identifiers far beyond the population (a store whose objects were mostly deleted long
  /// ago) go to the identity map's dictionary: they load, link and are refused twice as
  /// well as dense ones.
  @Test func sparseIdentifiersLoadAndRepeatedOnesAreRefused() throws {
    let far: UInt64 = 5_000_000
    let context = try load([
      Self.box(1, "root", children: [far, far + 7]), Self.box(far, "far", parent: 1),
      Self.box(far + 7, "farther", parent: 1),
    ])
    let root = try #require(context.object(with: ObjectID(rawValue: 1)) as? Box)
    #expect(root.children.map(\.title) == ["far", "farther"])
    #expect(root.children.allSatisfy { $0.parent === root })
    let error = try #require(throws: ObjectGraphError.self) {
      _ = try load([Self.box(1, "root"), Self.box(far, "far"), Self.box(far, "again")])
    }
    #expect(error.message.contains("appears twice"), "\(error.message)")
    #expect(error.objectID == ObjectID(rawValue: far))
  }

  // MARK: Loading in pieces

  /// 8,000 boxes and 1,000 tags, numbered from 1 in stored order, a tag after every eighth
  /// box: enough for several pieces (``ObjectLoader/minimumPieceSize``). Box `n` (from 0)
  /// is titled "box n"; boxes 0 and 4,000 are roots, every other box a child of the box
  /// before it in the first half or after it in the second, so lists and parents point
  /// both ways across pieces.
  private static func boxesInPieces() -> [ObjectSnapshot] {
    let boxCount = 8_000
    var numbers: [UInt64] = []
    var objects: [ObjectSnapshot] = []
    var next: UInt64 = 1
    for box in 0..<boxCount {
      numbers.append(next)
      next += box % 8 == 7 ? 2 : 1
    }
    func parent(_ box: Int) -> Int? {
      switch box {
      case 0, boxCount / 2: nil
      case ..<(boxCount / 2): box - 1
      default: box + 1 < boxCount ? box + 1 : boxCount / 2
      }
    }
    var children = [[UInt64]](repeating: [], count: boxCount)
    for box in 0..<boxCount {
      if let parent = parent(box) { children[parent].append(numbers[box]) }
    }
    for box in 0..<boxCount {
      objects.append(
        Self.box(
          numbers[box], "box \(box)", parent: parent(box).map { numbers[$0] },
          children: children[box]))
      if box % 8 == 7 { objects.append(Self.tag(numbers[box] + 1, "tag \(box / 8)")) }
    }
    return objects
  }

  @Test func objectsLoadedInPiecesAreLinkedIndexedAndTabled() throws {
    let objects = Self.boxesInPieces()
    let context = try load(objects)
    let boxes = try context.fetch(FetchDescriptor<Box>())
    #expect(boxes.count == 8_000)
    let byTitle = Dictionary(uniqueKeysWithValues: boxes.map { ($0.title, $0) })
    let roots = try context.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.parent == nil }))
    #expect(Set(roots.map(\.title)) == ["box 0", "box 4000"])
    // The first half is a chain down from box 0, the second a chain up from box 7,999 to
    // box 4,000's only child.
    #expect(byTitle["box 1"]!.parent === byTitle["box 0"])
    #expect(byTitle["box 3999"]!.parent === byTitle["box 3998"])
    #expect(byTitle["box 4000"]!.children.map(\.title) == ["box 7999"])
    #expect(byTitle["box 4001"]!.parent === byTitle["box 4002"])
    #expect(byTitle["box 7999"]!.parent === byTitle["box 4000"])
    for box in boxes {
      #expect(box.children.allSatisfy { $0.parent === box })
      if let parent = box.parent { #expect(parent.children.contains { $0 === box }) }
    }
    let tagName = "tag 999"
    let tags = try context.fetch(FetchDescriptor<Tag>(predicate: #Predicate { $0.name == tagName }))
    #expect(tags.map(\.name) == [tagName])
    // The unique ids are indexed on another thread from the values each piece noted as it
    // made its boxes: each id finds its own box, in every piece.
    for title in ["box 0", "box 2047", "box 2048", "box 5555", "box 7999"] {
      let id = byTitle[title]!.id
      let found = try context.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.id == id }))
      #expect(found.map(\.title) == [title])
    }
    #expect(try context.fetchCount(FetchDescriptor<Tag>()) == 1_000)
    // Each object knows its place in its table: deleting objects of every piece takes
    // exactly them out. Box 7,999 takes the chain below it (boxes 4,001 to 7,998) with it,
    // box 3 the boxes after it in the first half.
    for title in ["box 7999", "box 3"] { context.delete(byTitle[title]!) }
    for tag in try context.fetch(FetchDescriptor<Tag>()) where tag.name.hasSuffix("7") {
      context.delete(tag)
    }
    let left = try context.fetch(FetchDescriptor<Box>()).map(\.title)
    #expect(Set(left) == ["box 0", "box 1", "box 2", "box 4000"])
    #expect(try context.fetchCount(FetchDescriptor<Tag>()) == 900)
  }

  /// A failure in any piece refuses the load, naming the first object at fault in stored
  /// order, whatever the other pieces made by then.
  @Test(arguments: [
    // An object of 5 values in the first piece, or near the end, in the last.
    (100, "has 5 values", nil as Int?),
    (8_950, "has 5 values", nil),
    // A reference to no object, after every object is made: in the first piece, or the last.
    (100, "which is not a stored Box", nil),
    (8_990, "which is not a stored Box", nil),
    // A number stored twice, once in the first piece, once in the last.
    (8_999, "appears twice", 0),
    // Two objects at fault, in the second piece and the last: the second piece's is named.
    (3_000, "has 5 values", 8_950),
  ])
  func aFailureInAnyPieceRefusesTheLoad(at position: Int, words: String, other: Int?) throws {
    var objects = Self.boxesInPieces()
    func spoil(_ position: Int) {
      let id = objects[position].id
      switch words {
      case "has 5 values":
        objects[position] = ObjectSnapshot(
          id: id, entity: 0, values: Array(repeating: .null, count: 5))
      case "which is not a stored Box":
        objects[position] = Self.box(id.rawValue, "lost", parent: 1_000_000)
      default:
        objects[position] = Self.box(objects[other!].id.rawValue, "again")
      }
    }
    spoil(position)
    if words != "appears twice", let other { spoil(other) }
    let error = try #require(throws: ObjectGraphError.self) { _ = try load(objects) }
    #expect(error.code == .corruptStore)
    #expect(error.message.contains(words), "\(error.message)")
    let named = words == "appears twice" ? objects[other!].id : objects[position].id
    #expect(error.objectID == named)
  }
}
