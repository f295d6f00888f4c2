import Foundation
import Testing

@testable import ObjectGraph

/// Versions: the container counts its contexts' saves, a context's objects are at the
/// version it merged or saved last, each object at the version of the last save that
/// changed it, and a save says the version it is based on (a store is handed only saves
/// based on the latest).
@MainActor
@Suite struct StoreVersionTests {
  @Test(arguments: StoreKind.allCases)
  func versionsCountSavesAndEachObjectKnowsTheLastThatChangedIt(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let container = stack.container
    let context = stack.context
    #expect(container.storeVersion == 0)
    let root = Box(title: "Root")
    context.insert(root)
    let child = Box(title: "Child", parent: root)
    let other = Box(title: "Other", parent: root)
    #expect(context.storeVersion(of: root) == nil)  // not saved yet
    try context.save()
    #expect(container.storeVersion == 1)
    #expect(context.storeVersion == 1)
    #expect([root, child, other].map { context.storeVersion(of: $0) } == [1, 1, 1])

    let later = try container.newContext()  // loads at version 1
    func theirs(_ box: Box) -> Box { later.model(for: box.persistentModelID!) as! Box }
    #expect(later.storeVersion == 1)
    #expect(later.storeVersion(of: theirs(child)) == 1)

    child.title = "Renamed"
    try context.save()  // version 2 changes the child only
    #expect(container.storeVersion == 2)
    #expect([root, child, other].map { context.storeVersion(of: $0) } == [1, 2, 1])
    #expect(later.storeVersion == 1)  // not merged yet
    later.processPendingChanges()
    #expect(later.storeVersion == 2)
    #expect(
      [root, child, other].map { later.storeVersion(of: theirs($0)) } == [1, 2, 1])

    // A move in a list changes its owner; a new parent changes both sides.
    theirs(root).children.move(fromOffsets: [0], toOffset: 2)
    try later.save()  // version 3
    theirs(other).parent = theirs(child)
    try later.save()  // version 4: the other box, its old parent and its new one
    #expect(
      [root, child, other].map { later.storeVersion(of: theirs($0)) } == [4, 4, 4])
    context.processPendingChanges()
    #expect(context.storeVersion == 4)
    #expect([root, child, other].map { context.storeVersion(of: $0) } == [4, 4, 4])

    context.delete(other)
    #expect(context.storeVersion(of: other) == nil)  // deleted
    #expect(context.storeVersion(of: theirs(root)) == nil)  // another context's
  }

  @Test func aSaveSaysTheVersionItIsBasedOn() throws {
    let store = RecordingStore()
    let container = try ObjectContainer(for: allModels, store: store)
    let first = try container.newContext()
    let second = try container.newContext()
    first.insert(Box(title: "First's"))
    try first.save()
    second.insert(Box(title: "Second's"))
    try second.save()  // merges the first's save, then saves on it
    first.insert(Box(title: "First's again"))
    try first.save()
    #expect(store.changesets.map(\.baseVersion) == [0, 1, 2])
  }

  @Test func aSaveBasedOnAnOlderVersionIsNotWritten() throws {
    let store = RecordingStore()
    let container = try ObjectContainer(for: allModels, store: store)
    let context = try container.newContext()
    let box = Box(title: "Box")
    context.insert(box)
    try context.save()
    box.title = "Renamed"
    var changeset = context.makeChangeset()
    #expect(changeset.baseVersion == 1)
    changeset.baseVersion = 0
    let coordinator = container.coordinator
    let stale = try coordinator.save(
      changeset, generation: context.storeGeneration, by: context.historyMember)
    guard case .outdated = stale else {
      Issue.record("a save based on version 0 was taken at version 1")
      return
    }
    #expect(store.changesets.count == 1)
    changeset.baseVersion = 1
    let current = try coordinator.save(
      changeset, generation: context.storeGeneration, by: context.historyMember)
    guard case .saved(let version) = current else {
      Issue.record("a save based on the latest version was refused")
      return
    }
    #expect(version == 2)
    #expect(store.changesets.count == 2)
  }
}
