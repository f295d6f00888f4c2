import Foundation
import ObjectGraph
import Testing

/// The brief's "What a user writes", unchanged: the API contract apps are written against.
@Suite struct BriefExampleTests {
  @MainActor
  @Test func theBriefsExampleCompilesAndRuns() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("brief.ogstore")

    let container = try ObjectContainer(for: Box.self, storeURL: url)  // binary store
    let context = container.mainContext

    let inbox = Box(title: "Inbox")
    context.insert(inbox)
    let task = Box(title: "Task", parent: inbox)  // inbox.children == [task]
    inbox.children.move(fromOffsets: [0], toOffset: 1)  // or $children.move(...)
    try context.save()

    let roots = try context.fetch(
      FetchDescriptor<Box>(
        predicate: #Predicate { $0.parent == nil },
        sortBy: [SortDescriptor(\.created)]))

    #expect(inbox.children == [task])
    #expect(roots == [inbox])
    container.close()
    let reopened = try ObjectContainer(for: Box.self, storeURL: url)
    let saved = try reopened.mainContext.fetch(
      FetchDescriptor<Box>(predicate: #Predicate { $0.parent == nil }))
    #expect(saved.map(\.title) == ["Inbox"])
    #expect(saved.first?.children.map(\.title) == ["Task"])
  }
}
