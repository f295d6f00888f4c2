import Foundation
import Observation
import Testing

@testable import ObjectGraph

/// The main context of a store that a custom stage migrated is the stage's context, adopted:
/// its objects are the migrated ones, saved, and they are observed, saved and merged as the
/// objects of a context loaded from the store are.
@MainActor @Suite struct MigrationMainContextTests {
  @Test(arguments: StoreKind.allCases)
  func theMainContextHoldsTheStagesObjectsAsSaved(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try store.open(PeopleV1.models) { context in
      for (name, street) in [
        ("Ada Lovelace", "12 St James's Square"), ("Charles Babbage", "1 Dorset Street"),
        ("Annabella Byron", "12 St James's Square"),
      ] {
        let person = PeopleV1.Person()
        person.name = name
        person.street = street
        person.city = "London"
        context.insert(person)
      }
      try context.save()
    }
    let container = try ObjectContainer(
      for: PeopleV2.models, migrationPlan: PeoplePlan.self, store: store.store())
    defer { container.close() }
    let main = container.mainContext
    #expect(!main.hasChanges)
    let people = try main.fetch(
      FetchDescriptor<PeopleV2.Person>(sortBy: [SortDescriptor(\.name)]))
    #expect(people.map(\.initials) == ["AL", "AB", "CB"])
    #expect(people.allSatisfy { $0.context === main && !$0.isInserted && !$0.hasChanges })
    #expect(try main.fetchCount(FetchDescriptor<PeopleV2.Address>()) == 2)

    // Observers and Observation hear of a change, and only of it.
    var heard: [ObjectContextChanges] = []
    let token = main.observeChanges { heard.append($0) }
    let observed = ObservedCount()
    withObservationTracking {
      _ = people[2].initials
    } onChange: {
      observed.count += 1
    }
    people[2].initials = "C.B."
    main.processPendingChanges()
    #expect(observed.count == 1)
    #expect(heard.count == 1)
    #expect(heard.first?.updated.map(ObjectIdentifier.init) == [ObjectIdentifier(people[2])])
    #expect(heard.first?.inserted.isEmpty == true && heard.first?.deleted.isEmpty == true)

    // Its saves reach the store, and another context; a new object takes a new number.
    let pet = PeopleV2.Pet()
    pet.name = "Tom"
    main.insert(pet)
    people[2].pets.append(pet)
    try main.save()
    let other = try container.newContext()
    let charles = try other.fetch(
      FetchDescriptor<PeopleV2.Person>(predicate: #Predicate { $0.name == "Charles Babbage" }))
    #expect(charles.map(\.initials) == ["C.B."])
    #expect(charles.first?.pets.map(\.name) == ["Tom"])
    let ids =
      try main.fetch(FetchDescriptor<PeopleV2.Person>()).map { $0.objectID! }
      + [pet.objectID!] + (try main.fetch(FetchDescriptor<PeopleV2.Address>()).map { $0.objectID! })
    #expect(Set(ids).count == 6)
    withExtendedLifetime(token) {}
  }

  @Test(arguments: StoreKind.allCases)
  func aStagesInsertionsAndDeletionsAreSavedWhenTheMainContextStarts(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try store.open(ContactsV1.models) { context in
      let contacts = ["Ada Lovelace", "Charles Babbage", "Annabella Byron"].map { name in
        let contact = ContactsV1.Contact()
        contact.name = name
        context.insert(contact)
        return contact
      }
      contacts[0].friends = [contacts[1]]
      try context.save()
    }
    let container = try ObjectContainer(
      for: ContactsV2.models, migrationPlan: ContactsPlanWithNewFriend.self,
      store: store.store())
    let main = container.mainContext
    #expect(!main.hasChanges)
    let contacts = try main.fetch(
      FetchDescriptor<ContactsV2.Contact>(sortBy: [SortDescriptor(\.name)]))
    #expect(contacts.map(\.name) == ["Ada Lovelace", "Charles Babbage", "Mary Somerville"])
    #expect(contacts.map { $0.last ?? "-" } == ["Lovelace", "Babbage", "Somerville"])
    #expect(contacts[0].friends.map(\.name) == ["Charles Babbage", "Mary Somerville"])
    #expect(contacts.allSatisfy { !$0.isInserted && !$0.isDeleted && $0.context === main })
    let caroline = ContactsV2.Contact()
    caroline.name = "Caroline Herschel"
    main.insert(caroline)
    contacts[2].friends.append(caroline)
    try main.save()
    container.close()

    let reopened = try store.open(ContactsV2.models, plan: ContactsPlanWithNewFriend.self) {
      context in
      try context.fetch(FetchDescriptor<ContactsV2.Contact>(sortBy: [SortDescriptor(\.name)]))
        .map { "\($0.name): " + $0.friends.map(\.name).joined(separator: ", ") }
    }
    #expect(
      reopened == [
        "Ada Lovelace: Charles Babbage, Mary Somerville", "Caroline Herschel: ",
        "Charles Babbage: ", "Mary Somerville: Caroline Herschel",
      ])
  }
}

/// V1 to V2 with code after the inferred step that splits names, deletes a contact and adds
/// one as a friend, saving nothing itself.
private enum ContactsPlanWithNewFriend: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [ContactsV1.self, ContactsV2.self] }
  static var stages: [MigrationStage] {
    [
      .custom(
        fromVersion: ContactsV1.self, toVersion: ContactsV2.self, willMigrate: nil,
        didMigrate: { context in
          let contacts = try context.fetch(
            FetchDescriptor<ContactsV2.Contact>(sortBy: [SortDescriptor(\.name)]))
          let mary = ContactsV2.Contact()
          mary.name = "Mary Somerville"
          context.insert(mary)
          for contact in contacts + [mary] {
            let parts = contact.name.split(separator: " ", maxSplits: 1)
            contact.first = parts.first.map(String.init)
            contact.last = parts.count > 1 ? String(parts[1]) : nil
          }
          context.delete(contacts[1])  // Annabella Byron
          contacts[0].friends.append(mary)
        })
    ]
  }
}

/// How many times `withObservationTracking` said a change came.
private final class ObservedCount: @unchecked Sendable {
  var count = 0  // changed on the main actor only
}
