import Foundation
import Testing

@testable import ObjectGraph

/// Misuse of the public API stops the program with a message that names the objects, the
/// relationship and the contexts concerned, and says what to do instead; `fatalError` keeps
/// it in release builds. Each test runs the misuse in a child process (an exit test; its
/// body captures nothing, so it builds what it needs) and reads the message it printed.
@Suite struct MisuseTests {
  // MARK: Inserting

  @Test func insertingAnObjectOfAnotherContextNamesBothContexts() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let stack = try Stack()
      let box = Box(title: "Inbox")
      stack.context.insert(box)
      try stack.context.save()
      let other = try ObjectContext(stack.container)
      other.insert(box)
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "cannot insert Box #1 into a context of the container over an InMemoryStore: it "
          + "belongs to another context of the same container"))
    #expect(message.contains("use this context's own instance (object(with:) its objectID"))
  }

  @Test func insertingAnObjectOfAnotherContainerNamesBothStores() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let first = try Stack()
      let second = try Stack.forExitTest(.binary)
      let box = Box(title: "Inbox")
      first.context.insert(box)
      second.context.insert(box)
    }
    TemporaryDirectory.removeExitTestDirectory()
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "cannot insert Box #1 into a context of the container over the store at /"))
    #expect(
      message.contains(
        "store.ogstore: it belongs to a context of another container, over an InMemoryStore"))
    #expect(message.contains("insert a new Box with the same values into this context instead"))
  }

  @Test func insertingAnObjectOfAClassTheSchemaDoesNotListNamesTheClass() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let container = try ObjectContainer(for: Tag.self, store: InMemoryStore())
      let context = try ObjectContext(container)
      context.insert(Box(title: "Inbox"))
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "cannot insert a new Box into a context of the container over an InMemoryStore: Box "
          + "is not in its container's schema (Tag)"))
    #expect(message.contains("List Box.self in ObjectContainer(for:)"))
  }

  @Test func relatingANewObjectOfAClassTheSchemaDoesNotListNamesTheClass() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let container = try ObjectContainer(for: Tag.self, store: InMemoryStore())
      let context = try ObjectContext(container)
      let tag = Tag()
      context.insert(tag)
      Item().tags = [tag]
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "cannot insert a new Item into a context of the container over an InMemoryStore: Item "
          + "is not in its container's schema (Tag)"))
  }

  // MARK: Relating

  @Test func relatingObjectsOfTwoContextsNamesTheRelationship() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let stack = try Stack()
      let other = try ObjectContext(stack.container)
      let task = Box(title: "Task")
      let inbox = Box(title: "Inbox")
      stack.context.insert(task)
      other.insert(inbox)
      task.parent = inbox
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "cannot relate Box #1 and Box #1025 through Box.parent: Box #1 belongs to a context "
          + "of the container over an InMemoryStore and Box #1025 to another context of the "
          + "same container"))
    #expect(
      message.contains(
        "save Box #1025's context, then relate Box #1 to its own context's instance of "
          + "Box #1025"))
  }

  @Test func relatingObjectsOfTwoContainersNamesBothStores() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let first = try Stack()
      let second = try Stack()
      let inbox = Box(title: "Inbox")
      let task = Box(title: "Task")
      first.context.insert(inbox)
      second.context.insert(task)
      inbox.$children.append(task)
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "cannot relate Box #1 and Box #1 through Box.children: Box #1 belongs to a context of "
          + "the container over an InMemoryStore and Box #1 to a context of another "
          + "container, over an InMemoryStore"))
    #expect(message.contains("Objects of two containers cannot be related"))
  }

  /// A released context's objects keep their relationships read-only
  /// (``ReleasedContextTests``).
  @Test func changingARelationshipOfAReleasedObjectNamesIt() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let stack = try Stack()
      let item = Item(name: "Checking")
      stack.context.insert(item)
      item.notes.append(Note("rent"))
      try stack.context.save()
      var fetched: Item?
      try {
        fetched = try ObjectContext(stack.container).fetch(FetchDescriptor<Item>()).first
      }()
      fetched?.notes.append(Note("coffee"))
    }
    let message = try #require(result).standardErrorText
    #expect(message.contains("cannot change Item.notes of Item #1: its context was released"))
  }

  // MARK: Ordered to-many

  @Test func insertingPastTheEndNamesTheRelationship() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let inbox = Box(title: "Inbox")
      _ = Box(title: "Task", parent: inbox)
      inbox.$children.insert(Box(title: "Late"), at: 2)
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "Index out of range: insert position 2 in a new Box.children, which holds 1 objects "
          + "(valid positions are 0...1)"))
  }

  @Test func removingPastTheEndNamesTheRelationship() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let stack = try Stack()
      let inbox = Box(title: "Inbox")
      stack.context.insert(inbox)
      inbox.$children.remove(at: 0)
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "Index out of range: position 0 in Box #1.children, which holds 0 objects (it is "
          + "empty)"))
  }

  @Test func movingPastTheEndNamesTheRelationship() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let inbox = Box(title: "Inbox")
      _ = Box(title: "A", parent: inbox)
      _ = Box(title: "B", parent: inbox)
      inbox.$children.move(from: 0, to: 2)
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "Index out of range: move destination 2 in a new Box.children, which holds 2 objects "
          + "(valid positions are 0..<2)"))
  }

  @Test func movingFromOffsetsPastTheEndNamesTheRelationship() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let inbox = Box(title: "Inbox")
      _ = Box(title: "A", parent: inbox)
      inbox.$children.move(fromOffsets: [0], toOffset: 3)
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "Index out of range: destination offset 3 in a new Box.children, which holds 1 "
          + "objects (valid positions are 0...1)"))
  }

  // MARK: Observing

  @Test func observingAPropertyThatIsNoRelationshipNamesTheObject() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let stack = try Stack()
      let inbox = Box(title: "Inbox")
      stack.context.insert(inbox)
      _ = stack.context.observe(inbox, relationship: \.noBoxes) { _ in }
    }
    let message = try #require(result).standardErrorText
    #expect(message.contains("cannot observe"))
    #expect(
      message.contains(
        "of Box #1 as a relationship: it is not a property of Box declared with @Relationship"))
  }

  // MARK: Model classes

  @Test func aStoredPropertyMakingAModelObjectWhileLoadingNamesBothClasses() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let store = InMemoryStore()
      let container = try ObjectContainer(for: Notepad.self, store: store)
      let context = try ObjectContext(container)
      context.insert(Notepad())
      try context.save()
      container.close()
      Notepad.makesANote = true
      _ = try ObjectContext(ObjectContainer(for: Notepad.self, store: store))
    }
    let message = try #require(result).standardErrorText
    #expect(message.contains("a Note was made while a Notepad was loaded from the store"))
    #expect(message.contains("make them in a @Relationship's default value or in a lazy var"))
  }
}

/// A model class whose plain stored property makes a ``Note`` once told to: after its model
/// is described, which would have refused it.
final class Notepad: ManagedObject {
  nonisolated(unsafe) static var makesANote = false

  @Attribute var title = ""
  let scratch: Note? = Notepad.makesANote ? Note() : nil
}

extension Box {
  /// A computed array that reads no relationship.
  fileprivate var noBoxes: [Box] { [] }
}

extension ExitTest.Result {
  /// What the child process wrote to standard error, as text.
  fileprivate var standardErrorText: String {
    String(decoding: standardErrorContent, as: UTF8.self)
  }
}

/// Debug builds stop a program that uses one context on two threads at once, naming the
/// context (`ContextUseCheck`).
@Suite struct ContextUseMisuseTests {
  @Test func aContextUsedOnTwoThreadsAtOnceNamesTheContext() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let stack = try Stack()
      nonisolated(unsafe) let context = stack.context
      context.insert(Box(title: "Inbox"))
      let inside = DispatchSemaphore(value: 0)
      let token = context.observeChanges { _ in
        inside.signal()
        Thread.sleep(forTimeInterval: 30)  // still inside when the other thread enters
      }
      Thread.detachNewThread {
        inside.wait()
        _ = try? context.fetchCount(FetchDescriptor<Box>())
      }
      context.processPendingChanges()
      withExtendedLifetime(token) {}
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "a context of the container over an InMemoryStore is used on two threads at once"))
    #expect(message.contains("make a context for each (container.newContext(), or a ModelActor)"))
  }

  @Test func theMainContextUsedOffTheMainActorNamesTheContext() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
      let main = await MainActor.run { UncheckedTransfer(container.mainContext) }
      try await Task.detached { _ = try main.value.fetchCount(FetchDescriptor<Box>()) }.value
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "the main context of the container over an InMemoryStore is used off the main actor"))
    #expect(message.contains("(container.newContext(), or a ModelActor)"))
  }

  /// Every public entry point checks, the observing ones and plain reads included.
  @Test func theMainContextObservedOffTheMainActorNamesTheContext() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
      let main = await MainActor.run { UncheckedTransfer(container.mainContext) }
      await Task.detached {
        let token = main.value.observeChanges { _ in }
        withExtendedLifetime(token) {}
      }.value
    }
    let message = try #require(result).standardErrorText
    #expect(message.contains("is used off the main actor"))
  }

  @Test func aModelActorsContextUsedOutsideTheActorNamesTheContext() async throws {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
      let executor = DefaultSerialModelExecutor(modelContext: try container.newContext())
      _ = try executor.modelContext.fetchCount(FetchDescriptor<Box>())
    }
    let message = try #require(result).standardErrorText
    #expect(
      message.contains(
        "a context of the container over an InMemoryStore is used outside the ModelActor"))
  }

  @Test func aModelActorsContextIsUsedOnItsExecutor() async throws {
    let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
    let executor = DefaultSerialModelExecutor(modelContext: try container.newContext())
    let actor = CountingActor(modelContainer: container, modelExecutor: executor)
    #expect(try await actor.insertAndCount() == 1)
  }

  @Test func aContextUsedByOneThreadAfterAnotherIsFine() async throws {
    let stack = try Stack()
    nonisolated(unsafe) let context = stack.context
    context.insert(Box(title: "Inbox"))
    try context.save()
    let count = try await Task.detached { try context.fetchCount(FetchDescriptor<Box>()) }.value
    #expect(count == 1)
  }
}

/// A value handed across isolation unchecked: how a test gets an object where the compiler
/// would not let it go, to show the debug check catches it.
private struct UncheckedTransfer<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

/// A model actor that uses its context on its executor, as it should.
private actor CountingActor: ModelActor {
  nonisolated let modelContainer: ObjectContainer
  nonisolated let modelExecutor: any ModelExecutor

  init(modelContainer: ObjectContainer, modelExecutor: DefaultSerialModelExecutor) {
    self.modelContainer = modelContainer
    self.modelExecutor = modelExecutor
  }

  func insertAndCount() throws -> Int {
    modelContext.insert(Box(title: "Counted"))
    try modelContext.save()
    return try modelContext.fetchCount(FetchDescriptor<Box>())
  }
}
