import Foundation
import ObjectGraph

// Versions of a small library app's models, each a change a lightweight migration infers.

/// The first version: books on shelves, and stickers.
enum LibraryV1 {
  static let types: [ManagedObject.Type] = [Book.self, Shelf.self, Sticker.self]

  final class Book: ManagedObject {
    @Attribute var title = ""
    @Attribute var pages: Int32 = 0
    @Attribute var rating: Float = 0
    @Attribute var isbn = ""
    @Attribute var subtitle: String? = nil
    @Attribute var summary = ""
    @Attribute var obsolete = "dropped"
    @Attribute(.indexed) var shelfMark = ""
    @Relationship var shelf: Shelf?
    @Relationship var stickers: [Sticker] = []

    convenience init(_ title: String, isbn: String, pages: Int32, subtitle: String? = nil) {
      self.init()
      self.title = title
      self.isbn = isbn
      self.pages = pages
      self.rating = Float(pages) / 4
      self.subtitle = subtitle
      self.summary = "about \(title)"
      self.shelfMark = "S-\(title)"
    }
  }

  final class Shelf: ManagedObject {
    @Attribute(.unique) var name = ""
    @Relationship(deleteRule: .nullify, inverse: \Book.shelf) var books: [Book] = []
  }

  final class Sticker: ManagedObject {
    @Attribute var label = ""
  }
}

/// Every inferred change at once: an attribute and a relationship renamed, two widenings, `.unique` added, optional made
/// required (with a default) and required made optional, attributes added and removed, an
/// index added and one removed, `.unique` removed, a delete rule changed, an entity and relationships added,
/// one entity and its relationship removed.
enum LibraryV2 {
  static let types: [ManagedObject.Type] = [Book.self, Shelf.self, Reader.self]

  final class Book: ManagedObject {
    @Attribute(originalName: "title") var name = ""
    @Attribute var pages: Int64 = 0
    @Attribute var rating: Double = 0
    @Attribute(.unique) var isbn = ""
    @Attribute var subtitle = "none"
    @Attribute var summary: String? = nil
    @Attribute var shelfMark = ""
    @Attribute var edition = 1
    @Attribute var note: String? = nil
    @Relationship(originalName: "shelf") var location: Shelf?
    @Relationship var readers: [Reader] = []
  }

  final class Shelf: ManagedObject {
    @Attribute(.indexed) var name = ""
    @Relationship(deleteRule: .cascade, inverse: \Book.location) var books: [Book] = []
  }

  final class Reader: ManagedObject {
    @Attribute var name = ""
    @Relationship(inverse: \Book.readers) var books: [Book] = []
  }
}

/// Changes that keep every stored value, so that a file store keeps its records: an
/// attribute and a relationship renamed, two widenings, an attribute removed from the
/// middle and a relationship from the end, an attribute added with a default and an
/// optional one added.
enum LibraryKept {
  static let types: [ManagedObject.Type] = [Book.self, Shelf.self, Sticker.self]

  final class Book: ManagedObject {
    @Attribute(originalName: "title") var name = ""
    @Attribute var pages: Int64 = 0
    @Attribute var rating: Double = 0
    @Attribute var isbn = ""
    @Attribute var subtitle: String? = nil
    @Attribute var summary = ""
    @Attribute(.indexed) var shelfMark = ""
    @Attribute var edition = 1
    @Attribute var note: String? = nil
    @Relationship(originalName: "shelf") var location: Shelf?
  }

  final class Shelf: ManagedObject {
    @Attribute(.unique) var name = ""
    @Relationship(deleteRule: .nullify, inverse: \Book.location) var books: [Book] = []
  }

  final class Sticker: ManagedObject {
    @Attribute var label = ""
  }
}

/// Changes no migration infers, one model each.
enum LibraryRefused {
  /// `pages` was `Int32`, is `String`.
  final class Book: ManagedObject {
    @Attribute var title = ""
    @Attribute var pages = ""
    @Attribute var rating: Float = 0
    @Attribute var isbn = ""
    @Attribute var subtitle: String? = nil
    @Attribute var summary = ""
    @Attribute var obsolete = "dropped"
    @Attribute(.indexed) var shelfMark = ""
    @Relationship var shelf: Shelf?
    @Relationship var stickers: [Sticker] = []
  }

  /// `shelf` was a to-one, is a to-many; `books` the other way round.
  final class Shelf: ManagedObject {
    @Attribute var name = ""
    @Relationship(inverse: \Book.shelf) var books: Book?
  }

  final class Sticker: ManagedObject {
    @Attribute var label = ""
  }
}

/// A required attribute with no default added to a stored entity.
enum LibraryRequiredAdded {
  static let types: [ManagedObject.Type] = [Book.self, Shelf.self, Sticker.self]

  final class Book: ManagedObject {
    @Attribute var title = ""
    @Attribute var pages: Int32 = 0
    @Attribute var rating: Float = 0
    @Attribute var isbn = ""
    @Attribute var subtitle: String? = nil
    @Attribute var summary = ""
    @Attribute var obsolete = "dropped"
    @Attribute(.indexed) var shelfMark = ""
    @Attribute var author: String
    @Relationship var shelf: Shelf?
    @Relationship var stickers: [Sticker] = []

    required init() { super.init() }
  }

  final class Shelf: ManagedObject {
    @Attribute var name = ""
    @Relationship(deleteRule: .nullify, inverse: \Book.shelf) var books: [Book] = []
  }

  final class Sticker: ManagedObject {
    @Attribute var label = ""
  }
}

/// `subtitle` made required with no default.
enum LibrarySubtitleRequired {
  static let types: [ManagedObject.Type] = [Book.self, Shelf.self, Sticker.self]

  final class Book: ManagedObject {
    @Attribute var title = ""
    @Attribute var pages: Int32 = 0
    @Attribute var rating: Float = 0
    @Attribute var isbn = ""
    @Attribute var subtitle: String
    @Attribute var summary = ""
    @Attribute var obsolete = "dropped"
    @Attribute(.indexed) var shelfMark = ""
    @Relationship var shelf: Shelf?
    @Relationship var stickers: [Sticker] = []

    required init() { super.init() }
  }

  final class Shelf: ManagedObject {
    @Attribute var name = ""
    @Relationship(deleteRule: .nullify, inverse: \Book.shelf) var books: [Book] = []
  }

  final class Sticker: ManagedObject {
    @Attribute var label = ""
  }
}

/// `subtitle` made required with a default: a stored nil becomes "none".
enum LibrarySubtitleDefaulted {
  static let types: [ManagedObject.Type] = [Book.self, Shelf.self, Sticker.self]

  final class Book: ManagedObject {
    @Attribute var title = ""
    @Attribute var pages: Int32 = 0
    @Attribute var rating: Float = 0
    @Attribute var isbn = ""
    @Attribute var subtitle = "none"
    @Attribute var summary = ""
    @Attribute var obsolete = "dropped"
    @Attribute(.indexed) var shelfMark = ""
    @Relationship var shelf: Shelf?
    @Relationship var stickers: [Sticker] = []
  }

  final class Shelf: ManagedObject {
    @Attribute(.unique) var name = ""
    @Relationship(deleteRule: .nullify, inverse: \Book.shelf) var books: [Book] = []
  }

  final class Sticker: ManagedObject {
    @Attribute var label = ""
  }
}

// A contacts app over three versions: V2 adds a first and last name that its custom stage
// fills by splitting the name; V3 drops the name and requires the two parts.

enum ContactsV1: VersionedSchema {
  static let versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [ManagedObject.Type] { [Contact.self] }

  final class Contact: ManagedObject {
    @Attribute var name = ""
    @Relationship var friends: [Contact] = []
  }
}

enum ContactsV2: VersionedSchema {
  static let versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [ManagedObject.Type] { [Contact.self] }

  final class Contact: ManagedObject {
    @Attribute var name = ""
    @Attribute var first: String? = nil
    @Attribute var last: String? = nil
    @Relationship var friends: [Contact] = []
  }
}

enum ContactsV3: VersionedSchema {
  static let versionIdentifier = Schema.Version(3, 0, 0)
  static var models: [ManagedObject.Type] { [Contact.self] }

  final class Contact: ManagedObject {
    @Attribute var first = ""
    @Attribute var last = ""
    @Attribute var starred = false
    @Relationship var friends: [Contact] = []
  }
}

/// V1 to V2 with the custom stage, as an app at V2 ships it.
enum ContactsPlanToV2: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [ContactsV1.self, ContactsV2.self] }
  static var stages: [MigrationStage] { [splitNames] }

  /// Fills `first` and `last` from `name`, after the inferred step added them.
  static var splitNames: MigrationStage {
    .custom(
      fromVersion: ContactsV1.self, toVersion: ContactsV2.self, willMigrate: nil,
      didMigrate: { context in
        for contact in try context.fetch(FetchDescriptor<ContactsV2.Contact>()) {
          let parts = contact.name.split(separator: " ", maxSplits: 1)
          contact.first = parts.first.map(String.init) ?? ""
          contact.last = parts.count > 1 ? String(parts[1]) : ""
        }
        try context.save()
      })
  }
}

/// V1 to V2 to V3, as an app at V3 ships it (the last stage inferred).
enum ContactsPlanToV3: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] {
    [ContactsV1.self, ContactsV2.self, ContactsV3.self]
  }
  static var stages: [MigrationStage] {
    [
      ContactsPlanToV2.splitNames,
      .lightweight(fromVersion: ContactsV2.self, toVersion: ContactsV3.self),
    ]
  }
}

/// A plan that stops at V1, as the first release ships it.
enum ContactsPlanAtV1: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [ContactsV1.self] }
  static var stages: [MigrationStage] { [] }
}

// A people app whose second version splits each person's address into an entity of its
// own, turns the one pet into a list, and fills a new required initials attribute: a
// custom stage that reads the old objects and writes the new ones at once.

enum PeopleV1: VersionedSchema {
  static let versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [ManagedObject.Type] { [Person.self, Pet.self] }

  final class Person: ManagedObject {
    @Attribute var name = ""
    @Attribute var street = ""
    @Attribute var city = ""
    @Relationship(inverse: \Pet.owner) var pet: Pet?
  }

  final class Pet: ManagedObject {
    @Attribute var name = ""
    @Relationship var owner: Person?
  }
}

enum PeopleV2: VersionedSchema {
  static let versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [ManagedObject.Type] { [Person.self, Pet.self, Address.self] }

  final class Person: ManagedObject {
    @Attribute var name: String
    @Attribute var initials: String
    @Relationship(inverse: \Address.residents) var address: Address?
    @Relationship(inverse: \Pet.owner) var pets: [Pet] = []

    required init() { super.init() }
  }

  final class Pet: ManagedObject {
    @Attribute var name = ""
    @Relationship var owner: Person?
  }

  final class Address: ManagedObject {
    @Attribute var street = ""
    @Attribute var city = ""
    @Relationship var residents: [Person] = []
  }
}

enum PeoplePlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [PeopleV1.self, PeopleV2.self] }
  static var stages: [MigrationStage] {
    [
      .custom(fromVersion: PeopleV1.self, toVersion: PeopleV2.self) { migration in
        var addresses: [String: PeopleV2.Address] = [:]
        for old in try migration.old.fetch(FetchDescriptor<PeopleV1.Person>()) {
          let person = try migration.migrated(old, as: PeopleV2.Person.self)
          person.initials = String(old.name.split(separator: " ").compactMap(\.first))
          let key = "\(old.street), \(old.city)"
          if addresses[key] == nil {
            let address = PeopleV2.Address()
            address.street = old.street
            address.city = old.city
            migration.new.insert(address)
            addresses[key] = address
          }
          person.address = addresses[key]
          if let pet = old.pet {
            person.pets = [try migration.migrated(pet, as: PeopleV2.Pet.self)]
          }
        }
      }
    ]
  }
}

/// The seed stories' models, each with an attribute added (the next release of the apps).
enum SeedStoriesV2 {
  static let types: [ManagedObject.Type] = [Box.self, Item.self, Note.self, Tag.self, Block.self]

  final class Box: ManagedObject {
    @Attribute(.unique) var id = UUID()
    @Attribute var title = ""
    @Attribute var detail = ""
    @Attribute var created = Date()
    @Attribute var color = "none"
    @Relationship(inverse: \Box.children) var parent: Box?
    @Relationship(deleteRule: .cascade) var children: [Box]
  }

  final class Item: ManagedObject {
    @Attribute var name = ""
    @Attribute var isPinned = false
    @Relationship(deleteRule: .cascade, inverse: \Note.item) var notes: [Note]
    @Relationship var tags: [Tag]
  }

  final class Note: ManagedObject {
    @Attribute var text = ""
    @Attribute var edited: Date? = nil
    @Relationship var item: Item?
  }

  final class Tag: ManagedObject {
    @Attribute(.unique) var name = ""
  }

  final class Block: ManagedObject {
    @Attribute var text = ""
    @Attribute var created = Date()
    @Attribute var kind = "paragraph"
    @Relationship var parent: Block?
    @Relationship(deleteRule: .cascade, inverse: \Block.parent) var children: [Block]
  }
}

/// Two string attributes whose order the next version swaps, with one added between.
enum LabelsV1 {
  final class Label: ManagedObject {
    @Attribute var front = ""
    @Attribute var back = ""
  }
}

enum LabelsV2 {
  final class Label: ManagedObject {
    @Attribute var back = ""
    @Attribute var middle = "-"
    @Attribute var front = ""
  }
}

extension LibraryV1: VersionedSchema {
  static let versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [ManagedObject.Type] { types }
}

extension LibraryV2: VersionedSchema {
  static let versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [ManagedObject.Type] { types }
}

/// SwiftData's way to add `.unique` to values that repeat: `willMigrate` removes the
/// repeats in the old models before the inferred step checks them.
enum LibraryDeduplicatingPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [LibraryV1.self, LibraryV2.self] }
  static var stages: [MigrationStage] {
    [
      .custom(
        fromVersion: LibraryV1.self, toVersion: LibraryV2.self,
        willMigrate: { context in
          var seen = Set<String>()
          let books = try context.fetch(
            FetchDescriptor<LibraryV1.Book>(sortBy: [SortDescriptor(\.pages)]))
          for book in books where !seen.insert(book.isbn).inserted {
            book.isbn += " (copy \(book.title))"
          }
          try context.save()
        }, didMigrate: nil)
    ]
  }
}
