import Foundation
import ObjectGraph

/// The seed apps' box tree: boxes nested to any depth.
final class Box: ManagedObject {
  @Attribute(.unique) var id = UUID()
  @Attribute var title = ""
  @Attribute var detail = ""
  @Attribute var created = Date()
  @Relationship(inverse: \Box.children) var parent: Box?
  @Relationship(deleteRule: .cascade) var children: [Box]

  convenience init(title: String, parent: Box? = nil, created: Date = Date()) {
    self.init()
    self.title = title
    self.created = created
    self.parent = parent
  }
}

/// An item with ordered notes.
final class Item: ManagedObject {
  @Attribute var name = ""
  @Relationship(deleteRule: .cascade, inverse: \Note.item) var notes: [Note]
  @Relationship var tags: [Tag]

  convenience init(name: String) {
    self.init()
    self.name = name
  }
}

final class Note: ManagedObject {
  @Attribute var text = ""
  @Relationship var item: Item?

  convenience init(_ text: String) {
    self.init()
    self.text = text
  }
}

/// A tag related to items without an inverse.
final class Tag: ManagedObject {
  @Attribute(.unique) var name = ""

  convenience init(name: String) {
    self.init()
    self.name = name
  }
}

/// A Notion-like block tree, declared with a bare `@Relationship var parent`.
final class Block: ManagedObject {
  @Attribute var text = ""
  @Attribute var created = Date()
  @Relationship var parent: Block?
  @Relationship(deleteRule: .cascade, inverse: \Block.parent) var children: [Block]

  convenience init(_ text: String, parent: Block? = nil, created: Date) {
    self.init()
    self.text = text
    self.created = created
    self.parent = parent
  }
}

/// One-to-one and many-to-many relationships, deny and no-action rules, count bounds.
final class Person: ManagedObject {
  @Attribute var name = ""
  @Attribute(.indexed) var age = 0
  @Attribute var nickname: String? = nil
  @Relationship(inverse: \Passport.owner) var passport: Passport?
  @Relationship(inverse: \Club.members) var clubs: [Club]
  @Relationship(deleteRule: .deny, inverse: \Loan.borrower) var loans: [Loan]
  @Relationship(deleteRule: .noAction, inverse: \Pet.owner) var pets: [Pet]

  convenience init(name: String, age: Int = 0) {
    self.init()
    self.name = name
    self.age = age
  }
}

final class Passport: ManagedObject {
  @Attribute var number = ""
  @Relationship var owner: Person?
}

final class Club: ManagedObject {
  @Attribute var name = ""
  @Relationship(maximumModelCount: 3) var members: [Person]

  convenience init(name: String) {
    self.init()
    self.name = name
  }
}

final class Loan: ManagedObject {
  @Attribute var amount = 0.0
  @Relationship var borrower: Person?
}

final class Pet: ManagedObject {
  @Attribute var name = ""
  @Relationship var owner: Person?
}

/// Every attribute type, optionals and a Codable value.
final class Sample: ManagedObject {
  struct Settings: Codable, Equatable {
    var volume: Int
    var labels: [String]
  }

  @Attribute var flag = false
  @Attribute var int = 0
  @Attribute var int8: Int8 = 0
  @Attribute var int16: Int16 = 0
  @Attribute var int32: Int32 = 0
  @Attribute var int64: Int64 = 0
  @Attribute var uint: UInt = 0
  @Attribute var uint8: UInt8 = 0
  @Attribute var uint16: UInt16 = 0
  @Attribute var uint32: UInt32 = 0
  @Attribute var uint64: UInt64 = 0
  @Attribute var double = 0.0
  @Attribute var float: Float = 0
  @Attribute var string = ""
  @Attribute var date = Date(timeIntervalSince1970: 0)
  @Attribute var data = Data()
  @Attribute var uuid = UUID()
  @Attribute var url = URL(string: "https://example.com")!
  @Attribute var optionalString: String? = nil
  @Attribute var optionalInt: Int? = nil
  @Attribute var settings = Settings(volume: 1, labels: [])
  @Attribute var optionalSettings: Settings? = nil
}

/// A model class other model classes inherit from: each class is an entity of its own (not
/// in `allModels`; the container tests list them).
class Vehicle: ManagedObject {
  @Attribute var name = ""

  convenience init(name: String) {
    self.init()
    self.name = name
  }
}

/// A subclass model: ``Vehicle``'s attributes and its own.
final class Truck: Vehicle {
  @Attribute var load = 0
}

extension Schema {
  /// One entity, `name`: a string `title` and an ordered to-many `items` of its own kind;
  /// for tests of the storage that applies changesets.
  static func titleAndList(_ name: String) -> Schema {
    Schema(entities: [
      EntityDescription(
        name: name,
        properties: [
          PropertyDescription(
            name: "title",
            kind: .attribute(
              AttributeDescription(
                type: .string, isOptional: false, isUnique: false, isIndexed: false))),
          PropertyDescription(
            name: "items",
            kind: .relationship(
              RelationshipDescription(
                destination: name, isToMany: true, inverse: nil, deleteRule: .nullify))),
        ])
    ])
  }
}
