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

/// Two containers on one store file: the second is told the store is in use, the first
/// keeps working, and once the first is closed the file opens again.
@Suite struct ContainerFileTests {
  @Test func aSecondContainerOnAFileInUseIsRefused() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("shared.ogstore")
    let first = try ObjectContainer(for: Box.self, storeURL: url)
    let context = try ObjectContext(first)
    context.insert(Box(title: "First"))
    try context.save()
    let error = #expect(throws: ObjectGraphError.self) {
      try ObjectContainer(for: Box.self, storeURL: url)
    }
    #expect(error?.code == .storeInUse)
    #expect(error?.file == url)
    context.insert(Box(title: "Second"))
    try context.save()
    first.close()
    let again = try ObjectContext(ObjectContainer(for: Box.self, storeURL: url))
    #expect(try again.fetchCount(FetchDescriptor<Box>()) == 2)
  }

  @Test func aDamagedFileIsAnErrorNamingItAndIsLeftAlone() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("damaged.ogstore")
    do {
      let container = try ObjectContainer(for: Box.self, storeURL: url)
      let context = try ObjectContext(container)
      for index in 0..<3 {
        context.insert(Box(title: "\(index)"))
        try context.save()
      }
      container.close()
    }
    var bytes = try Data(contentsOf: url)
    bytes[bytes.count / 2] ^= 0x01
    try bytes.write(to: url)
    let error = #expect(throws: ObjectGraphError.self) {
      try ObjectContainer(for: Box.self, storeURL: url)
    }
    #expect(error?.code == .corruptStore)
    #expect(error?.file == url)
    #expect(try Data(contentsOf: url) == bytes)
  }
}
