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
      contents = StoreContents(objects: objects, nextObjectNumber: 100)
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
}
