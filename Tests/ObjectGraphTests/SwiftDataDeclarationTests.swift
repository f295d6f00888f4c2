import Foundation
import Testing

@testable import ObjectGraph

// Models declared as SwiftData apps declare them: properties without defaults set in a
// designated initializer, relationships with `= []` and `= nil`, inverses left to inference.

/// A trip with its stays (`Trip.stays` and `Stay.trip` declare no inverse: it is inferred).
final class Trip: ManagedObject {
  @Attribute var name: String
  @Attribute var start: Date
  @Attribute var notes: String?
  @Attribute var category: TripCategory
  @Relationship(deleteRule: .cascade) var stays: [Stay] = []
  @Transient var isExpanded = false

  init(name: String, start: Date, category: TripCategory = .leisure) {
    super.init()
    self.name = name
    self.start = start
    self.category = category
  }

  required init() { super.init() }
}

final class Stay: ManagedObject {
  @Attribute var place: String
  @Attribute(originalName: "cost") var price: Double
  @Relationship(originalName: "journey") var trip: Trip? = nil

  init(place: String, price: Double) {
    super.init()
    self.place = place
    self.price = price
  }

  required init() { super.init() }
}

enum TripCategory: String, Codable, CaseIterable {
  case leisure, business
}

/// Two relationships from `Kennel` to `Dog` and one back, none with an inverse: ambiguous.
final class Kennel: ManagedObject {
  @Relationship var dogs: [Dog] = []
  @Relationship var champion: Dog? = nil
}

final class Dog: ManagedObject {
  @Relationship var kennel: Kennel? = nil
}

/// A `Codable` attribute without a default whose type has no value to describe it with.
final class Priced: ManagedObject {
  @Attribute var price: Money
}

struct Money: Codable, Hashable {
  var cents: Int
}

/// Every model object is `Identifiable`: by identity, unless it declares its own `id`.
private func identifiers<T: Identifiable>(_ objects: [T]) -> [T.ID] { objects.map(\.id) }

@Suite struct SwiftDataDeclarationTests {
  private let models: [ManagedObject.Type] = [Trip.self, Stay.self]

  @Test(arguments: StoreKind.allCases)
  func designatedInitializersSetPropertiesDeclaredWithoutDefaults(store: StoreKind) throws {
    var stack = try Stack(store, models: models)
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let trip = Trip(name: "Lisbon", start: start, category: .business)
    trip.isExpanded = true
    stack.context.insert(trip)
    trip.stays.append(Stay(place: "Alfama", price: 120))
    try stack.context.save()

    stack = try stack.reopened()
    let loaded = try #require(try stack.context.fetch(FetchDescriptor<Trip>()).first)
    #expect(loaded.name == "Lisbon")
    #expect(loaded.start == start)
    #expect(loaded.notes == nil)
    #expect(loaded.category == .business)
    #expect(loaded.isExpanded == false)  // transient: not stored
    #expect(loaded.stays.map(\.place) == ["Alfama"])
    #expect(loaded.stays.first?.price == 120)
  }

  @Test(arguments: StoreKind.allCases)
  func aSaveRefusesAnAttributeNeverSetAndChangesNothing(store: StoreKind) throws {
    let stack = try Stack(store, models: models)
    let trip = Trip()  // the initializer the framework uses: sets nothing
    trip.start = Date(timeIntervalSince1970: 0)
    stack.context.insert(trip)
    let error = try #require(throws: ObjectGraphError.self) { try stack.context.save() }
    #expect(error.code == .missingValue)
    #expect(error.entity == "Trip")
    #expect(error.property == "name")
    #expect(error.message.contains("Trip \(try #require(trip.objectID)).name was never set"))
    #expect(stack.context.hasChanges)

    trip.name = "Named at last"
    trip.category = .leisure
    try stack.context.save()
    let reopened = try stack.reopened()
    #expect(try reopened.context.fetch(FetchDescriptor<Trip>()).map(\.name) == ["Named at last"])
  }

  @Test func anOptionalAttributeWithoutADefaultStartsNil() {
    let trip = Trip(name: "Porto", start: Date())
    #expect(trip.notes == nil)
    trip.notes = "by train"
    #expect(trip.notes == "by train")
  }

  @Test func inversesAreInferredWhenOneRelationshipLinksEachWay() throws {
    let stack = try Stack(models: models)
    let schema = stack.container.schema
    let stay = try #require(schema.entities.first { $0.name == "Stay" })
    #expect(stay.properties.first { $0.name == "trip" }?.relationship?.inverse == "stays")

    let trip = Trip(name: "Rome", start: Date())
    let hotel = Stay(place: "Trastevere", price: 90)
    hotel.trip = trip
    #expect(trip.stays == [hotel])  // the inverse follows at once, before any insert
    trip.stays.removeAll()
    #expect(hotel.trip == nil)
  }

  @Test func ambiguousInversesAreRefusedNamingTheCandidates() {
    let error = #expect(throws: ObjectGraphError.self) {
      _ = try ObjectContainer(for: Kennel.self, Dog.self, store: InMemoryStore())
    }
    #expect(error?.code == .invalidModel)
    for candidate in ["Kennel.dogs", "Kennel.champion", "Dog.kennel"] {
      #expect(error?.message.contains(candidate) == true)
    }
    #expect(error?.message.contains("cannot be inferred") == true)
  }

  @Test func aCodableAttributeWithoutADefaultNeedsAValueToDescribeItWith() {
    let error = #expect(throws: ObjectGraphError.self) {
      _ = try ObjectContainer(for: Priced.self, store: InMemoryStore())
    }
    #expect(error?.property == "price")
    #expect(error?.message.contains("needs a default value") == true)
  }

  @Test func originalNamesAreRecordedAndDoNotChangeWhatAStoreMatches() throws {
    let stack = try Stack(models: models)
    let schema = stack.container.schema
    let stay = try #require(schema.entities.first { $0.name == "Stay" })
    #expect(stay.properties.first { $0.name == "price" }?.originalName == "cost")
    #expect(stay.properties.first { $0.name == "place" }?.originalName == nil)
    #expect(stay.properties.first { $0.name == "trip" }?.originalName == "journey")

    var withoutNames = schema
    for entity in withoutNames.entities.indices {
      for property in withoutNames.entities[entity].properties.indices {
        withoutNames.entities[entity].properties[property].originalName = nil
      }
    }
    #expect(withoutNames != schema)
    #expect(schema.matches(stored: withoutNames))
  }

  @Test func modelsAreIdentifiableByIdentityUnlessTheyDeclareAnID() {
    let trips = [Trip(name: "A", start: Date()), Trip(name: "B", start: Date())]
    #expect(identifiers(trips) == trips.map { ObjectIdentifier($0) })
    // The brief's `Box` declares its own `id` attribute, which reads as declared.
    let box = Box(title: "Kitchen")
    let uuid: UUID = box.id
    #expect(uuid == box.id)
    #expect(identifiers([box]) == [ObjectIdentifier(box)])
  }
}

// A conference schedule: every talk has a room (`var room: Room`, required), and a zoo's
// animals in the CloudKit shape (`[Animal]?`).

final class Room: ManagedObject {
  @Attribute var name: String
  @Relationship var talks: [Talk] = []

  init(name: String) {
    super.init()
    self.name = name
  }

  required init() { super.init() }
}

final class Talk: ManagedObject {
  @Attribute var title: String
  @Relationship var room: Room

  init(title: String, room: Room) {
    super.init()
    self.title = title
    self.room = room
  }

  required init() { super.init() }
}

final class Zoo: ManagedObject {
  @Attribute var name = ""
  @Relationship(deleteRule: .cascade) var animals: [Animal]? = []
}

final class Animal: ManagedObject {
  @Attribute var name = ""
  @Relationship var zoo: Zoo?

  convenience init(_ name: String) {
    self.init()
    self.name = name
  }
}

/// The schedule as an earlier version declared it, with an optional room.
enum OptionalRoomSchedule {
  final class Room: ManagedObject {
    @Attribute var name = ""
    @Relationship var talks: [Talk] = []
  }

  final class Talk: ManagedObject {
    @Attribute var title = ""
    @Relationship var room: Room?
  }
}

@Suite struct RelationshipShapeTests {
  private let schedule: [ManagedObject.Type] = [Room.self, Talk.self]

  @Test(arguments: StoreKind.allCases)
  func aRequiredToOneKeepsItsInverseAndIsReadThroughPredicates(store: StoreKind) throws {
    var stack = try Stack(store, models: schedule)
    let hall = Room(name: "Hall A")
    let annex = Room(name: "Annex")
    stack.context.insert(hall)
    stack.context.insert(annex)
    let keynote = Talk(title: "Keynote", room: hall)
    _ = Talk(title: "Lightning", room: annex)
    #expect(hall.talks == [keynote])  // inferred inverse, kept at once
    try stack.context.save()

    stack = try stack.reopened()
    let inHall = try stack.context.fetch(
      FetchDescriptor<Talk>(predicate: #Predicate { $0.room.name == "Hall A" }))
    #expect(inHall.map(\.title) == ["Keynote"])
    #expect(inHall.first?.room.name == "Hall A")
    let talk = try #require(inHall.first)
    let other = try #require(
      try stack.context.fetch(FetchDescriptor<Room>(predicate: #Predicate { $0.name == "Annex" }))
        .first)
    talk.room = other
    #expect(other.talks.map(\.title).sorted() == ["Keynote", "Lightning"])
    try stack.context.save()
  }

  @Test(arguments: StoreKind.allCases)
  func aSaveRefusesARequiredToOneLeftWithoutAnObject(store: StoreKind) throws {
    let stack = try Stack(store, models: schedule)
    let hall = Room(name: "Hall A")
    stack.context.insert(hall)
    let talk = Talk(title: "Keynote", room: hall)
    try stack.context.save()

    // Deleting the room nullifies the talk's room, which the model requires.
    stack.context.delete(hall)
    let error = try #require(throws: ObjectGraphError.self) { try stack.context.save() }
    #expect(error.code == .missingValue)
    #expect(error.entity == "Talk")
    #expect(error.property == "room")
    #expect(error.message.contains("holds no object"))

    let annex = Room(name: "Annex")
    stack.context.insert(annex)
    talk.room = annex
    try stack.context.save()
    let reopened = try stack.reopened()
    let talks = try reopened.context.fetch(FetchDescriptor<Talk>())
    #expect(talks.map(\.room.name) == ["Annex"])

    let orphan = Talk()
    orphan.title = "No room yet"
    reopened.context.insert(orphan)
    #expect(throws: ObjectGraphError.self) { try reopened.context.save() }
  }

  @Test func aStoreWithoutTheRequiredObjectIsRefusedByName() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("schedule.ogstore")
    do {
      let container = try ObjectContainer(
        for: OptionalRoomSchedule.Room.self, OptionalRoomSchedule.Talk.self, storeURL: url)
      let context = try ObjectContext(container)
      let talk = OptionalRoomSchedule.Talk()
      talk.title = "Unscheduled"
      context.insert(talk)
      try context.save()
      container.close()
    }
    let error = #expect(throws: ObjectGraphError.self) {
      _ = try ObjectContainer(for: Room.self, Talk.self, storeURL: url)
    }
    #expect(error?.code == .schemaMismatch)
    #expect(error?.property == "room")
  }

  @Test(arguments: StoreKind.allCases)
  func anOptionalToManyListKeepsItsOrderAndReadsEmptyWhenCleared(store: StoreKind) throws {
    var stack = try Stack(store, models: [Zoo.self, Animal.self])
    let zoo = Zoo()
    zoo.name = "City"
    stack.context.insert(zoo)
    #expect(zoo.animals == [])
    let names = ["Otter", "Lynx", "Heron", "Ibis"]
    for name in names { zoo.animals?.append(Animal(name)) }
    zoo.animals?.move(fromOffsets: [3], toOffset: 0)
    #expect(zoo.animals?.first?.zoo === zoo)  // inferred inverse
    try stack.context.save()

    stack = try stack.reopened()
    let loaded = try #require(try stack.context.fetch(FetchDescriptor<Zoo>()).first)
    #expect(loaded.animals?.map(\.name) == ["Ibis", "Otter", "Lynx", "Heron"])
    var heard: [ListChange] = []
    let token = stack.context.observe(loaded, relationship: \.animals) { heard.append($0) }
    loaded.animals?.swapAt(0, 3)
    stack.context.processPendingChanges()
    #expect(heard.count == 1)
    #expect(loaded.animals?.map(\.name) == ["Heron", "Otter", "Lynx", "Ibis"])
    let otter = try #require(loaded.animals?[1])
    loaded.animals = nil
    stack.context.processPendingChanges()
    #expect(heard.last == ListChange(removed: [0, 1, 2, 3]))
    #expect(loaded.animals == [])
    #expect(otter.zoo == nil)
    otter.zoo = loaded
    #expect(loaded.animals?.map(\.name) == ["Otter"])
    withExtendedLifetime(token) {}
    stack.context.delete(loaded)  // cascade
    try stack.context.save()
    #expect(try stack.context.fetchCount(FetchDescriptor<Animal>()) == 3)
  }
}

/// `ModelContext`'s members under SwiftData's names.
@Suite struct SwiftDataContextNameTests {
  @Test(arguments: StoreKind.allCases)
  func modelContextMembersWorkUnderSwiftDataNames(store: StoreKind) throws {
    let stack = try Stack(store, models: [Trip.self, Stay.self])
    let context: ModelContext = stack.context
    let container: ModelContainer = stack.container
    #expect(context.container === container)
    let lisbon = Trip(name: "Lisbon", start: Date(timeIntervalSince1970: 10))
    let porto = Trip(name: "Porto", start: Date(timeIntervalSince1970: 20))
    try context.transaction {
      context.insert(lisbon)
      context.insert(porto)
      #expect(context.insertedModelsArray.count == 2)
    }
    #expect(!context.hasChanges)
    lisbon.notes = "by train"
    #expect(context.changedModelsArray == [lisbon])
    context.delete(porto)
    #expect(context.deletedModelsArray == [porto])
    context.rollback()

    let id = try #require(lisbon.persistentModelID)
    #expect(context.model(for: id) === lisbon)
    #expect((context.registeredModel(for: id) as Trip?) === lisbon)
    #expect((context.registeredModel(for: id) as Stay?) == nil)
    let byStart = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.start, order: .reverse)])
    #expect(try context.fetchIdentifiers(byStart) == [porto.objectID!, lisbon.objectID!])
    var names: [String] = []
    try context.enumerate(byStart) { names.append($0.name) }
    #expect(names == ["Porto", "Lisbon"])
  }

  @Test func aTransactionThatThrowsLeavesNothingStoredOrChanged() throws {
    let stack = try Stack(.binary, models: [Trip.self, Stay.self])
    struct Stop: Error {}
    #expect(throws: Stop.self) {
      try stack.context.transaction {
        stack.context.insert(Trip(name: "Never", start: Date()))
        throw Stop()
      }
    }
    #expect(!stack.context.hasChanges)
    // A save that fails (a name never set) rolls back too.
    #expect(throws: ObjectGraphError.self) {
      try stack.context.transaction { stack.context.insert(Trip()) }
    }
    #expect(!stack.context.hasChanges)
    let reopened = try stack.reopened()
    #expect(try reopened.context.fetchCount(FetchDescriptor<Trip>()) == 0)
  }
}
