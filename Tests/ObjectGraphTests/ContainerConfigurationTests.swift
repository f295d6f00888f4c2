import Foundation
import Testing

@testable import ObjectGraph

/// The container's conveniences in SwiftData's shape: `ModelConfiguration`, the default store
/// location, `ObjectContainer(for:configurations:)`, `context.container`,
/// `delete(model:where:includeSubclasses:)`, `deleteAllData()`, `persistentModelID` and the
/// fetch descriptor's hints.
@Suite struct ContainerConfigurationTests {
  // MARK: Configurations

  @Test func anInMemoryConfigurationGivesEachContainerANewInMemoryStore() throws {
    let configuration = ModelConfiguration(isStoredInMemoryOnly: true)
    #expect(configuration.isStoredInMemoryOnly)
    #expect(configuration.name == "default")
    #expect(configuration.url.path == "/dev/null")
    let container = try ObjectContainer(for: Item.self, configurations: configuration)
    #expect(container.coordinator.store is InMemoryStore)
    #expect(container.configurations == [configuration])
    let context = try ObjectContext(container)
    context.insert(Item(name: "kept in memory"))
    try context.save()
    #expect(try ObjectContext(container).fetchCount(FetchDescriptor<Item>()) == 1)

    let other = try ObjectContainer(for: [Item.self], configurations: [configuration])
    #expect(try ObjectContext(other).fetchCount(FetchDescriptor<Item>()) == 0)
  }

  @Test func aURLConfigurationGivesABinaryStoreThereCreatingItsDirectory() throws {
    let directory = try TemporaryDirectory()
    let url = directory.url.appendingPathComponent("nested/deeper/Items.store")
    let configuration = ModelConfiguration("Items", url: url)
    #expect(configuration.url == url)
    #expect(configuration.name == "Items")
    #expect(!configuration.isStoredInMemoryOnly)
    do {
      let container = try ObjectContainer(for: Item.self, configurations: configuration)
      let store = try #require(container.coordinator.store as? BinaryStore)
      #expect(store.url == url)
      let context = try ObjectContext(container)
      context.insert(Item(name: "on disk"))
      try context.save()
    }
    #expect(FileManager.default.fileExists(atPath: url.path))
    let reopened = try ObjectContainer(for: Item.self, storeURL: url)
    #expect(reopened.configurations == [ModelConfiguration(url: url)])
    let items = try ObjectContext(reopened).fetch(FetchDescriptor<Item>())
    #expect(items.map(\.name) == ["on disk"])
  }

  @Test func theDefaultStoreFileIsNamedForTheConfigurationInTheXDGDataHome() throws {
    let program = ProcessInfo.processInfo.processName
    let data = ["XDG_DATA_HOME": "/data/home", "HOME": "/home/someone"]
    #expect(
      ModelConfiguration.defaultStoreURL(environment: data).path
        == "/data/home/\(program)/default.store")
    #expect(
      ModelConfiguration.defaultStoreURL(named: "Notes", environment: data).path
        == "/data/home/\(program)/Notes.store")
    #expect(
      ModelConfiguration.defaultStoreURL(named: "a/b", environment: data).lastPathComponent
        == "a_b.store")
    #expect(
      ModelConfiguration.defaultStoreURL(named: "", environment: data).lastPathComponent
        == "default.store")
    // Without XDG_DATA_HOME, or with a relative one (which the specification says to ignore).
    for environment in [
      ["HOME": "/home/someone"], ["XDG_DATA_HOME": "rel", "HOME": "/home/someone"],
    ] {
      #expect(
        ModelConfiguration.defaultStoreURL(environment: environment).path
          == "/home/someone/.local/share/\(program)/default.store")
    }
    let configuration = ModelConfiguration.$environment.withValue(data) {
      ModelConfiguration("Notes")
    }
    #expect(configuration.url.path == "/data/home/\(program)/Notes.store")
  }

  @Test func aContainerWithoutAConfigurationUsesTheDefaultFileCreatingItsDirectory() throws {
    let dataHome = try TemporaryDirectory()
    let environment = ["XDG_DATA_HOME": dataHome.url.path]
    let expected = ModelConfiguration.defaultStoreURL(environment: environment)
    #expect(!FileManager.default.fileExists(atPath: expected.deletingLastPathComponent().path))
    try ModelConfiguration.$environment.withValue(environment) {
      do {
        let container = try ObjectContainer(for: Item.self)
        #expect(container.configurations.map(\.url) == [expected])
        let context = try ObjectContext(container)
        context.insert(Item(name: "default"))
        try context.save()
      }
      #expect(FileManager.default.fileExists(atPath: expected.path))
      let again = try ObjectContainer(for: [Item.self], configurations: [])
      #expect(try ObjectContext(again).fetch(FetchDescriptor<Item>()).map(\.name) == ["default"])
    }
  }

  @Test func aStoreDirectoryThatCannotBeMadeIsAnErrorNamingIt() throws {
    let directory = try TemporaryDirectory()
    let blocker = directory.file("not-a-directory")
    try Data("a file".utf8).write(to: blocker)
    let url = blocker.appendingPathComponent("store/Items.store")
    let error = #expect(throws: ObjectGraphError.self) {
      try ObjectContainer(for: Item.self, configurations: ModelConfiguration(url: url))
    }
    #expect(error?.code == .io)
    #expect(error?.file == url.deletingLastPathComponent())
    #expect(error?.message.contains(url.deletingLastPathComponent().path) == true)
  }

  @Test func moreThanOneConfigurationIsRefused() throws {
    let error = #expect(throws: ObjectGraphError.self) {
      try ObjectContainer(
        for: Item.self, configurations: ModelConfiguration("A", isStoredInMemoryOnly: true),
        ModelConfiguration("B", isStoredInMemoryOnly: true))
    }
    #expect(error?.code == .invalidConfiguration)
    #expect(error?.message.contains("\"B\"") == true)
  }

  @Test func aConfigurationSchemaMustBeTheModelsSchema() throws {
    let items = try ObjectContainer(for: Item.self, store: InMemoryStore()).schema
    let tags = try ObjectContainer(for: Tag.self, store: InMemoryStore()).schema
    let matching = try ObjectContainer(
      for: Item.self, configurations: ModelConfiguration(schema: items, isStoredInMemoryOnly: true))
    #expect(matching.schema == items)
    let error = #expect(throws: ObjectGraphError.self) {
      try ObjectContainer(
        for: Item.self,
        configurations: ModelConfiguration("Tags", schema: tags, isStoredInMemoryOnly: true))
    }
    #expect(error?.code == .invalidConfiguration)
    #expect(error?.message.contains("\"Tags\"") == true)
  }

  // MARK: context.container

  @MainActor
  @Test func aContextBelongsToItsContainer() throws {
    let container = try ObjectContainer(for: Item.self, store: InMemoryStore())
    #expect(container.mainContext.container === container)
    let context = try ObjectContext(container)
    #expect(context.container === container)
    let other = try ObjectContainer(for: Item.self, store: InMemoryStore())
    #expect(try ObjectContext(other).container !== container)
  }

  @MainActor
  @Test func aMainContextKeptWithoutItsContainerGetsAContainerOverTheSameStore() throws {
    let store = InMemoryStore()
    weak var released: ObjectContainer?
    let context = try {
      let container = try ObjectContainer(for: Item.self, store: store)
      released = container
      return container.mainContext
    }()
    #expect(released == nil)
    let container = context.container
    #expect(container.mainContext === context)
    #expect(context.container === container)
    #expect(container.coordinator === context.coordinator)
    context.insert(Item(name: "still saved"))
    try context.save()
    #expect(try store.load().objects.count == 1)
  }

  @Test func aContextMadeFromAContainerKeepsIt() throws {
    weak var weakContainer: ObjectContainer?
    let context = try {
      let container = try ObjectContainer(for: Item.self, store: InMemoryStore())
      weakContainer = container
      return try ObjectContext(container)
    }()
    #expect(weakContainer != nil)
    #expect(context.container === weakContainer)
  }

  // MARK: delete(model:where:includeSubclasses:)

  @Test(arguments: StoreKind.allCases)
  func deletingAModelDeletesItsSubclassesUnlessAskedNotTo(_ kind: StoreKind) throws {
    let directory = kind == .binary ? try TemporaryDirectory() : nil
    let container = try ObjectContainer(
      for: Vehicle.self, Truck.self,
      configurations: directory.map { ModelConfiguration(url: $0.file("vehicles.store")) }
        ?? ModelConfiguration(isStoredInMemoryOnly: true))
    let context = try ObjectContext(container)
    func fill() throws {
      for name in ["car", "van"] { context.insert(Vehicle(name: name)) }
      for name in ["tipper", "van"] { context.insert(Truck(name: name)) }
      try context.save()
    }
    func names() throws -> [String] {
      try context.fetch(FetchDescriptor<Vehicle>()).map(\.name)
        + context.fetch(FetchDescriptor<Truck>()).map { "truck " + $0.name }
    }
    try fill()
    try context.delete(model: Vehicle.self, where: #Predicate { $0.name == "van" })
    #expect(try names() == ["car", "truck tipper"])
    try context.delete(model: Vehicle.self, includeSubclasses: false)
    #expect(try names() == ["truck tipper"])
    try context.delete(model: Vehicle.self)
    #expect(try names() == [])
    try context.save()
    #expect(try ObjectContext(container).fetchCount(FetchDescriptor<Truck>()) == 0)

    try fill()
    try context.delete(model: Truck.self, where: #Predicate { $0.name == "van" })
    #expect(try names() == ["car", "van", "truck tipper"])
  }

  // MARK: deleteAllData()

  /// A container over a store of `kind` holding a saved tree and unsaved changes.
  @MainActor
  private func filledContainer(_ kind: StoreKind, in directory: TemporaryDirectory) throws
    -> (ObjectContainer, [Box])
  {
    let configuration =
      kind == .binary
      ? ModelConfiguration(url: directory.file("boxes.store"))
      : ModelConfiguration(isStoredInMemoryOnly: true)
    let container = try ObjectContainer(
      for: [Box.self, Person.self], configurations: [configuration])
    let context = container.mainContext
    let root = Box(title: "root")
    context.insert(root)
    let children = (0..<3).map { Box(title: "child \($0)", parent: root) }
    let person = Person(name: "borrower")
    context.insert(person)
    person.loans.append(Loan())  // deny: deleteAllData deletes it all the same
    try context.save()
    children[0].title = "renamed, unsaved"
    let unsaved = Box(title: "unsaved", parent: children[1])
    context.delete(children[2])
    // Unsaved, with a no-action relationship (which the delete rules leave in place).
    let newcomer = Person(name: "unsaved")
    context.insert(newcomer)
    newcomer.pets.append(Pet())
    return (container, [root] + children + [unsaved])
  }

  /// Whether every relationship of a test object is empty.
  private func relationshipsAreEmpty(_ object: ManagedObject) -> Bool {
    switch object {
    case let box as Box: box.parent == nil && box.children.isEmpty
    case let person as Person:
      person.loans.isEmpty && person.pets.isEmpty && person.clubs.isEmpty
        && person.passport == nil
    case let loan as Loan: loan.borrower == nil
    case let pet as Pet: pet.owner == nil
    default: false
    }
  }

  @MainActor
  @Test(arguments: StoreKind.allCases)
  func deleteAllDataEmptiesTheStoreAndTheMainContext(_ kind: StoreKind) throws {
    let directory = try TemporaryDirectory()
    let (container, boxes) = try filledContainer(kind, in: directory)
    let context = container.mainContext
    let savedIDs = Set(boxes.dropLast().compactMap(\.objectID))
    // The root, two children, the unsaved box, the people, the loan and the pet (not the
    // deleted child).
    let everything = context.registeredObjects
    let held = Set(everything.compactMap(\.objectID))
    #expect(held.count == 8)
    var deliveries: [ObjectContextChanges] = []
    let token = context.observeChanges { deliveries.append($0) }
    let live = try context.liveQuery(FetchDescriptor<Box>())
    context.processPendingChanges()
    deliveries = []

    try container.deleteAllData()

    #expect(context.registeredObjects.isEmpty)
    #expect(!context.hasChanges)
    #expect(try context.fetchCount(FetchDescriptor<Box>()) == 0)
    #expect(try context.fetchCount(FetchDescriptor<Loan>()) == 0)
    #expect(live.results.isEmpty)
    for object in everything + [boxes[3]] {
      #expect(object.context == nil)
      #expect(relationshipsAreEmpty(object), "\(object)")
    }
    #expect(boxes[1].title == "renamed, unsaved")
    #expect(deliveries.count == 1)
    #expect(Set(deliveries.flatMap(\.deleted).compactMap(\.objectID)) == held)
    withExtendedLifetime(token) {}

    // The container goes on: a new object is saved, numbered after every old one.
    let fresh = Box(title: "after")
    context.insert(fresh)
    try context.save()
    #expect(fresh.objectID!.rawValue > savedIDs.map(\.rawValue).max()!)
    #expect(try ObjectContext(container).fetch(FetchDescriptor<Box>()).map(\.title) == ["after"])
  }

  @MainActor
  @Test func deleteAllDataLeavesOneSmallFileThatReopensEmpty() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.store")
    let lastNumber: UInt64
    do {
      let (container, _) = try filledContainer(.binary, in: directory)
      let context = container.mainContext
      let root = Box(title: "big")
      context.insert(root)
      for index in 0..<2_000 { _ = Box(title: "box \(index)", parent: root) }
      try context.save()
      lastNumber = container.coordinator.reservedUpTo - 1
      let before = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as! Int
      let store = try #require(container.coordinator.store as? BinaryStore)
      try container.deleteAllData()
      #expect(store.statistics.objectCount == 0)
      #expect(store.statistics.fileBytes < before / 10)
      #expect(directory.fileNames == ["boxes.store"])
      // The store stayed locked: no one else opens it meanwhile.
      let error = #expect(throws: ObjectGraphError.self) {
        try ObjectContainer(for: [Box.self, Person.self], storeURL: url)
      }
      #expect(error?.code == .storeInUse)
    }
    let verification = try BinaryStoreReader.verify(fileAt: url)
    #expect(verification.isValid)
    #expect(verification.objectCount == 0)
    let reopened = try ObjectContainer(for: [Box.self, Person.self], storeURL: url)
    #expect(try ObjectContext(reopened).fetchCount(FetchDescriptor<Box>()) == 0)
    #expect(try ObjectContext(reopened).fetchCount(FetchDescriptor<Person>()) == 0)
    // The emptied file keeps the next object number: no number is handed out twice.
    let context = try ObjectContext(reopened)
    let box = Box(title: "after the reopen")
    context.insert(box)
    #expect(box.objectID!.rawValue > lastNumber)
  }

  @MainActor
  @Test func aContextLoadedBeforeDeleteAllDataCannotSave() throws {
    let directory = try TemporaryDirectory()
    let (container, _) = try filledContainer(.binary, in: directory)
    let earlier = try ObjectContext(container)
    let item = try #require(try earlier.fetch(FetchDescriptor<Box>()).first)
    try container.deleteAllData()
    item.title = "changed after the data was deleted"
    let error = #expect(throws: ObjectGraphError.self) { try earlier.save() }
    #expect(error?.code == .storeClosed)
    #expect(error?.message.contains("deleteAllData") == true)
    #expect(try ObjectContext(container).fetchCount(FetchDescriptor<Box>()) == 0)
  }

  @MainActor
  @Test func deleteAllDataDeletesEveryObjectOfAnotherKindOfStore() throws {
    let store = RecordingStore()
    let container = try ObjectContainer(for: Tag.self, store: store)
    let context = container.mainContext
    for name in ["a", "b"] { context.insert(Tag(name: name)) }
    try context.save()
    let ids = context.registeredObjects.compactMap(\.objectID)
    try container.deleteAllData()
    #expect(store.changesets.last?.deleted == ids)
    #expect(try store.load().objects.isEmpty)
    #expect(context.registeredObjects.isEmpty)
  }

  @MainActor
  @Test func aFailedDeleteAllDataChangesNothingAndNamesTheFile() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.store")
    let probe = StoreIOProbe()
    let store = BinaryStore(url: url, options: .standard, probe: probe)
    let container = try ObjectContainer(for: Box.self, store: store)
    let context = container.mainContext
    let box = Box(title: "kept")
    context.insert(box)
    try context.save()

    probe.failNext(.rename)
    let error = #expect(throws: ObjectGraphError.self) { try container.deleteAllData() }
    #expect(error?.code == .io)
    #expect(error?.file == url)
    #expect(box.context === context)
    #expect(try context.fetchCount(FetchDescriptor<Box>()) == 1)
    #expect(directory.fileNames == ["boxes.store"])
    box.title = "saved after the failure"
    try context.save()

    // A failed directory sync after the rename: the store is empty, but saves wait for a
    // reopen.
    probe.failNext(.directorySync)
    let unknown = #expect(throws: ObjectGraphError.self) { try container.deleteAllData() }
    #expect(unknown?.code == .saveOutcomeUnknown)
    #expect(unknown?.file == url)
    #expect(context.registeredObjects.isEmpty)
    context.insert(Box(title: "refused"))
    #expect(throws: ObjectGraphError.self) { try context.save() }
  }

  @MainActor
  @Test func deleteAllDataAfterCloseIsAnError() throws {
    let directory = try TemporaryDirectory()
    let (container, _) = try filledContainer(.binary, in: directory)
    container.close()
    let error = #expect(throws: ObjectGraphError.self) { try container.deleteAllData() }
    #expect(error?.code == .storeClosed)
    #expect(error?.file == directory.file("boxes.store"))
    #expect(!container.mainContext.registeredObjects.isEmpty)
  }

  // MARK: persistentModelID and fetch hints

  @Test func persistentModelIDIsTheObjectID() throws {
    let stack = try Stack()
    let item = Item(name: "identified")
    #expect(item.persistentModelID == nil)
    stack.context.insert(item)
    let id: PersistentIdentifier = try #require(item.persistentModelID)
    #expect(id == item.objectID)
    #expect(stack.context.object(with: id) === item)
  }

  @Test(arguments: StoreKind.allCases)
  func prefetchingAndPendingChangesLeaveFetchesAsTheyAre(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let root = Box(title: "root")
    stack.context.insert(root)
    _ = Box(title: "saved child", parent: root)
    try stack.context.save()
    _ = Box(title: "unsaved child", parent: root)

    var descriptor = FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)])
    #expect(descriptor.relationshipKeyPathsForPrefetching.isEmpty)
    #expect(descriptor.includePendingChanges)
    let plain = try stack.context.fetch(descriptor)
    descriptor.relationshipKeyPathsForPrefetching = [\Box.children, \Box.parent]
    descriptor.includePendingChanges = false
    #expect(descriptor.relationshipKeyPathsForPrefetching == [\Box.children, \Box.parent])
    let hinted = try stack.context.fetch(descriptor)
    #expect(hinted.titles == ["root", "saved child", "unsaved child"])
    #expect(hinted == plain)
  }
}
