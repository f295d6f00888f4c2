/// Checks the invariants of a replayed graph against its schema, for
/// ``BinaryStoreReader/verify(fileAt:)``.
///
/// Invariants, checked in this order, stopping at the first violation: every object id is
/// below the next object number; every value has the case its property's schema calls for
/// (and an integer fits its declared width); no two objects hold one value of a unique
/// attribute; every reference names an existing object of the destination entity; no
/// to-many list holds an object twice; every reference is matched by the inverse
/// relationship, if the schema declares one.
///
/// Cost: O(*v*) in the number of values and references. Inverses with a to-one side are
/// checked in O(1) a reference (a one-to-many pair by counting: every list entry points back,
/// and the lists hold as many entries as there are to-one references); only many-to-many
/// pairs build a set of their edges.
struct GraphInvariantChecker {
  /// A broken invariant and the objects it concerns (to locate the record that wrote them).
  struct Violation: Error {
    var message: String
    var objects: [ObjectID]
    /// The byte offset, when the violation is in the header's schema rather than in records.
    var offset: Int?
  }

  private struct Edge: Hashable {
    var from: ObjectID
    var to: ObjectID
  }

  private struct PropertyKey: Hashable {
    var entity: Int
    var property: Int
  }

  /// A relationship with its destination and inverse resolved to indexes.
  private struct Resolved {
    var isToMany: Bool
    var destination: Int
    /// The inverse's property index in the destination entity and whether it is to-many.
    var inverse: (property: Int, isToMany: Bool)?
  }

  private let schema: Schema
  private let objects: [ObjectSnapshot]
  private let graph: LiveGraph
  private let nextObjectNumber: UInt64
  /// Per entity, per property: the resolved relationship, or `nil` for an attribute.
  private var relationships: [[Resolved?]] = []
  /// References counted per relationship, to match one-to-many pairs.
  private var referenceCounts: [PropertyKey: Int] = [:]
  /// The edges of many-to-many relationships, built on first use.
  private var edgeSets: [PropertyKey: Set<Edge>] = [:]

  /// Creates a checker of `objects` (sorted by id: violations are then found in a stable
  /// order), which `graph` holds, against `schema`.
  init(schema: Schema, objects: [ObjectSnapshot], graph: LiveGraph, nextObjectNumber: UInt64) {
    self.schema = schema
    self.objects = objects
    self.graph = graph
    self.nextObjectNumber = nextObjectNumber
  }

  /// Runs every check, counting what it checked in `report`.
  ///
  /// - Throws: The first ``Violation``.
  mutating func check(counting report: inout BinaryStoreVerification) throws(Violation) {
    try resolveSchema()
    for object in objects {
      report.objectCount += 1
      guard object.id.rawValue < nextObjectNumber else {
        throw Violation(
          message: "object \(object.id) is not below the next object number "
            + "\(nextObjectNumber), so a later insert could reuse its id",
          objects: [object.id])
      }
      try checkValues(of: object, counting: &report)
    }
    try checkUnique(counting: &report)
    for object in objects {
      try checkInverses(of: object, counting: &report)
    }
    try checkOneToManyCounts()
  }

  // MARK: - Schema

  private mutating func resolveSchema() throws(Violation) {
    relationships = []
    for entity in schema.entities {
      var resolved: [Resolved?] = []
      for property in entity.properties {
        guard let relationship = property.relationship else {
          resolved.append(nil)
          continue
        }
        let place = "\(entity.name).\(property.name)"
        guard let destination = schema.entityIndex(named: relationship.destination) else {
          throw schemaViolation(
            "\(place) relates to \(relationship.destination), which is not an entity of the "
              + "schema")
        }
        var item = Resolved(
          isToMany: relationship.isToMany, destination: destination, inverse: nil)
        if let inverseName = relationship.inverse {
          let target = schema.entities[destination]
          guard let index = target.propertyIndex(named: inverseName),
            let inverse = target.properties[index].relationship,
            inverse.destination == entity.name
          else {
            throw schemaViolation(
              "\(place) names \(target.name).\(inverseName) as its inverse, which is not a "
                + "relationship to \(entity.name)")
          }
          item.inverse = (index, inverse.isToMany)
        }
        resolved.append(item)
      }
      relationships.append(resolved)
    }
  }

  private func schemaViolation(_ message: String) -> Violation {
    Violation(
      message: "the schema in the header: \(message)", objects: [],
      offset: BinaryFormat.headerPrefixSize)
  }

  // MARK: - Values and references

  private func checkValues(
    of object: ObjectSnapshot, counting report: inout BinaryStoreVerification
  ) throws(Violation) {
    let entity = schema.entities[object.entity]
    for (index, property) in entity.properties.enumerated() {
      let value = object.values[index]
      let place = "\(entity.name) \(object.id).\(property.name)"
      switch property.kind {
      case .attribute(let attribute):
        report.attributeValueCount += 1
        guard Self.value(value, fits: attribute) else {
          throw Violation(
            message: "\(place) holds \(Self.describe(value)), which is not a value of type "
              + "\(attribute.type.rawValue)\(attribute.isOptional ? "?" : "")",
            objects: [object.id])
        }
      case .relationship(let relationship):
        let resolved = relationships[object.entity][index]!
        switch (relationship.isToMany, value) {
        case (false, .null):
          break
        case (false, .reference(let target)):
          try checkReference(from: place, to: target, resolved, object, counting: &report)
        case (true, .references(let targets)):
          report.orderedListCount += 1
          if targets.count > 1 {
            var seen = Set<ObjectID>(minimumCapacity: targets.count)
            for target in targets where !seen.insert(target).inserted {
              throw Violation(
                message: "\(place) lists \(target) twice", objects: [object.id, target])
            }
          }
          for target in targets {
            try checkReference(from: place, to: target, resolved, object, counting: &report)
          }
        default:
          throw Violation(
            message: "\(place) holds \(Self.describe(value)), which is not a "
              + (relationship.isToMany ? "list of references" : "reference or nil"),
            objects: [object.id])
        }
      }
    }
  }

  private func checkReference(
    from place: String, to target: ObjectID, _ resolved: Resolved, _ object: ObjectSnapshot,
    counting report: inout BinaryStoreVerification
  ) throws(Violation) {
    report.referenceCount += 1
    guard let destinationEntity = graph.entity(of: target) else {
      throw Violation(
        message: "\(place) refers to \(target), which does not exist (a dangling reference)",
        objects: [object.id, target])
    }
    guard destinationEntity == resolved.destination else {
      throw Violation(
        message: "\(place) refers to \(target), which is a "
          + "\(schema.entities[destinationEntity].name), not a "
          + schema.entities[resolved.destination].name,
        objects: [object.id, target])
    }
  }

  private func checkUnique(counting report: inout BinaryStoreVerification) throws(Violation) {
    for (entityIndex, entity) in schema.entities.enumerated() {
      for (index, property) in entity.properties.enumerated()
      where property.attribute?.isUnique == true {
        var owners: [PersistentValue: ObjectID] = [:]
        for object in objects where object.entity == entityIndex {
          let value = object.values[index]
          if value == .null { continue }
          report.uniqueValueCount += 1
          if let owner = owners.updateValue(object.id, forKey: value) {
            throw Violation(
              message: "\(entity.name).\(property.name) is unique, but \(owner) and "
                + "\(object.id) both hold \(Self.describe(value))",
              objects: [owner, object.id])
          }
        }
      }
    }
  }

  // MARK: - Inverses

  private mutating func checkInverses(
    of object: ObjectSnapshot, counting report: inout BinaryStoreVerification
  ) throws(Violation) {
    let entity = schema.entities[object.entity]
    for (index, resolved) in relationships[object.entity].enumerated() {
      guard let resolved, let inverse = resolved.inverse else { continue }
      let targets: [ObjectID]
      switch object.values[index] {
      case .reference(let target): targets = [target]
      case .references(let list): targets = list
      default: targets = []
      }
      let key = PropertyKey(entity: object.entity, property: index)
      referenceCounts[key, default: 0] += targets.count
      let inverseName = schema.entities[resolved.destination].properties[inverse.property].name
      for target in targets {
        report.inverseCount += 1
        guard let other = graph.value(of: target, inverse.property) else {
          throw Violation(
            message: "\(entity.name) \(object.id).\(entity.properties[index].name) refers to "
              + "\(target), which has no \(inverseName)", objects: [object.id, target])
        }
        if !inverse.isToMany {
          guard other == .reference(object.id) else {
            throw Violation(
              message: "\(entity.name) \(object.id).\(entity.properties[index].name) "
                + "\(resolved.isToMany ? "lists" : "is") \(target), but "
                + "\(target).\(inverseName) is \(Self.describe(other)), not \(object.id)",
              objects: [object.id, target])
          }
        } else if resolved.isToMany {
          // Many-to-many: look the edge up among the inverse's edges.
          let inverseKey = PropertyKey(entity: resolved.destination, property: inverse.property)
          if edgeSets[inverseKey] == nil { edgeSets[inverseKey] = edges(of: inverseKey) }
          guard edgeSets[inverseKey]!.contains(Edge(from: target, to: object.id)) else {
            throw Violation(
              message: "\(entity.name) \(object.id).\(entity.properties[index].name) lists "
                + "\(target), but \(target).\(inverseName) does not list \(object.id)",
              objects: [object.id, target])
          }
        }
        // A to-one whose inverse is to-many is settled by `checkOneToManyCounts`.
      }
    }
  }

  /// For each to-one relationship whose inverse is to-many: every list entry was checked to
  /// point back, so the pair matches exactly when the lists hold as many entries as there
  /// are to-one references. Otherwise, find a to-one reference its target's list lacks.
  private func checkOneToManyCounts() throws(Violation) {
    for (entityIndex, entity) in schema.entities.enumerated() {
      for (index, resolved) in relationships[entityIndex].enumerated() {
        guard let resolved, !resolved.isToMany, let inverse = resolved.inverse,
          inverse.isToMany
        else { continue }
        let key = PropertyKey(entity: entityIndex, property: index)
        let inverseKey = PropertyKey(entity: resolved.destination, property: inverse.property)
        guard referenceCounts[key, default: 0] != referenceCounts[inverseKey, default: 0]
        else { continue }
        let listed = edges(of: inverseKey)
        let inverseName = schema.entities[resolved.destination].properties[inverse.property].name
        for object in objects where object.entity == entityIndex {
          guard case .reference(let target) = object.values[index],
            !listed.contains(Edge(from: target, to: object.id))
          else { continue }
          throw Violation(
            message: "\(entity.name) \(object.id).\(entity.properties[index].name) is "
              + "\(target), but \(target).\(inverseName) does not list \(object.id)",
            objects: [object.id, target])
        }
      }
    }
  }

  /// Every (owner, listed object) pair of one to-many relationship.
  private func edges(of key: PropertyKey) -> Set<Edge> {
    var edges = Set<Edge>()
    for object in objects where object.entity == key.entity {
      if case .references(let targets) = object.values[key.property] {
        for target in targets { edges.insert(Edge(from: object.id, to: target)) }
      }
    }
    return edges
  }

  // MARK: - Values

  /// Whether `value` is a value of the attribute's declared type.
  static func value(_ value: PersistentValue, fits attribute: AttributeDescription) -> Bool {
    switch (attribute.type, value) {
    case (_, .null): attribute.isOptional
    case (.bool, .bool): true
    case (.int, .int), (.int64, .int), (.uint, .int), (.uint64, .int): true
    case (.int8, .int(let number)): Int8(exactly: number) != nil
    case (.int16, .int(let number)): Int16(exactly: number) != nil
    case (.int32, .int(let number)): Int32(exactly: number) != nil
    case (.uint8, .int(let number)): UInt8(exactly: UInt64(bitPattern: number)) != nil
    case (.uint16, .int(let number)): UInt16(exactly: UInt64(bitPattern: number)) != nil
    case (.uint32, .int(let number)): UInt32(exactly: UInt64(bitPattern: number)) != nil
    case (.double, .double), (.float, .double): true
    case (.string, .string), (.date, .date), (.data, .data), (.codable, .data): true
    case (.uuid, .uuid), (.url, .url): true
    default: false
    }
  }

  /// A short description of a value for a message.
  static func describe(_ value: PersistentValue) -> String {
    let text = value.description
    return text.count > 60 ? String(text.prefix(57)) + "..." : text
  }
}
