import Foundation
import Testing

@testable import ObjectGraph

/// Plans of versioned schemas: a chain V1 → V2 → V3 with a custom stage in the middle, opened
/// from each version; versions recorded in the store; stores of unknown or newer versions
/// refused untouched.
@Suite struct MigrationPlanTests {
  /// Two contacts who are each other's friends, and one more, at the first version.
  static func fillContacts(_ store: VersionedStore, plan: (any SchemaMigrationPlan.Type)?) throws {
    try store.open([ContactsV1.Contact.self], plan: plan) { context in
      let names = ["Ada Lovelace", "Charles Babbage", "Grace Brewster Hopper"]
      let contacts = names.map { name in
        let contact = ContactsV1.Contact()
        contact.name = name
        context.insert(contact)
        return contact
      }
      contacts[0].friends = [contacts[2], contacts[1]]
      contacts[1].friends = [contacts[0]]
      try context.save()
    }
  }

  /// What the store holds at V3: each contact's parts and friends' first names.
  static func contactsAtV3(_ store: VersionedStore) throws -> [String: [String]] {
    try store.open(ContactsV3.models, plan: ContactsPlanToV3.self) { context in
      let contacts = try context.fetch(FetchDescriptor<ContactsV3.Contact>())
      return Dictionary(
        uniqueKeysWithValues: contacts.map { contact in
          ("\(contact.first)|\(contact.last)|\(contact.starred)", contact.friends.map(\.first))
        })
    }
  }

  static let expectedAtV3: [String: [String]] = [
    "Ada|Lovelace|false": ["Grace", "Charles"],
    "Charles|Babbage|false": ["Ada"],
    "Grace|Brewster Hopper|false": [],
  ]

  @Test(arguments: StoreKind.allCases)
  func aStoreOfTheFirstVersionRunsEveryStage(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try Self.fillContacts(store, plan: ContactsPlanAtV1.self)
    #expect(try store.store().storedVersion == Schema.Version(1, 0, 0))
    #expect(try Self.contactsAtV3(store) == Self.expectedAtV3)
    #expect(try store.store().storedVersion == Schema.Version(3, 0, 0))
    // And again, with nothing to migrate.
    #expect(try Self.contactsAtV3(store) == Self.expectedAtV3)
  }

  @Test(arguments: StoreKind.allCases)
  func aStoreWrittenWithoutAPlanIsFoundByItsEntities(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try Self.fillContacts(store, plan: nil)
    #expect(try store.store().storedVersion == nil)
    #expect(try Self.contactsAtV3(store) == Self.expectedAtV3)
  }

  @Test(arguments: StoreKind.allCases)
  func aStoreOfTheMiddleVersionRunsTheLastStage(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try Self.fillContacts(store, plan: ContactsPlanAtV1.self)
    let atV2 = try store.open(ContactsV2.models, plan: ContactsPlanToV2.self) { context in
      try context.fetch(FetchDescriptor<ContactsV2.Contact>()).map { "\($0.first!) \($0.last!)" }
    }
    #expect(Set(atV2) == ["Ada Lovelace", "Charles Babbage", "Grace Brewster Hopper"])
    #expect(try store.store().storedVersion == Schema.Version(2, 0, 0))
    #expect(try Self.contactsAtV3(store) == Self.expectedAtV3)
  }

  @Test(arguments: StoreKind.allCases)
  func aNewerStoreIsRefusedUntouchedNamingBothVersions(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try Self.fillContacts(store, plan: ContactsPlanAtV1.self)
    _ = try Self.contactsAtV3(store)  // migrates, keeping the old file
    _ = try Self.contactsAtV3(store)  // opens the migrated store, removing it
    let before = kind == .binary ? try fileBytes(store.url) : []
    for plan: any SchemaMigrationPlan.Type in [ContactsPlanToV2.self, ContactsPlanAtV1.self] {
      let models = plan.schemas.last!.models
      let error = try #require(throws: ObjectGraphError.self) {
        try store.open(models, plan: plan) { _ in }
      }
      #expect(error.code == .newerSchemaVersion)
      #expect(
        error.message.contains("3.0.0")
          && error.message.contains("\(plan.schemas.last!.versionIdentifier)"))
    }
    // Without a plan, a store that records a version is not migrated by inference.
    let unplanned = try #require(throws: ObjectGraphError.self) {
      try store.open([ContactsV1.Contact.self]) { _ in }
    }
    #expect(unplanned.code == .migrationFailed && unplanned.message.contains("migration plan"))
    if kind == .binary {
      #expect(try fileBytes(store.url) == before)
      #expect(store.directory.fileNames == ["library.ogstore"])
    }
    #expect(try Self.contactsAtV3(store) == Self.expectedAtV3)
  }

  @Test(arguments: StoreKind.allCases)
  func aStageThatThrowsLeavesTheStoreAsItWas(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try Self.fillContacts(store, plan: ContactsPlanAtV1.self)
    let before = kind == .binary ? try fileBytes(store.url) : []
    let error = try #require(throws: ObjectGraphError.self) {
      try store.open(ContactsV2.models, plan: FailingContactsPlan.self) { _ in }
    }
    #expect(error.code == .migrationFailed)
    #expect(error.message.contains("didMigrate threw") && error.message.contains("no phone book"))
    if kind == .binary {
      #expect(try fileBytes(store.url) == before)
      #expect(store.directory.fileNames == ["library.ogstore"])
    }
    #expect(try Self.contactsAtV3(store) == Self.expectedAtV3)
  }

  @Test(arguments: StoreKind.allCases)
  func willMigrateRemovesRepeatsBeforeUniqueIsChecked(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try MigrationTests.fillLibrary(store)
    try store.open(LibraryV1.types) { context in
      let books = try context.fetch(
        FetchDescriptor<LibraryV1.Book>(sortBy: [SortDescriptor(\.pages)]))
      books[7].isbn = "isbn-3"
      try context.save()
    }
    let isbns = try store.open(LibraryV2.types, plan: LibraryDeduplicatingPlan.self) { context in
      try context.fetch(FetchDescriptor<LibraryV2.Book>(sortBy: [SortDescriptor(\.pages)]))
        .map(\.isbn)
    }
    #expect(isbns.count == 30)
    #expect(isbns[3] == "isbn-3" && isbns[7] == "isbn-3 (copy book 7)")
    #expect(Set(isbns).count == 30)
  }

  @Test func aContainerWhoseModelsAreNotThePlansLastIsRefused() throws {
    let error = try #require(throws: ObjectGraphError.self) {
      _ = try ObjectContainer(
        for: [ContactsV2.Contact.self], migrationPlan: ContactsPlanToV3.self, store: InMemoryStore()
      )
    }
    #expect(error.code == .invalidConfiguration && error.message.contains("3.0.0"))
  }
}

/// A plan whose custom stage throws.
enum FailingContactsPlan: SchemaMigrationPlan {
  struct NoPhoneBook: Error, CustomStringConvertible {
    var description: String { "no phone book" }
  }

  static var schemas: [any VersionedSchema.Type] { [ContactsV1.self, ContactsV2.self] }
  static var stages: [MigrationStage] {
    [
      .custom(
        fromVersion: ContactsV1.self, toVersion: ContactsV2.self, willMigrate: nil,
        didMigrate: { _ in throw NoPhoneBook() })
    ]
  }
}

extension PersistentStore {
  /// The schema version the store records (opening nothing).
  var storedVersion: Schema.Version? {
    get throws { try (self as! any MigratableStore).storedSchema()?.version }
  }
}
