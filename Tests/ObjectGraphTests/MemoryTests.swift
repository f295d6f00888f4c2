import Foundation
import Testing

@testable import ObjectGraph

/// Dropping a container and its contexts frees every object: no parent/child cycle is left.
@Suite struct MemoryTests {
  @Test func discardingAContextFreesItsObjects() throws {
    weak var weakParent: Box?
    weak var weakChild: Box?
    weak var weakContext: ObjectContext?
    try {
      let stack = try Stack()
      let parent = Box(title: "Parent")
      stack.context.insert(parent)
      let child = Box(title: "Child", parent: parent)
      try stack.context.save()
      _ = try stack.context.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.parent == nil }))
      weakParent = parent
      weakChild = child
      weakContext = stack.context
    }()
    #expect(weakContext == nil)
    #expect(weakParent == nil)
    #expect(weakChild == nil)
  }

  @Test func loadedObjectsAreFreedWithTheirContext() throws {
    let store = InMemoryStore()
    do {
      let stack = try Stack(store: store)
      let root = Box(title: "Root")
      stack.context.insert(root)
      for index in 0..<10 { _ = Box(title: "\(index)", parent: root) }
      try stack.context.save()
    }
    weak var weakRoot: Box?
    weak var weakChild: Box?
    try {
      let stack = try Stack(store: store)
      let root = try #require(
        try stack.context.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.parent == nil }))
          .first)
      weakRoot = root
      weakChild = root.children.first
      #expect(weakChild != nil)
    }()
    #expect(weakRoot == nil)
    #expect(weakChild == nil)
  }

  @MainActor
  @Test func theMainContextIsFreedWithoutATurnOfTheMainQueue() throws {
    weak var weakContext: ObjectContext?
    weak var weakBox: Box?
    try {
      let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
      let context = container.mainContext
      let box = Box(title: "Pending")
      context.insert(box)
      try context.save()
      box.title = "delivery scheduled on the main queue"
      weakContext = context
      weakBox = box
    }()
    #expect(weakContext == nil)
    #expect(weakBox == nil)
  }

  @MainActor
  @Test func aContainerAndItsMainContextFormNoCycle() throws {
    weak var weakContainer: ObjectContainer?
    weak var weakContext: ObjectContext?
    weak var weakBox: Box?
    try {
      let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
      let context = container.mainContext
      #expect(context.container === container)
      let box = Box(title: "Root")
      context.insert(box)
      _ = Box(title: "Child", parent: box)
      try context.save()
      weakContainer = container
      weakContext = context
      weakBox = box
    }()
    #expect(weakContainer == nil)
    #expect(weakContext == nil)
    #expect(weakBox == nil)
  }

  @MainActor
  @Test func theContainerOfAMainContextThatOutlivedItsOwnFormsNoCycle() throws {
    weak var weakContainer: ObjectContainer?
    weak var weakContext: ObjectContext?
    try {
      let context = try ObjectContainer(for: Box.self, store: InMemoryStore()).mainContext
      let container = context.container
      #expect(container.mainContext === context)
      weakContainer = container
      weakContext = context
    }()
    #expect(weakContainer == nil)
    #expect(weakContext == nil)
  }

  @Test func aContextMadeFromAContainerReleasesItWithItself() throws {
    weak var weakContainer: ObjectContainer?
    weak var weakContext: ObjectContext?
    try {
      let context = try ObjectContext(ObjectContainer(for: Box.self, store: InMemoryStore()))
      context.insert(Box(title: "Kept"))
      try context.save()
      weakContainer = context.container
      weakContext = context
      #expect(weakContainer != nil)
    }()
    #expect(weakContainer == nil)
    #expect(weakContext == nil)
  }

  @Test func aContextKeepsItsStoreOpenAfterItsContainerIsGone() throws {
    let store = InMemoryStore()
    let context = try ObjectContext(ObjectContainer(for: Tag.self, store: store))
    context.insert(Tag(name: "kept"))
    try context.save()
    #expect(try store.load().objects.count == 1)
  }

  @Test func aStoreInUseCannotBeOpenedByASecondContainer() throws {
    let store = InMemoryStore()
    let first = try ObjectContainer(for: Tag.self, store: store)
    let error = #expect(throws: ObjectGraphError.self) {
      try ObjectContainer(for: Tag.self, store: store)
    }
    #expect(error?.code == .storeInUse)
    first.close()
    _ = try ObjectContainer(for: Tag.self, store: store)
  }
}
