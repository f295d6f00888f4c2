import Foundation
import Synchronization

/// Everything the framework knows about one model class, built once per process from the
/// class itself (see ``ModelRegistry``) and immutable once published.
///
/// Properties are numbered in the order their wrappers are initialized, which is the order
/// of the object's slots; relationship bookkeeping, indexes, encoding and loading all work by
/// these numbers, with no key paths and no reflection per object.
final class EntityModel: @unchecked Sendable {
  let type: ManagedObject.Type
  let name: String
  /// Set while the model is built, then never changed.
  fileprivate(set) var properties: [PropertyModel] = []
  /// The numbers of the relationship properties, for loops that touch only those.
  private(set) var relationshipIndices: [Int] = []
  /// Each property's relationship model, nil for attributes (read without copying the
  /// property's model).
  private var relationshipsByProperty: [RelationshipModel?] = []
  /// The models of the relationships at ``relationshipIndices``, in the same order.
  private(set) var relationshipModels: [RelationshipModel] = []
  /// Per property: whether it is a relationship (loading links those once every object
  /// exists).
  private(set) var isRelationship: [Bool] = []
  /// The properties a save validates: unique attributes and to-many relationships with
  /// count bounds.
  private(set) var validatedIndices: [Int] = []
  /// The properties a save requires a value in: the non-optional attributes declared
  /// without a default (`@Attribute var title: String`), which an inserted object must have
  /// set, and the required to-one relationships (`var room: Room`), which every saved object
  /// must hold an object in.
  private(set) var requiredIndices: [Int] = []
  /// Per property: whether a context indexes it (indexed or unique attributes, to-one
  /// relationships; see ``EntityTable``).
  private(set) var isIndexed: [Bool] = []
  /// The number of persistent properties.
  let propertyCount: Int
  /// Whether objects of this class share registrars (see ``ObservationBox``).
  let sharesObservation: Bool
  /// Observation keys by seat, then property: the key of property `p` of the object in
  /// seat `s` is at `s * propertyCount + p` and reads `[observationKey: s * 256 + p]`.
  let observationKeys: [KeyPath<ManagedObject, Int>]
  /// An instance used to resolve key paths to property numbers (see ``propertyIndex(for:)``).
  let prototype: ManagedObject?

  /// The model of prototypes while their class is being described.
  static let describing = EntityModel(
    type: ManagedObject.self, name: "(describing)", prototype: nil, propertyCount: 0)

  /// The wrappers' declarations, kept only until relationships are resolved.
  var pendingBlueprints: [PropertyBlueprint] = []

  private let keyPathCache = LockedBox<[AnyKeyPath: Int]>([:])
  private let objectIDKeyPaths = LockedBox<[AnyKeyPath: Bool]>([:])
  /// Held while any prototype is probed. One lock for every model: a key path probed on one
  /// class's prototype can read another's (a required to-one's slot holds the destination's
  /// prototype), whose slots a probe of that class writes.
  private static let probeLock = NSRecursiveLock()

  init(type: ManagedObject.Type, name: String, prototype: ManagedObject?, propertyCount: Int) {
    self.type = type
    self.name = name
    self.prototype = prototype
    self.propertyCount = propertyCount
    sharesObservation = propertyCount <= ObservationBox.seatWidth
    observationKeys = ObservationKeys.keys(
      seats: sharesObservation ? ObservationBox.capacity : 1, propertyCount: propertyCount)
  }

  /// The relationship model of property `index`, if it is a relationship.
  func relationship(_ index: Int) -> RelationshipModel? { relationshipsByProperty[index] }

  /// The description a store records.
  var entityDescription: EntityDescription {
    EntityDescription(name: name, properties: properties.map(\.propertyDescription))
  }

  // MARK: Key path resolution

  /// The number of the property that `probe` reads on an instance of this class, found by
  /// running it on the prototype and noting which wrapper answered.
  func propertyIndex(probing probe: (ManagedObject) -> Void) -> Int? {
    guard let prototype else { return nil }
    return Self.probeLock.withLock {
      let state = ModelBuildState.current
      state.probedIndex = nil
      probe(prototype)
      defer { state.probedIndex = nil }
      return state.probedIndex
    }
  }

  /// Whether a key path reads an object's ``ManagedObject/objectID`` (`\Box.objectID`, as in
  /// `$0.parent?.objectID == id`), found by reading it on the prototype while it holds a
  /// made-up identifier. Cached per key path.
  func readsObjectID(_ keyPath: AnyKeyPath) -> Bool {
    if let cached = objectIDKeyPaths.withLock({ $0[keyPath] }) { return cached }
    var reads = false
    if let prototype, Swift.type(of: keyPath).valueType == ObjectID?.self,
      Swift.type(of: keyPath).rootType is ManagedObject.Type
    {
      let sentinel = ObjectID(rawValue: 0x0B1E_C76A_4A9F_1D01)
      reads = Self.probeLock.withLock {
        let saved = prototype.storedObjectID
        prototype.storedObjectID = sentinel
        defer { prototype.storedObjectID = saved }
        return (prototype[keyPath: keyPath] as? ObjectID?) == .some(sentinel)
      }
    }
    objectIDKeyPaths.withLock { $0[keyPath] = reads }
    return reads
  }

  /// The number of the property a key path (`\Box.title`) reads, or nil when it reads none
  /// of this class's persistent properties directly. Cached per key path.
  func propertyIndex(for keyPath: AnyKeyPath) -> Int? {
    if let cached = keyPathCache.withLock({ $0[keyPath] }) { return cached >= 0 ? cached : nil }
    let index = propertyIndex { object in
      _ = object[keyPath: keyPath]
    }
    keyPathCache.withLock { $0[keyPath] = index ?? -1 }
    return index
  }

  // MARK: Building

  func setProperties(_ properties: [PropertyModel]) {
    self.properties = properties
    relationshipsByProperty = properties.map { property in
      guard case .relationship(let relationship) = property.kind else { return nil }
      return relationship
    }
    relationshipIndices = properties.filter(\.isRelationship).map(\.index)
    relationshipModels = relationshipIndices.map { relationship($0)! }
    validatedIndices = properties.filter { property in
      switch property.kind {
      case .attribute(let attribute): attribute.description.isUnique
      case .relationship(let relationship):
        relationship.isToMany
          && (relationship.minimumCount != nil || relationship.maximumCount != nil)
      }
    }.map(\.index)
    requiredIndices = properties.filter { property in
      switch property.kind {
      case .attribute(let attribute): !attribute.hasDefault && !attribute.description.isOptional
      case .relationship(let relationship): relationship.isRequired
      }
    }.map(\.index)
    isIndexed = properties.map { property in
      switch property.kind {
      case .attribute(let attribute): attribute.isIndexed
      case .relationship(let relationship): !relationship.isToMany
      }
    }
    isRelationship = properties.map(\.isRelationship)
  }
}

/// One persistent property of a model class.
struct PropertyModel {
  enum Kind {
    case attribute(AttributeModel)
    case relationship(RelationshipModel)
  }

  let name: String
  let index: Int
  let kind: Kind
  /// The name in an earlier version of the model (`originalName:`).
  var originalName: String?

  var isRelationship: Bool {
    if case .relationship = kind { return true }
    return false
  }

  var propertyDescription: PropertyDescription {
    switch kind {
    case .attribute(let attribute):
      return PropertyDescription(
        name: name, kind: .attribute(attribute.description), originalName: originalName)
    case .relationship(let relationship):
      return PropertyDescription(
        name: name, kind: .relationship(relationship.description), originalName: originalName)
    }
  }
}

struct AttributeModel {
  let description: AttributeDescription
  /// For a `Codable` attribute, what is wrong with stored bytes that its type cannot decode
  /// (nil when they decode); checked once per value as a store is loaded.
  var decodingProblem: ((Data) -> String?)?
  /// Whether the declaration gives a default value; one without must be set before a save.
  var hasDefault = true
  var isIndexed: Bool { description.isIndexed || description.isUnique }
}

/// A relationship, linked to its destination's model and inverse once the graph of model
/// classes is resolved.
final class RelationshipModel: @unchecked Sendable {
  let isToMany: Bool
  /// How the declared type holds the objects (`T?`, `T`, `[T]`, `[T]?`).
  let shape: RelationshipShape
  /// Whether a save requires an object (a to-one declared `T`, not `T?`).
  var isRequired: Bool { shape == .requiredToOne }
  let deleteRule: DeleteRule
  let minimumCount: Int?
  let maximumCount: Int?
  let destinationType: ManagedObject.Type
  /// Set while models are resolved, then never changed.
  fileprivate(set) unowned(unsafe) var destination: EntityModel!
  fileprivate(set) var inverse: Int?

  init(blueprint: RelationshipBlueprint) {
    isToMany = blueprint.isToMany
    deleteRule = blueprint.deleteRule
    minimumCount = blueprint.minimumCount
    maximumCount = blueprint.maximumCount
    destinationType = blueprint.destination
    shape = blueprint.shape
  }

  /// The inverse relationship's model, if any: set with ``inverse``, and kept (like
  /// ``destination``) by the destination's model, which outlives every use of it.
  fileprivate(set) unowned(unsafe) var inverseModel: RelationshipModel?

  var description: RelationshipDescription {
    RelationshipDescription(
      destination: destination.name, isToMany: isToMany,
      inverse: inverse.map { destination.properties[$0].name }, deleteRule: deleteRule,
      minimumCount: minimumCount, maximumCount: maximumCount)
  }

  func link(destination: EntityModel) { self.destination = destination }
  func link(inverse: Int) {
    self.inverse = inverse
    inverseModel = destination.relationship(inverse)
  }
}
