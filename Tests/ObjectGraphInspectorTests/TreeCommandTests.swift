import Foundation
import ObjectGraph
import Testing

@testable import ObjectGraphInspector

@Suite struct TreeCommandTests {
  @Test @MainActor func treeMatchesTheModelsOrderAfterMoves() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    let expected = try Stores.boxes(at: url)
    let run = inspect(
      "tree", url.path, "--entity", "Box", "--children", "children", "--label", "title")
    #expect(run.status == 0)
    #expect(run.errors.isEmpty)
    #expect(run.output.split(separator: "\n").map(String.init) == expected)
  }

  @Test @MainActor func depthCutsTheTreeAndSaysWhatIsHidden() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    let run = inspect(
      "tree", url.path, "--entity", "Box", "--children", "children", "--label", "title",
      "--depth", "2")
    #expect(
      run.output == """
        - Inbox (#1)
          - Write report (#4)
          - Call Ann (#3)
        - Projects (#5)
          - Garden (#6) (+3 children not shown)

        """)
    let ids = inspect("tree", url.path, "--entity", "Box", "--children", "children", "--depth", "1")
    #expect(ids.output == "- #1 (+2 children not shown)\n- #5 (+1 child not shown)\n")
  }

  @Test @MainActor func treeNeedsAToManyRelationshipOfTheEntityToItself() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("items.ogstore")
    try Stores.items(at: url)
    let run = inspect("tree", url.path, "--entity", "Item", "--children", "notes")
    #expect(run.status == InspectorError.Code.usage.rawValue)
    #expect(run.errors.contains("Item.notes is not a to-many relationship to Item"))
    let missing = inspect("tree", url.path, "--entity", "Item")
    #expect(missing.status == InspectorError.Code.usage.rawValue)
    #expect(missing.errors.contains("missing --children KEY"))
    let label = inspect("tree", url.path, "--entity", "Note", "--children", "x")
    #expect(label.errors.contains("Note has no property x"))
  }

  @Test @MainActor func aDeepChainPrintsWithoutRecursion() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("chain.ogstore")
    do {
      let container = try ObjectContainer(for: Box.self, storeURL: url)
      defer { container.close() }
      let context = container.mainContext
      var parent = Box(title: "0")
      context.insert(parent)
      for level in 1..<3_000 { parent = Box(title: "\(level)", parent: parent) }
      try context.save()
    }
    let run = inspect(
      "tree", url.path, "--entity", "Box", "--children", "children", "--label", "title")
    #expect(run.status == 0)
    let lines = run.output.split(separator: "\n")
    #expect(lines.count == 3_000)
    #expect(lines.last == Substring(String(repeating: "  ", count: 2_999) + "- 2999 (#3000)"))
  }

  @Test @MainActor func objectsOnlyInACycleFollowTheRoots() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    // Garden (#6) lists Projects (#5), which lists Garden: a cycle no root reaches.
    let schema = try BinaryStoreHeader.read(from: url).schema
    let store = BinaryStore(url: url)
    try store.open(schema: schema)
    let children = try #require(schema.entities[0].propertyIndex(named: "children"))
    try store.save(
      Changeset(
        updated: [
          ObjectUpdate(
            id: ObjectID(rawValue: 6), entity: 0,
            changes: [
              PropertyChange(
                property: children, kind: .set(.references([.init(rawValue: 5)])))
            ])
        ], nextObjectNumber: 1))
    store.close()
    let run = inspect(
      "tree", url.path, "--entity", "Box", "--children", "children", "--label", "title")
    #expect(run.status == 0)
    #expect(
      run.output == """
        - Inbox (#1)
          - Write report (#4)
          - Call Ann (#3)
        - Buy milk (#2)
        - Plant tulips (#7)
        - Fix the fence (#8)
        Not under any root (in a cycle):
        - Projects (#5)
          - Garden (#6)
            - Projects (#5) (shown above)

        """)
    #expect(inspect("verify", url.path).status == InspectorError.Code.damagedStore.rawValue)
  }
}
