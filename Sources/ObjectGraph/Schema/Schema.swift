import Foundation

/// The persistent shape of a container's models: entities, their attributes and
/// relationships, in a form a store can record, compare and send between actors.
///
/// A container builds its schema once from the model classes; a store receives it in
/// ``PersistentStore/open(schema:)`` and refers to entities and properties by their index
/// in ``entities`` and ``EntityDescription/properties``.
public struct Schema: Hashable, Codable, Sendable {
  /// The entities, in the order the model types were given to the container.
  public var entities: [EntityDescription]
  /// The version of the app's models this schema is, when the container was given a
  /// ``SchemaMigrationPlan`` (its last ``VersionedSchema``); nil otherwise. A store records
  /// it with the schema.
  public var version: Version?
  /// The migrations that brought the stored data to this schema, oldest first, as a store
  /// records them (nil in a schema made from models, and in a store never migrated).
  public var history: [MigrationRecord]?
  /// The highest number a store file has given an entity of this schema, retired numbers
  /// included (see ``EntityDescription/number``); nil when the entities are numbered by
  /// position, the last being their count.
  public var lastEntityNumber: Int?

  /// Creates a schema.
  public init(entities: [EntityDescription]) {
    self.entities = entities
  }

  /// Creates a schema of a version.
  public init(entities: [EntityDescription], version: Version?) {
    self.entities = entities
    self.version = version
  }

  /// The index of the entity with this name.
  public func entityIndex(named name: String) -> Int? {
    entities.firstIndex { $0.name == name }
  }

  /// Whether a store written with `stored` holds data of this schema: the schemas are
  /// equal, but for the shapes of `Codable` types that `stored` did not record (a store
  /// written before they were; its values are checked as they are loaded) and for the
  /// properties' original names, and the stored migration history. A version counts when
  /// both record one: a schema of no version matches a stored one of any, and one of a
  /// version a stored one of none.
  public func matches(stored: Schema) -> Bool {
    if stored == self { return true }
    if let version, let storedVersion = stored.version, version != storedVersion {
      return false
    }
    guard stored.entities.count == entities.count else { return false }
    var adjusted = self
    adjusted.version = stored.version
    adjusted.history = stored.history
    adjusted.adoptNumbers(of: stored)
    for (entity, storedEntity) in zip(adjusted.entities.indices, stored.entities) {
      let properties = adjusted.entities[entity].properties
      guard properties.count == storedEntity.properties.count else { return false }
      for (property, storedProperty) in zip(properties.indices, storedEntity.properties) {
        adjusted.entities[entity].properties[property].originalName = storedProperty.originalName
        guard case .attribute(var attribute) = properties[property].kind,
          storedProperty.attribute?.codableType == nil
        else { continue }
        attribute.codableType = nil
        adjusted.entities[entity].properties[property].kind = .attribute(attribute)
      }
    }
    return stored == adjusted
  }
}

/// One migration of a store's data, as the store records it in its schema's
/// ``Schema/history``.
public struct MigrationRecord: Hashable, Codable, Sendable {
  /// The schema version migrated from, if the store recorded one.
  public var fromVersion: Schema.Version?
  /// The schema version migrated to, if the container had a plan.
  public var toVersion: Schema.Version?
  /// When the migration ran.
  public var date: Date
  /// What changed, one phrase each, as ``SchemaDifference`` says it.
  public var changes: [String]

  /// Creates a record.
  public init(
    fromVersion: Schema.Version?, toVersion: Schema.Version?, date: Date, changes: [String]
  ) {
    self.fromVersion = fromVersion
    self.toVersion = toVersion
    self.date = date
    self.changes = changes
  }
}

/// One entity: a model class's persistent properties.
public struct EntityDescription: Hashable, Codable, Sendable {
  /// The entity's name: the model class's name.
  public var name: String
  /// The persistent properties, in declaration order.
  public var properties: [PropertyDescription]
  /// The number the records of a store file name this entity by: given when the entity
  /// first was stored, kept through every migration, never given to another entity once
  /// this one is removed. Nil means the entity's position + 1 (a schema made from models,
  /// and a store whose entities never moved). Stores other than the binary store may
  /// ignore it.
  public var number: Int?
  /// The highest number a store file has given a property of this entity, retired numbers
  /// included; nil when the properties are numbered by position, the last being their
  /// count.
  public var lastPropertyNumber: Int?

  /// Creates an entity description.
  public init(name: String, properties: [PropertyDescription]) {
    self.name = name
    self.properties = properties
  }

  /// The index of the property with this name.
  public func propertyIndex(named name: String) -> Int? {
    properties.firstIndex { $0.name == name }
  }
}

/// One persistent property: an attribute or a relationship.
public struct PropertyDescription: Hashable, Codable, Sendable {
  /// What the property holds.
  public enum Kind: Hashable, Codable, Sendable {
    case attribute(AttributeDescription)
    case relationship(RelationshipDescription)
  }

  /// The property's name, as declared (without the wrapper's underscore).
  public var name: String
  /// What the property holds.
  public var kind: Kind
  /// The property's name in an earlier version of the model (SwiftData's `originalName:`),
  /// if declared: recorded for migrations; two schemas that differ only here match.
  public var originalName: String?
  /// The number the records of a store file name this property by: given when the
  /// property first was stored, kept through renames and every migration, never given to
  /// another property of the entity once this one is removed. Nil means the property's
  /// position + 1. Two schemas that differ only in numbers match.
  public var number: Int?
  /// The value of the property in a record written before the property was added, encoded
  /// as the binary store encodes one value: given by a migration that kept the store's
  /// records and added the property (nil: every record has the property). Stores other
  /// than the binary store may ignore it; two schemas that differ only here match.
  public var absentValue: [UInt8]?

  /// Creates a property description.
  public init(name: String, kind: Kind) {
    self.name = name
    self.kind = kind
  }

  /// Creates a property description with the name it had in an earlier version of the
  /// model.
  public init(name: String, kind: Kind, originalName: String?) {
    self.init(name: name, kind: kind)
    self.originalName = originalName
  }

  /// The attribute description, if the property is an attribute.
  public var attribute: AttributeDescription? {
    if case .attribute(let attribute) = kind { return attribute }
    return nil
  }

  /// The relationship description, if the property is a relationship.
  public var relationship: RelationshipDescription? {
    if case .relationship(let relationship) = kind { return relationship }
    return nil
  }
}

/// The stored type of an attribute.
public enum AttributeType: String, Hashable, Codable, Sendable {
  case bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64
  case double, float, string, date, data, uuid, url
  /// A `Codable` value, stored as its encoded bytes.
  case codable
}

/// An attribute: a value of one of the ``AttributeType``s.
public struct AttributeDescription: Hashable, Codable, Sendable {
  /// The stored type.
  public var type: AttributeType
  /// Whether the attribute is declared optional (`String?`).
  public var isOptional: Bool
  /// Whether no two objects of the entity may hold the same value.
  public var isUnique: Bool
  /// Whether fetches by equality on this attribute use an index (and, for a type with an
  /// order, comparisons and sorts: see ``AttributeOption/indexed``).
  public var isIndexed: Bool
  /// For a ``AttributeType/codable`` attribute, its Swift type's name and shape (the keys
  /// and value types its decoding asks for, see ``CodableShape``), e.g.
  /// `Settings {labels: [String], volume: Int}`: a changed type is a changed schema. Nil for
  /// other attributes, and in schemas stored before shapes were recorded.
  public var codableType: String?

  /// Creates an attribute description.
  public init(
    type: AttributeType, isOptional: Bool, isUnique: Bool, isIndexed: Bool,
    codableType: String? = nil
  ) {
    self.type = type
    self.isOptional = isOptional
    self.isUnique = isUnique
    self.isIndexed = isIndexed
    self.codableType = codableType
  }
}

/// A relationship to objects of another (or the same) entity.
public struct RelationshipDescription: Hashable, Codable, Sendable {
  /// The name of the destination entity.
  public var destination: String
  /// Whether the relationship holds an ordered list of objects rather than at most one.
  public var isToMany: Bool
  /// The name of the inverse relationship in the destination entity, if any.
  public var inverse: String?
  /// What deleting the source object does to the objects it relates to.
  public var deleteRule: DeleteRule
  /// The fewest objects a to-many relationship may hold at save, if bounded.
  public var minimumCount: Int?
  /// The most objects a to-many relationship may hold at save, if bounded.
  public var maximumCount: Int?

  /// Creates a relationship description.
  public init(
    destination: String, isToMany: Bool, inverse: String?, deleteRule: DeleteRule,
    minimumCount: Int? = nil, maximumCount: Int? = nil
  ) {
    self.destination = destination
    self.isToMany = isToMany
    self.inverse = inverse
    self.deleteRule = deleteRule
    self.minimumCount = minimumCount
    self.maximumCount = maximumCount
  }
}

/// What deleting an object does to the objects in one of its relationships.
public enum DeleteRule: String, Hashable, Codable, Sendable {
  /// Remove the deleted object from the related objects' inverse (the default).
  case nullify
  /// Delete the related objects too, to any depth.
  case cascade
  /// Refuse to save while the relationship still holds objects.
  case deny
  /// Leave the related objects' inverse alone.
  case noAction
}
