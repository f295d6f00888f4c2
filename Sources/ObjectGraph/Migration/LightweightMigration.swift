import Foundation

/// How objects stored in one schema become objects of another when the framework can tell
/// by itself: a lightweight migration, inferred from the two schemas (and the new models'
/// default values), then applied to a store's contents in one pass.
///
/// Entities match by name; a property by its name, or else by the name the new model says
/// it had (`originalName:`). What is inferred:
///
/// - an attribute or relationship added: optional or to-many ones start empty, an attribute
///   with a default value starts with it (the model's default, made once);
/// - one removed, or a whole entity: its values, or objects, are dropped;
/// - a rename through `originalName:`;
/// - an attribute made optional; made required: a stored `nil` becomes the model's default
///   (with none, a stored `nil` is an error naming the object);
/// - a number widened: `Int8` → `Int16` → `Int32` → `Int64`/`Int`, the same for unsigned
///   types, an unsigned type to a wider signed one, `Float` → `Double` (all stored as
///   64-bit values already, so the values stay as they are);
/// - `.unique` added (the stored values are checked: repeats are an error naming the
///   objects) or removed; an index added or removed; a delete rule, an inverse dropped,
///   count bounds (checked against the stored lists).
///
/// Anything else (another type, a to-one becoming a to-many, another destination, an
/// inverse between relationships that were not each other's, a new relationship whose
/// inverse holds data, a required value with no default) is refused with
/// ``ObjectGraphError/Code/migrationFailed``, naming each change, its entity and property,
/// and why: such changes need a custom stage (``MigrationStage/custom(fromVersion:toVersion:willMigrate:didMigrate:)``).
struct LightweightMigration {
  /// Where a new property's value comes from.
  enum Source: Equatable {
    /// The stored property with this index.
    case stored(Int)
    /// This value, for every object (an added property).
    case value(PersistentValue)
  }

  /// What becomes of the objects of one stored entity.
  struct EntityMapping {
    /// The entity's index in the new schema.
    var target: Int
    /// For each property of the new entity, where its value comes from.
    var sources: [Source]
    /// New properties that must hold a value and have no default: a stored `nil` is an
    /// error.
    var required: [Int] = []
    /// New properties that must hold a value, with the default a stored `nil` becomes.
    var fallbacks: [(property: Int, value: PersistentValue)] = []
    /// New properties that are unique and were not, whose stored values are checked.
    var newlyUnique: [Int] = []
    /// New to-many properties with count bounds, checked against the stored lists.
    var bounded: [(property: Int, minimum: Int?, maximum: Int?)] = []

    /// Whether each stored property feeds at most one new property, so its value can be
    /// moved rather than copied.
    var movesValues = true
    /// The stored properties no new property takes, when values are moved.
    var dropped: [Int] = []

    /// Whether stored values are checked.
    var hasChecks: Bool { !required.isEmpty || !newlyUnique.isEmpty || !bounded.isEmpty }
  }

  let stored: Schema
  let target: Schema
  /// By stored entity: what becomes of its objects, or nil when the entity is removed.
  private(set) var entities: [EntityMapping?]

  /// Whether every stored value is kept as it is, and new properties start with one value
  /// for every object: no entity removed, no stored `nil` replaced by a default, no stored
  /// property feeding two (see ``StoreMigration/keepsStoredValues``).
  var keepsStoredValues: Bool {
    entities.allSatisfy { mapping in
      guard let mapping else { return false }
      return mapping.fallbacks.isEmpty && mapping.movesValues
    }
  }

  /// Infers the migration from `stored` to `target`.
  ///
  /// - Parameters:
  ///   - models: The new schema's models, by entity (for default values and required
  ///     to-ones); nil for a bare schema, whose added properties must be optional or
  ///     to-many.
  ///   - leavingToStage: Whether a custom stage's `migrate` code comes after it, with the
  ///     stored values at hand: then a property the migration cannot fill starts empty
  ///     (`nil`, an empty list, its default, or for a non-optional attribute with none its
  ///     type's zero: `0`, `""`, `false`, the reference date, no bytes, the zero UUID,
  ///     `about:blank`) for the stage to fill, and the checks of stored values
  ///     (``validating(_:models:skippingUniqueOf:)``) run after the stage instead.
  /// - Throws: ``ObjectGraphError/Code/migrationFailed`` listing every change that is not
  ///   inferred, naming the first one's entity and property.
  init(from stored: Schema, to target: Schema, models: [EntityModel]?, leavingToStage: Bool = false)
    throws
  {
    self.stored = stored
    self.target = target
    var inference = Inference(
      stored: stored, target: target, models: models, leavingToStage: leavingToStage)
    entities = stored.entities.map { storedEntity in
      target.entityIndex(named: storedEntity.name).map { inference.mapping(of: $0) }
    }
    if let first = inference.problems.first {
      throw ObjectGraphError(
        .migrationFailed,
        "the stored schema cannot be migrated to the model without a custom stage: "
          + inference.problems.map(\.message).joined(separator: "; "),
        entity: first.entity, property: first.property)
    }
  }

  /// A migration from `schema` to itself that only checks the stored values against it:
  /// every unique attribute's values differ, every non-optional attribute and required
  /// to-one holds a value, every bounded list is within its bounds (what a stage's code may
  /// have left otherwise: a new object never given a value its model requires).
  ///
  /// - Parameter skipped: By entity name, unique attributes whose values are known to
  ///   differ (``keptUniqueAttributes`` that no stage changed), left unchecked.
  static func validating(
    _ schema: Schema, models: [EntityModel], skippingUniqueOf skipped: [String: Set<Int>] = [:]
  ) -> LightweightMigration {
    var migration = LightweightMigration(identityOf: schema)
    for (index, entity) in schema.entities.enumerated() {
      var mapping = migration.entities[index]!
      let known = skipped[entity.name] ?? []
      for (number, property) in entity.properties.enumerated() {
        switch property.kind {
        case .attribute(let attribute):
          if attribute.isUnique && !known.contains(number) { mapping.newlyUnique.append(number) }
          if !attribute.isOptional { mapping.required.append(number) }
        case .relationship(let relationship):
          if models[index].relationship(number)?.isRequired == true {
            mapping.required.append(number)
          }
          if relationship.isToMany,
            relationship.minimumCount != nil || relationship.maximumCount != nil
          {
            mapping.bounded.append((number, relationship.minimumCount, relationship.maximumCount))
          }
        }
      }
      migration.entities[index] = mapping
    }
    return migration
  }

  /// By new entity name, its unique attributes that take the values of a stored attribute
  /// that was unique too: the store kept those values apart, so they differ still unless
  /// something changed them after the migration.
  var keptUniqueAttributes: [String: Set<Int>] {
    var kept: [String: Set<Int>] = [:]
    for (storedIndex, mapping) in entities.enumerated() {
      guard let mapping else { continue }
      let storedEntity = stored.entities[storedIndex]
      let newEntity = target.entities[mapping.target]
      for (property, source) in mapping.sources.enumerated() {
        guard case .stored(let storedProperty) = source,
          case .attribute(let new) = newEntity.properties[property].kind, new.isUnique,
          case .attribute(let old) = storedEntity.properties[storedProperty].kind, old.isUnique
        else { continue }
        kept[newEntity.name, default: []].insert(property)
      }
    }
    return kept
  }

  /// Checks `contents` as ``apply(to:)`` would, for a migration made by
  /// ``validating(_:models:skippingUniqueOf:)``, and returns them as they are: nothing is
  /// copied or moved when no string is left as bytes (a stage's result never has one).
  ///
  /// - Throws: ``ObjectGraphError/Code/migrationFailed``, as ``apply(to:)``.
  /// - Complexity: O(*n*) in the values of the entities with checks.
  func validate(_ contents: consuming StoreContents) throws -> StoreContents {
    precondition(stored == target, "only a migration of a schema to itself validates in place")
    guard !contents.list.hasDeferredStrings else { return try apply(to: contents) }
    var checks = ValueChecks(entities, target: target, expectedCount: contents.list.count)
    contents.list.forEach { id, entity, values in
      if checks.checks(entity) { checks.check(id, entity: entity) { values[$0] } }
    }
    try checks.throwIfFailed()
    return contents
  }

  /// The migration of a schema to itself: every value kept where it is.
  private init(identityOf schema: Schema) {
    stored = schema
    target = schema
    entities = schema.entities.indices.map { index in
      EntityMapping(
        target: index, sources: schema.entities[index].properties.indices.map { .stored($0) })
    }
  }

  /// The contents with every object migrated, in the same order, under the same ids.
  ///
  /// - Throws: ``ObjectGraphError/Code/migrationFailed`` naming the objects when stored
  ///   values do not fit the new schema (repeats of a value now unique, a `nil` where a
  ///   value is now required with no default, a list outside new count bounds).
  /// - Complexity: O(*n*) in the stored values.
  func apply(to contents: consuming StoreContents) throws -> StoreContents {
    let objectCount = contents.list.count
    let nextObjectNumber = contents.nextObjectNumber
    let valueCapacity = objectCount * (target.entities.map(\.properties.count).max() ?? 0)
    let storedWidth = stored.entities.map(\.properties.count).max() ?? 0
    let flat = FlatMappings(entities)
    var checks = ValueChecks(entities, target: target, expectedCount: objectCount)
    var relocation: DeferredStrings.Relocation?
    var migrated = flat.withBuffers { layouts, sources, dropped in
      PackedObjects.filling(objectCapacity: objectCount, valueCapacity: valueCapacity) {
        (packed: inout PackedObjects.Filler) in
        contents.list.consumeObjects(valuesPerObject: storedWidth) { strings in
          relocation = DeferredStrings.Relocation(of: strings)
        } each: { id, entity, values, deferred, owned in
          let layout = layouts[entity]
          guard layout.target >= 0 else {
            if owned { values.baseAddress?.deinitialize(count: values.count) }
            return
          }
          // The rare entities with checks, defaults for stored nils, or a value feeding two
          // properties read their whole mapping.
          let mapping = layout.isPlain ? nil : entities[entity]
          if let mapping, checks.checks(entity) {
            checks.check(id, entity: entity) { property in
              switch mapping.sources[property] {
              case .stored(let stored):
                deferred[stored].map { .string(relocation!.string($0).value) } ?? values[stored]
              case .value(let constant): constant
              }
            }
          }
          let movesValues = owned && mapping?.movesValues ?? true
          let start = packed.valueCount
          packed.beginObject(id: id, entity: Int(layout.target))
          for property in 0..<Int(layout.sourceCount) {
            let source = Int(sources[Int(layout.sourceStart) + property])
            var value: PersistentValue
            var isDeferred = false
            if source >= 0 {
              value = movesValues ? (values.baseAddress! + source).move() : values[source]
              if let entry = deferred[source] {
                relocation!.place(entry, at: start + property)
                isDeferred = true
              }
            } else {
              value = flat.constants[-1 - source]
            }
            if let mapping, !mapping.fallbacks.isEmpty, !isDeferred, value == .null,
              let fallback = mapping.fallbacks.first(where: { $0.property == property })
            {
              value = fallback.value
            }
            packed.appendValue(value)
          }
          if movesValues {
            for index in 0..<Int(layout.droppedCount) {
              (values.baseAddress! + Int(dropped[Int(layout.droppedStart) + index]))
                .deinitialize(count: 1)
            }
          } else if owned {
            values.baseAddress?.deinitialize(count: values.count)
          }
        }
      }
    }
    try checks.throwIfFailed()
    if let relocation { migrated.adoptDeferredStrings(relocation.finish()) }
    return StoreContents(list: ObjectList(packed: migrated), nextObjectNumber: nextObjectNumber)
  }

  /// The entity mappings as flat arrays of plain numbers, which the loop over every object
  /// reads without copying a mapping (and retaining its arrays) per object.
  private struct FlatMappings {
    /// Where one stored entity's objects go, and where its numbers are in the arrays.
    struct Layout {
      /// The entity's index in the new schema, or -1 when its objects are dropped.
      var target: Int32 = -1
      var sourceStart: Int32 = 0
      var sourceCount: Int32 = 0
      var droppedStart: Int32 = 0
      var droppedCount: Int32 = 0
      /// Whether values move with no check and no default for a stored nil.
      var isPlain = true
    }

    var layouts: [Layout] = []
    /// For each new property of each entity: the stored property's index, or for a
    /// constant, -1 - its index in ``constants``.
    var sources: [Int32] = []
    var dropped: [Int32] = []
    var constants: [PersistentValue] = []

    init(_ mappings: [EntityMapping?]) {
      for mapping in mappings {
        guard let mapping else {
          layouts.append(Layout())
          continue
        }
        var layout = Layout(
          target: Int32(mapping.target), sourceStart: Int32(sources.count),
          sourceCount: Int32(mapping.sources.count), droppedStart: Int32(dropped.count),
          droppedCount: Int32(mapping.dropped.count),
          isPlain: mapping.movesValues && mapping.fallbacks.isEmpty && !mapping.hasChecks)
        for source in mapping.sources {
          switch source {
          case .stored(let index): sources.append(Int32(index))
          case .value(let constant):
            sources.append(-1 - Int32(constants.count))
            constants.append(constant)
          }
        }
        dropped += mapping.dropped.map(Int32.init)
        if !mapping.movesValues { layout.droppedCount = 0 }
        layouts.append(layout)
      }
    }

    func withBuffers<Result>(
      _ body: (UnsafeBufferPointer<Layout>, UnsafeBufferPointer<Int32>, UnsafeBufferPointer<Int32>)
        throws -> Result
    ) rethrows -> Result {
      try layouts.withUnsafeBufferPointer { layouts in
        try sources.withUnsafeBufferPointer { sources in
          try dropped.withUnsafeBufferPointer { try body(layouts, sources, $0) }
        }
      }
    }
  }
}

extension LightweightMigration {
  /// One change the migration cannot infer.
  struct Problem {
    var entity: String
    var property: String?
    var message: String
  }

  /// The inference of each entity's mapping, collecting what cannot be inferred.
  private struct Inference {
    let stored: Schema
    let target: Schema
    let models: [EntityModel]?
    let leavingToStage: Bool
    var problems: [Problem] = []

    init(stored: Schema, target: Schema, models: [EntityModel]?, leavingToStage: Bool) {
      self.stored = stored
      self.target = target
      self.models = models
      self.leavingToStage = leavingToStage
    }

    /// The stored index of the property of stored entity `storedEntity` that new property
    /// `property` of `entity` continues: the one of its name, or else of its original name.
    func storedCounterpart(of property: PropertyDescription, in entity: EntityDescription)
      -> (entity: EntityDescription, index: Int)?
    {
      guard let storedEntity = stored.entities.first(where: { $0.name == entity.name }) else {
        return nil
      }
      if let index = storedEntity.propertyIndex(named: property.name) {
        // A property of this name that another one was renamed from and this one is not
        // (`title` renamed to `heading` and a new `title` added) is new.
        let renamedAway = entity.properties.contains {
          $0.originalName == property.name && $0.name != property.name
            && entity.propertyIndex(named: $0.name) != nil
        }
        if !renamedAway { return (storedEntity, index) }
      }
      if let original = property.originalName, original != property.name,
        let index = storedEntity.propertyIndex(named: original)
      {
        return (storedEntity, index)
      }
      return nil
    }

    mutating func mapping(of targetIndex: Int) -> EntityMapping {
      let entity = target.entities[targetIndex]
      var mapping = EntityMapping(target: targetIndex, sources: [])
      for (index, property) in entity.properties.enumerated() {
        let counterpart = storedCounterpart(of: property, in: entity)
        let problemCount = problems.count
        var source = source(
          of: property, index: index, in: entity, entityIndex: targetIndex,
          counterpart: counterpart.map { $0.entity.properties[$0.index] },
          counterpartIndex: counterpart?.index, mapping: &mapping)
        if leavingToStage, problems.count > problemCount,
          let empty = Self.emptyValue(
            of: property, default: models?[targetIndex].defaultValue(of: index))
        {
          problems.removeSubrange(problemCount...)
          source = .value(empty)
        }
        mapping.sources.append(source)
      }
      if leavingToStage {
        mapping.required = []
        mapping.newlyUnique = []
        mapping.bounded = []
      }
      let taken = mapping.sources.compactMap { source -> Int? in
        if case .stored(let stored) = source { return stored }
        return nil
      }
      mapping.movesValues = Set(taken).count == taken.count
      if let storedEntity = stored.entities.first(where: { $0.name == entity.name }) {
        mapping.dropped = storedEntity.properties.indices.filter { !taken.contains($0) }
      }
      return mapping
    }

    private mutating func fail(_ entity: String, _ property: String?, _ message: String) {
      problems.append(
        Problem(
          entity: entity, property: property,
          message: "entity \(entity)" + (property.map { ": \($0)" } ?? "") + " " + message))
    }

    private mutating func source(
      of property: PropertyDescription, index: Int, in entity: EntityDescription,
      entityIndex: Int, counterpart: PropertyDescription?, counterpartIndex: Int?,
      mapping: inout EntityMapping
    ) -> Source {
      let model = models?[entityIndex]
      switch (property.kind, counterpart?.kind) {
      case (.attribute(let attribute), nil):
        if attribute.isOptional { return .value(.null) }
        if let value = model?.defaultValue(of: index) { return .value(value) }
        fail(
          entity.name, property.name,
          "is a new attribute that is not optional and has no default value: declare one, "
            + "or fill it in a custom stage")
        return .value(.null)
      case (.attribute(let attribute), .attribute(let was)):
        if !Self.storesAlike(was.type, attribute.type) {
          fail(
            entity.name, property.name,
            "was \(was.type), is \(attribute.type): only a number widened (Int32 to Int64, "
              + "Float to Double) is inferred; convert the values in a custom stage")
        } else if let old = was.codableType, let new = attribute.codableType, old != new {
          fail(
            entity.name, property.name,
            "holds another Codable type (stored \(old), model \(new)): convert the values in a "
              + "custom stage")
        }
        if was.isOptional && !attribute.isOptional {
          if let fallback = model?.defaultValue(of: index) {
            mapping.fallbacks.append((index, fallback))
          } else {
            mapping.required.append(index)
          }
        }
        if attribute.isUnique && !was.isUnique { mapping.newlyUnique.append(index) }
        return .stored(counterpartIndex!)
      case (.relationship(let relationship), nil):
        if let inverse = relationship.inverse,
          storedInverseName(of: relationship, named: inverse) != nil
        {
          fail(
            entity.name, property.name,
            "is a new relationship whose inverse \(relationship.destination).\(inverse) is "
              + "stored: fill it from the inverse in a custom stage")
        }
        if model?.relationship(index)?.isRequired == true {
          fail(
            entity.name, property.name,
            "is a new required to-one relationship: make it optional, or fill it in a custom "
              + "stage")
        }
        return .value(relationship.isToMany ? .references([]) : .null)
      case (.relationship(let relationship), .relationship(let was)):
        if relationship.destination != was.destination {
          fail(
            entity.name, property.name,
            "related to \(was.destination), relates to \(relationship.destination): move the "
              + "objects in a custom stage")
        } else if relationship.isToMany != was.isToMany {
          fail(
            entity.name, property.name,
            relationship.isToMany
              ? "was a to-one relationship, is a to-many: fill the lists in a custom stage"
              : "was a to-many relationship, is a to-one: choose the object in a custom stage")
        } else if let inverse = relationship.inverse,
          storedInverseName(of: relationship, named: inverse) != was.inverse
        {
          fail(
            entity.name, property.name,
            "has inverse \(relationship.destination).\(inverse), which was not its inverse "
              + "in the store: pair the objects in a custom stage")
        }
        if model?.relationship(index)?.isRequired == true {
          mapping.required.append(index)
        }
        if relationship.isToMany,
          relationship.minimumCount != nil || relationship.maximumCount != nil,
          relationship.minimumCount != was.minimumCount
            || relationship.maximumCount != was.maximumCount
        {
          mapping.bounded.append((index, relationship.minimumCount, relationship.maximumCount))
        }
        return .stored(counterpartIndex!)
      case (.attribute, .relationship), (.relationship, .attribute):
        fail(
          entity.name, property.name,
          "was \(counterpart!.attribute == nil ? "a relationship" : "an attribute"), is "
            + "\(property.attribute == nil ? "a relationship" : "an attribute"): convert it in "
            + "a custom stage")
        return .value(.null)
      }
    }

    /// The value a property a custom stage fills starts with (see
    /// ``LightweightMigration/init(from:to:models:leavingToStage:)``); nil for a `Codable`
    /// attribute with no default, which no empty value decodes.
    static func emptyValue(of property: PropertyDescription, default: PersistentValue?)
      -> PersistentValue?
    {
      switch property.kind {
      case .relationship(let relationship):
        return relationship.isToMany ? .references([]) : .null
      case .attribute(let attribute):
        if attribute.isOptional { return .null }
        if let value = `default` { return value }
        switch attribute.type {
        case .bool: return .bool(false)
        case .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64:
          return .int(0)
        case .double, .float: return .double(0)
        case .string: return .string("")
        case .date: return .date(Date(timeIntervalSinceReferenceDate: 0))
        case .data: return .data(Data())
        case .uuid: return .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .url: return .url(URL(string: "about:blank")!)
        case .codable: return nil
        }
      }
    }

    /// The stored name of new relationship `relationship`'s inverse `inverse`, or nil when
    /// that inverse is new.
    private func storedInverseName(of relationship: RelationshipDescription, named inverse: String)
      -> String?
    {
      guard let destination = target.entities.first(where: { $0.name == relationship.destination }),
        let property = destination.properties.first(where: { $0.name == inverse }),
        let counterpart = storedCounterpart(of: property, in: destination)
      else { return nil }
      return counterpart.entity.properties[counterpart.index].name
    }

    /// Whether values stored as `old` read as `new` unchanged: the same type, or a number
    /// widened (every integer is stored as 64 bits, `Float` as `Double`).
    static func storesAlike(_ old: AttributeType, _ new: AttributeType) -> Bool {
      if old == new { return true }
      let signed: [AttributeType] = [.int8, .int16, .int32, .int64]
      let unsigned: [AttributeType] = [.uint8, .uint16, .uint32, .uint64]
      func width(_ type: AttributeType) -> (signed: Bool, bits: Int)? {
        switch type {
        case .int: (true, 64)
        case .uint: (false, 64)
        default:
          signed.firstIndex(of: type).map { (true, 8 << $0) }
            ?? unsigned.firstIndex(of: type).map { (false, 8 << $0) }
        }
      }
      if old == .float && new == .double { return true }
      guard let from = width(old), let to = width(new) else { return false }
      if from.signed == to.signed { return to.bits >= from.bits }
      return !from.signed && to.bits > from.bits
    }
  }

  /// The checks of stored values against the new schema, made as objects are migrated.
  private struct ValueChecks {
    /// What is checked of one stored entity's objects: a class, so that finding it for an
    /// object copies no array.
    private final class EntityChecks {
      /// The entity's index in the new schema.
      let target: Int
      let required: [Int]
      /// The newly unique properties, each with the number of its values' table in
      /// ``ValueChecks/seen``.
      let newlyUnique: [(property: Int, table: Int)]
      let bounded: [(property: Int, minimum: Int?, maximum: Int?)]

      init(_ mapping: EntityMapping, tables: inout [UniqueKey: Int]) {
        target = mapping.target
        required = mapping.required
        newlyUnique = mapping.newlyUnique.map { property in
          let key = UniqueKey(entity: mapping.target, property: property)
          if let table = tables[key] { return (property, table) }
          tables[key] = tables.count
          return (property, tables.count - 1)
        }
        bounded = mapping.bounded
      }
    }

    let target: Schema
    /// By stored entity: its checks, or nil when its objects have none.
    private let entities: [EntityChecks?]
    /// The values seen of each newly unique property (of a target entity: stored entities
    /// merged into one share it), with the first object seen holding each.
    private var seen: [[PersistentValue: ObjectID]]

    private struct UniqueKey: Hashable {
      var entity: Int
      var property: Int
    }
    private var problems: [String] = []
    private var firstProblem: (entity: String, property: String, id: ObjectID)?

    /// The number of objects checked, which each unique property's values are counted for.
    let expectedCount: Int

    init(_ mappings: [EntityMapping?], target: Schema, expectedCount: Int) {
      var tables: [UniqueKey: Int] = [:]
      entities = mappings.map { mapping in
        mapping.flatMap { $0.hasChecks ? EntityChecks($0, tables: &tables) : nil }
      }
      seen = Array(repeating: [:], count: tables.count)
      self.target = target
      self.expectedCount = expectedCount
    }

    /// Whether the objects of stored entity `entity` are checked.
    func checks(_ entity: Int) -> Bool { entities[entity] != nil }

    /// Checks the new values of object `id` of stored entity `entity` (which ``checks(_:)``),
    /// each read by its new property's index.
    mutating func check(_ id: ObjectID, entity storedEntity: Int, value: (Int) -> PersistentValue) {
      let checks = entities[storedEntity]!
      // The entity's description is read only for a report: copying it retains its arrays.
      var entity: EntityDescription { target.entities[checks.target] }
      // Matched, not compared: `== .null` costs a call of `==` per value.
      for property in checks.required {
        guard case .null = value(property) else { continue }
        report(
          entity.name, entity.properties[property].name, id,
          "is required now and has no default, but object \(id) holds nil")
      }
      for (property, table) in checks.newlyUnique {
        let stored = value(property)
        if case .null = stored { continue }
        if seen[table].isEmpty { seen[table].reserveCapacity(expectedCount) }
        // One hash of the value: the common case, a value not seen before, is one insert.
        if let other = seen[table].updateValue(id, forKey: stored) {
          seen[table][stored] = other
          report(
            entity.name, entity.properties[property].name, id,
            "is unique now, but objects \(other) and \(id) both hold \(stored)")
        }
      }
      for (property, minimum, maximum) in checks.bounded {
        guard case .references(let objects) = value(property) else { continue }
        if let minimum, objects.count < minimum {
          report(
            entity.name, entity.properties[property].name, id,
            "must hold at least \(minimum) objects, but object \(id) holds \(objects.count)")
        }
        if let maximum, objects.count > maximum {
          report(
            entity.name, entity.properties[property].name, id,
            "may hold at most \(maximum) objects, but object \(id) holds \(objects.count)")
        }
      }
    }

    private mutating func report(
      _ entity: String, _ property: String, _ id: ObjectID, _ text: String
    ) {
      if firstProblem == nil { firstProblem = (entity, property, id) }
      // Enough to act on; a store with 100,000 repeats would make a message of megabytes.
      if problems.count < 10 {
        problems.append("entity \(entity): \(property) \(text)")
      } else if problems.count == 10 {
        problems.append("…")
      }
    }

    func throwIfFailed() throws {
      guard let firstProblem else { return }
      throw ObjectGraphError(
        .migrationFailed,
        "the stored values do not fit the new schema: " + problems.joined(separator: "; "),
        entity: firstProblem.entity, property: firstProblem.property, objectID: firstProblem.id)
    }
  }
}

extension ObjectList {
  /// The strings a store left as bytes among one object's values, by the value's index in
  /// the object: each an entry of ``DeferredStrings/Relocation``'s storages, for a value
  /// that is the `.null` placeholder (stale entries, of values replaced since, left out).
  struct DeferredEntries {
    fileprivate var entries: UnsafeMutableBufferPointer<DeferredStrings.Entry?>

    subscript(index: Int) -> DeferredStrings.Entry? { entries[index] }
  }

  /// Hands each live object's id, entity and values to `each`, in order, leaving the list
  /// empty. When `each` is told it owns the values (the list held the only reference to
  /// them), it must move or deinitialize every one; otherwise they are lent, still held by
  /// another list (a custom stage's old objects, made only if its code asks for them), and
  /// it may only copy them. No live object has more than `valuesPerObject` values (a store's
  /// decoder checks each object's count against its entity). A string the store left as
  /// bytes stays a `.null` placeholder, and the object's deferred entries say where its
  /// bytes are; `strings` is first told of all of them, if there are any. A store's packed
  /// values are handed over in place (no value copied, retained or released on the way, no
  /// search or hash per string; shared ones are not copied first either); snapshots are
  /// copied.
  mutating func consumeObjects(
    valuesPerObject: Int, strings: (DeferredStrings) -> Void,
    each: (
      ObjectID, Int, UnsafeMutableBufferPointer<PersistentValue>, DeferredEntries, _ owned: Bool
    ) -> Void
  ) {
    var packed = takePacked()
    let owned = packed.valuesAreUniquelyReferenced
    guard owned else {
      // Lent: read in place, the buffer kept alive by `packed` (and by its other holder).
      let deferredStrings = packed.deferredStrings
      packed.values.withUnsafeBufferPointer { values in
        Self.handOut(
          packed, UnsafeMutablePointer(mutating: values.baseAddress), count: values.count,
          deferredStrings, owned: false, valuesPerObject: valuesPerObject, strings: strings,
          each: each)
      }
      return
    }
    let (base, count, deferredStrings) = packed.takeValues()
    defer { base.deallocate() }
    Self.handOut(
      packed, base, count: count, deferredStrings, owned: true, valuesPerObject: valuesPerObject,
      strings: strings, each: each)
  }

  /// ``consumeObjects(valuesPerObject:strings:each:)``'s walk over the objects, whose values
  /// start at `base` (nil for none).
  private static func handOut(
    _ packed: PackedObjects, _ base: UnsafeMutablePointer<PersistentValue>?, count: Int,
    _ deferredStrings: DeferredStrings, owned: Bool, valuesPerObject: Int,
    strings: (DeferredStrings) -> Void,
    each: (
      ObjectID, Int, UnsafeMutableBufferPointer<PersistentValue>, DeferredEntries, _ owned: Bool
    ) -> Void
  ) {
    let ids = packed.ids
    let entities = packed.entities
    let starts = packed.starts
    let hasStrings = !deferredStrings.isEmpty
    if hasStrings { strings(deferredStrings) }
    var cursor = deferredStrings.makeCursor()
    let found = UnsafeMutableBufferPointer<DeferredStrings.Entry?>.allocate(
      capacity: valuesPerObject)
    found.initialize(repeating: nil)
    defer { found.deallocate() }
    for position in ids.indices {
      let range = PackedObjects.valueRange(position, starts: starts, valueCount: count)
      guard entities[position] != PackedObjects.removed else {
        if owned { base?.advanced(by: range.lowerBound).deinitialize(count: range.count) }
        continue
      }
      precondition(range.count <= valuesPerObject, "an object with more values than its entity")
      var marked = 0..<0
      if hasStrings {
        cursor.skip(to: range.lowerBound)
        while let entry = cursor.nextEntry(before: range.upperBound) {
          // An entry whose value was replaced since is stale.
          guard case .null = base![entry.position] else { continue }
          let index = entry.position - range.lowerBound
          found[index] = entry
          marked = marked.isEmpty ? index..<index + 1 : marked.lowerBound..<index + 1
        }
      }
      each(
        ids[position], Int(entities[position]),
        UnsafeMutableBufferPointer(start: base?.advanced(by: range.lowerBound), count: range.count),
        DeferredEntries(entries: UnsafeMutableBufferPointer(rebasing: found[0..<range.count])),
        owned)
      for index in marked { found[index] = nil }
    }
  }
}

extension EntityModel {
  /// The default value of attribute `index` as stored: the declaration's default, made on
  /// the model's prototype; nil for a relationship or an attribute declared without one.
  func defaultValue(of index: Int) -> PersistentValue? {
    guard case .attribute(let attribute) = properties[index].kind, attribute.hasDefault,
      let prototype
    else { return nil }
    return switch prototype.slots[index] {
    case .value(let value): value
    case .deferred(let pending): pending.make()
    case .toOne, .toMany, .released, .draft, .draftList: nil
    }
  }
}
