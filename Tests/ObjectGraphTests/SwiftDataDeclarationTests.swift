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
  @Relationship var trip: Trip? = nil

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
