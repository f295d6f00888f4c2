import Synchronization

/// Builds and caches the ``EntityModel`` of every model class, once per process.
///
/// Building a class's model creates one prototype instance in *describe* mode (its wrappers
/// record how they were declared), reads the wrappers' names with one `Mirror` (labels
/// `_title`, `_children`), then resolves each relationship's destination and inverse. The
/// classes a relationship reaches are built with it, so a published model is complete.
///
/// `models` guards the published models, which are never changed after; `building` lets one
/// thread at a time build. Resolving links each new relationship's inverse on both sides; a
/// build that found a class another thread published meanwhile would write that published
/// model's relationships while other threads read them. One build at a time finds every
/// published class complete, and since a published class's relationships reach only
/// published classes, it writes only the models it creates.
enum ModelRegistry {
  private static let models = Mutex<[ObjectIdentifier: EntityModel]>([:])
  private static let building = Mutex(())

  /// The model of a class that a container has already accepted (or that is valid).
  ///
  /// A class that cannot be modelled stops the program here with the reason; containers
  /// report the same reason as a thrown error first, so this is reached only by objects of a
  /// class no container accepted.
  static func model(for type: ManagedObject.Type) -> EntityModel {
    do {
      return try models(for: [type])[0]
    } catch {
      fatalError("ObjectGraph: \(error)")
    }
  }

  /// The models of these classes and of every class their relationships reach.
  ///
  /// - Throws: ``ObjectGraphError/Code/invalidModel`` naming the class and property that
  ///   cannot be persisted, or the relationship whose inverse does not match.
  static func models(for types: [ManagedObject.Type]) throws -> [EntityModel] {
    if let cached = publishedModels(for: types) { return cached }
    return try building.withLock { _ throws -> [EntityModel] in
      // Another thread may have built them while this one waited.
      if let cached = publishedModels(for: types) { return cached }
      return try build(types)
    }
  }

  /// The published models of these classes, if every one is published.
  private static func publishedModels(for types: [ManagedObject.Type]) -> [EntityModel]? {
    let cached = models.withLock { models in types.map { models[ObjectIdentifier($0)] } }
    return cached.allSatisfy({ $0 != nil }) ? cached.map { $0! } : nil
  }

  /// Builds, resolves and publishes the models of these classes and of every class their
  /// relationships reach that is not published yet; called only while `building` is held.
  private static func build(_ types: [ManagedObject.Type]) throws -> [EntityModel] {
    var built: [ObjectIdentifier: EntityModel] = [:]
    var order: [EntityModel] = []
    var pending = types
    while let type = pending.popLast() {
      let key = ObjectIdentifier(type)
      if built[key] != nil { continue }
      if let existing = models.withLock({ $0[key] }) {
        built[key] = existing
        continue
      }
      let (model, blueprints) = try describe(type)
      built[key] = model
      order.append(model)
      for case .relationship(let relationship) in blueprints {
        pending.append(relationship.destination)
      }
      model.pendingBlueprints = blueprints
    }
    try resolve(order, in: built)
    return models.withLock { models in
      for model in order { models[ObjectIdentifier(model.type)] = model }
      return types.map { models[ObjectIdentifier($0)]! }
    }
  }

  /// Describes one class: its prototype, property names and wrapper declarations.
  private static func describe(_ type: ManagedObject.Type) throws -> (
    EntityModel, [PropertyBlueprint]
  ) {
    // What `String(describing:)` prints for a class ("Box", "Inner" for `Outer.Inner`),
    // without first asking whether the metatype conforms to the printing protocols, which
    // the runtime answers the first time by scanning the conformances the process loaded:
    // describing the seed workload's `Box` at its first container takes 14.2 M instructions
    // instead of 15.2 M.
    let name = _typeName(type, qualified: false)
    let state = ModelBuildState.current
    let (prototype, blueprints) = state.run(.describe, model: nil) {
      let prototype = type.init()
      return (prototype, state.blueprints)
    }

    var labels: [String] = []
    var mirror: Mirror? = Mirror(reflecting: prototype)
    while let current = mirror {
      for child in current.children where child.value is any PropertyWrapperMarker {
        labels.append(child.label ?? "")
      }
      mirror = current.superclassMirror
    }
    guard labels.count == blueprints.count else {
      throw ObjectGraphError(
        .invalidModel,
        "\(name): found \(labels.count) @Attribute/@Relationship properties but "
          + "\(blueprints.count) were initialized; a model's stored properties must not "
          + "create model objects in their initial values", entity: name)
    }

    let model = EntityModel(
      type: type, name: name, prototype: prototype, propertyCount: blueprints.count)
    var properties: [PropertyModel] = []
    for (index, (label, blueprint)) in zip(labels, blueprints).enumerated() {
      let propertyName = label.hasPrefix("_") ? String(label.dropFirst()) : label
      switch blueprint {
      case .attribute(let attribute):
        guard let codec = attribute.codec else {
          throw ObjectGraphError(
            .invalidModel,
            "\(name).\(propertyName) has type \(attribute.valueType), which cannot be "
              + "persisted: use a Bool, integer, Double, Float, String, Date, Data, UUID, URL, "
              + "an optional of one, or a Codable type", entity: name, property: propertyName)
        }
        guard !attribute.lacksPlaceholder else {
          throw ObjectGraphError(
            .invalidModel,
            "\(name).\(propertyName) of type \(attribute.valueType) needs a default value "
              + "(= ...): the type has no value to describe the class with (it is not "
              + "CaseIterable and decodes from no empty JSON)", entity: name,
            property: propertyName)
        }
        let options = attribute.options
        properties.append(
          PropertyModel(
            name: propertyName, index: index,
            kind: .attribute(
              AttributeModel(
                description: AttributeDescription(
                  type: codec.type, isOptional: codec.isOptional,
                  isUnique: options.contains(.unique), isIndexed: options.contains(.indexed),
                  codableType: attribute.codableType),
                decodingProblem: attribute.decodingProblem, hasDefault: attribute.hasDefault)),
            originalName: attribute.originalName))
      case .relationship(let relationship):
        guard relationship.shape != .unsupported else {
          throw ObjectGraphError(
            .invalidModel,
            "\(name).\(propertyName): a relationship is declared T?, T, [T] or [T]? for a "
              + "model class T", entity: name, property: propertyName)
        }
        properties.append(
          PropertyModel(
            name: propertyName, index: index,
            kind: .relationship(RelationshipModel(blueprint: relationship)),
            originalName: relationship.originalName))
      }
    }
    model.setProperties(properties)
    return (model, blueprints)
  }

  /// Links every relationship to its destination model and inverse.
  private static func resolve(
    _ newModels: [EntityModel], in all: [ObjectIdentifier: EntityModel]
  ) throws {
    for model in newModels {
      for property in model.properties {
        guard case .relationship(let relationship) = property.kind else { continue }
        relationship.link(destination: all[ObjectIdentifier(relationship.destinationType)]!)
        // A prototype's required to-one holds the destination's prototype, so that reading
        // it to resolve a key path (an inverse, a predicate) finds an object of its type.
        if relationship.isRequired, let prototype = model.prototype {
          prototype.slots[property.index] = .toOne(relationship.destination.prototype)
        }
      }
    }
    for model in newModels {
      let blueprints = model.pendingBlueprints
      model.pendingBlueprints = []
      for property in model.properties {
        guard case .relationship(let relationship) = property.kind,
          case .relationship(let blueprint) = blueprints[property.index],
          let root = blueprint.inverseRoot, let probe = blueprint.inverseProbe
        else { continue }
        let destination = relationship.destination!
        let place = "\(model.name).\(property.name)"
        guard root == relationship.destinationType else {
          throw ObjectGraphError(
            .invalidModel,
            "\(place) relates to \(destination.name) but its inverse is a property of \(root)",
            entity: model.name, property: property.name)
        }
        guard let inverseIndex = destination.propertyIndex(probing: probe),
          let inverse = destination.relationship(inverseIndex)
        else {
          throw ObjectGraphError(
            .invalidModel,
            "\(place): its inverse is not a @Relationship property of \(destination.name)",
            entity: model.name, property: property.name)
        }
        let inverseName = destination.properties[inverseIndex].name
        guard inverse.destinationType == model.type else {
          throw ObjectGraphError(
            .invalidModel,
            "\(place): its inverse \(destination.name).\(inverseName) relates to "
              + "\(inverse.destinationType), not to \(model.name)",
            entity: model.name, property: property.name)
        }
        if let existing = relationship.inverse, existing != inverseIndex {
          throw mismatch(model, property.name, destination, inverseName)
        }
        if let existing = inverse.inverse, existing != property.index {
          throw mismatch(model, property.name, destination, inverseName)
        }
        if destination === model, inverseIndex == property.index, relationship.isToMany {
          throw ObjectGraphError(
            .invalidModel, "\(place) cannot be a to-many relationship that is its own inverse",
            entity: model.name, property: property.name)
        }
        relationship.link(inverse: inverseIndex)
        inverse.link(inverse: property.index)
      }
    }
    try inferInverses(among: newModels)
  }

  /// Links, as SwiftData does, the relationships that declare no inverse where exactly one
  /// relationship in each direction links two classes (`Trip.stays: [Stay]` and `Stay.trip:
  /// Trip?`). Relationships of a class to itself are never inferred (a tree's `parent` and
  /// `children` say which is which by declaring `inverse:`), and one-way relationships stay
  /// one-way (`Item.tags: [Tag]` when `Tag` has none back).
  ///
  /// Only the new models are paired: a published model's relationships reach only published
  /// classes, so it has none to a new one.
  ///
  /// - Throws: ``ObjectGraphError/Code/invalidModel`` naming the candidates when two classes
  ///   are linked in both directions by more than one relationship without an inverse.
  private static func inferInverses(among newModels: [EntityModel]) throws {
    /// Relationships without an inverse, by (source, destination) model.
    var unlinked: [PairKey: [(model: EntityModel, property: PropertyModel)]] = [:]
    for model in newModels {
      for property in model.properties {
        guard case .relationship(let relationship) = property.kind, relationship.inverse == nil,
          relationship.destination !== model
        else { continue }
        unlinked[PairKey(model, relationship.destination), default: []].append((model, property))
      }
    }
    // In declaration order, so that the error for an ambiguous pair is always the same.
    for model in newModels {
      for property in model.properties {
        guard case .relationship(let relationship) = property.kind, relationship.inverse == nil,
          let forward = unlinked[PairKey(model, relationship.destination)],
          let backward = unlinked[PairKey(relationship.destination, model)]
        else { continue }
        guard forward.count == 1, backward.count == 1 else {
          let names = (forward + backward).map { "\($0.model.name).\($0.property.name)" }
          throw ObjectGraphError(
            .invalidModel,
            "\(model.name) and \(relationship.destination.name) are related by "
              + "\(names.joined(separator: ", ")), none of which declares an "
              + "inverse, so which are inverses cannot be inferred: declare inverse: on one "
              + "relationship of each pair", entity: model.name, property: property.name)
        }
        let other = backward[0]
        guard case .relationship(let inverse) = other.property.kind else { continue }
        relationship.link(inverse: other.property.index)
        inverse.link(inverse: property.index)
      }
    }
  }

  /// An ordered pair of models, by identity.
  private struct PairKey: Hashable {
    let source: ObjectIdentifier
    let destination: ObjectIdentifier

    init(_ source: EntityModel, _ destination: EntityModel) {
      self.source = ObjectIdentifier(source)
      self.destination = ObjectIdentifier(destination)
    }
  }

  private static func mismatch(
    _ model: EntityModel, _ property: String, _ destination: EntityModel, _ inverse: String
  ) -> ObjectGraphError {
    ObjectGraphError(
      .invalidModel,
      "\(model.name).\(property) declares \(destination.name).\(inverse) as its inverse, "
        + "but that relationship already has another inverse", entity: model.name,
      property: property)
  }
}

/// Adopted by the property wrappers so a `Mirror` can tell them from other stored properties.
protocol PropertyWrapperMarker {}
extension Attribute: PropertyWrapperMarker {}
extension Relationship: PropertyWrapperMarker {}
