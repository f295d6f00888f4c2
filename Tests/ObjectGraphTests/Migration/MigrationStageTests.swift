import Foundation
import Testing

@testable import ObjectGraph

/// Custom stages that read the old objects and write the new ones at once: an entity split
/// in two, a to-one turned into a to-many, a new required attribute filled from others.
@Suite struct MigrationStageTests {
  @Test(arguments: StoreKind.allCases)
  func aStageSplitsAnEntityAndTurnsAToOneIntoAToMany(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try store.open(PeopleV1.models) { context in
      for (name, street, pet) in [
        ("Ada Lovelace", "12 St James's Square", "Puff"),
        ("Charles Babbage", "1 Dorset Street", nil),
        ("Annabella Byron", "12 St James's Square", "Rex"),
      ] {
        let person = PeopleV1.Person()
        person.name = name
        person.street = street
        person.city = "London"
        context.insert(person)
        if let pet {
          let animal = PeopleV1.Pet()
          animal.name = pet
          person.pet = animal
        }
      }
      try context.save()
    }
    let people = try store.open(PeopleV2.models, plan: PeoplePlan.self) { context in
      try context.fetch(FetchDescriptor<PeopleV2.Person>(sortBy: [SortDescriptor(\.name)])).map {
        "\($0.name) \($0.initials) @ \($0.address?.street ?? "-") (\($0.address?.residents.count ?? 0)) "
          + $0.pets.map(\.name).joined()
          + ($0.pets.first?.owner?.name == $0.name || $0.pets.isEmpty ? "" : " wrong owner")
      }
    }
    #expect(
      people == [
        "Ada Lovelace AL @ 12 St James's Square (2) Puff",
        "Annabella Byron AB @ 12 St James's Square (2) Rex",
        "Charles Babbage CB @ 1 Dorset Street (1) ",
      ])
    let addresses = try store.open(PeopleV2.models, plan: PeoplePlan.self) { context in
      try context.fetchCount(FetchDescriptor<PeopleV2.Address>())
    }
    #expect(addresses == 2, "reopened as migrated, not migrated again")
  }

  @Test func withoutTheStageTheSameChangesAreRefused() throws {
    let store = try VersionedStore(.memory)
    try store.open(PeopleV1.models) { context in
      context.insert(PeopleV1.Person())
      try context.save()
    }
    let error = try #require(throws: ObjectGraphError.self) {
      try store.open(PeopleV2.models) { _ in }
    }
    #expect(error.code == .migrationFailed)
    #expect(error.message.contains("initials is a new attribute that is not optional"))
    #expect(error.message.contains("pets is a new relationship whose inverse Pet.owner is stored"))
  }
}
