import Foundation

/// Turns a store's decoded objects into model objects for a context, on every core.
///
/// Each object's run of decoded values becomes its slots in place, in the memory the store
/// decoded them into (``SlotSlab``): no copy, no retain. Loading takes three passes over the
/// objects in their stored order, the first and the last split into pieces that run on every
/// core at once:
/// 1. ``makeObjects()``, in pieces: each object is made with
///    ``ModelBuildState/prepare(_:count:in:retainedModel:)``; its relationship slots keep
///    their stored identifiers;
/// 2. ``register(in:)``, in order: each object joins the context's identity map, which finds
///    an identifier stored twice;
/// 3. ``link(resolvingIn:)``, in pieces: each relationship's stored identifiers become the
///    objects, found in the identity map, which no piece changes.
///
/// Making an object also gives it its place in its entity's table, and linking it makes its
/// entries in the table's to-one indexes; ``addToTables()`` then hands each table its
/// members and entries at once (``EntityTable/adoptLoaded(_:entries:)``), so no pass of its
/// own touches every object again.
///
/// A piece writes only its own objects and their slots, and no reference count that another
/// piece writes: two cores writing one object's count bounce its cache line between them,
/// which made loading on two cores slower than on one. So its objects keep the slab through a
/// share of their own (``SlotSlab/share()``), their models are retained for all of them
/// before the pieces start, and what a piece reads of the entities is held in memory with
/// no reference count (``Entity``).
///
/// Until an object is registered the loader holds it; values not yet turned into slots, and
/// objects not yet registered, are let go when the loader goes. A load that fails at any step
/// leaves nothing behind but the objects already in the identity map, each whole.
final class ObjectLoader {
  /// What loading needs of an entity, read once, holding no reference that counts: the
  /// model is kept by the context's table, the flags and relationships by the loader.
  private struct Entity {
    var model: Unmanaged<EntityModel>
    var type: ManagedObject.Type
    var propertyCount: Int
    /// Whether each property is indexed, `propertyCount` flags.
    var isIndexed: UnsafeBufferPointer<Bool>
    var relationships: UnsafeBufferPointer<LinkedRelationship>
    var table: Unmanaged<EntityTable>
    /// The table's indexed to-one relationships
    /// (``EntityTable/indexedToOneRelationships``).
    var indexedToOne: UnsafeBufferPointer<(property: Int, indexesOnlyNone: Bool)>
    /// The entity's objects in stored order, each at its place in the table.
    var members: UnsafeMutableBufferPointer<Unmanaged<ManagedObject>>
    /// The table's indexed attributes (``EntityTable/indexedAttributes``), whose values the
    /// loader notes in ``attributeValues`` (nil when there are none).
    var indexedAttributes: UnsafeBufferPointer<Int>
    var attributeValues: Unmanaged<IndexedAttributeValues>?
    /// What each property's stored value must be (``StoredValueCheck``).
    var checks: UnsafeBufferPointer<StoredValueCheck>
    /// The `Codable` attributes, whose bytes are decoded once as they are loaded.
    var codableAttributes: UnsafeBufferPointer<Int>
    /// Whether its objects take seats in shared Observation registrars as they are made
    /// (``ManagedObject/observation``): the context's objects are observed and the model's
    /// keys fit a seat.
    var seatsForObservation: Bool
  }

  /// What linking needs of a relationship.
  private struct LinkedRelationship {
    var index: Int
    var isToMany: Bool
    /// A required to-one (`T`): a stored object without one would stop the app at its
    /// first read, so the load refuses it.
    var isRequired: Bool
    var destination: Unmanaged<EntityModel>
    var destinationType: ManagedObject.Type

    init(index: Int, model: RelationshipModel) {
      self.index = index
      isToMany = model.isToMany
      isRequired = model.isRequired
      destination = Unmanaged.passUnretained(model.destination)
      destinationType = model.destinationType
    }
  }

  /// The fewest objects worth a piece of their own.
  static let minimumPieceSize = 2_048
  /// The most pieces: more pieces than cores let a core that is free take the pieces of one
  /// that is busy with other work.
  static let maximumPieceCount = 16

  private let ids: [ObjectID]
  private let entityNumbers: [Int32]
  private let starts: [Int]
  private let values: UnsafeMutablePointer<PersistentValue>
  private let valueCount: Int
  private let strings: DeferredStrings
  private let slab: SlotSlab
  /// The entities, by number; their flags and relationships are in memory the loader
  /// allocates (see ``deinit``).
  private let entities: UnsafeMutableBufferPointer<Entity>
  /// The context the objects are loaded into, which keeps this loader no longer than it runs.
  private let context: Unmanaged<ObjectContext>
  /// The ranges of positions each piece loads, in order.
  private let pieces: [Range<Int>]
  /// The number of live objects of each entity.
  private let memberCounts: [Int]
  /// The place in its table of each piece's first object of each entity, by piece then
  /// entity.
  private let firstMembers: [Int]
  /// The to-one index entries of the objects, by entity.
  private var entries: [[EntityTable.LoadedEntry]] = []
  /// The indexed attribute values of each entity's objects, which its attribute index build
  /// reads instead of the objects (kept here: ``Entity`` holds them unretained).
  private let attributeValues: [IndexedAttributeValues?]
  /// The object made at each position (nil for a removed object), held by the loader at
  /// positions from ``heldFrom`` on, and by the identity map before.
  private let made: UnsafeMutableBufferPointer<Unmanaged<ManagedObject>?>
  private var heldFrom = 0
  /// The values not turned into slots when making objects failed, destroyed with the loader.
  private var valuesLeft: [Range<Int>] = []
  /// For each entity, a check of each `Codable` attribute's stored bytes
  /// (``AttributeModel/decodingProblem``), by property.
  private let decoders: [[Int: (Data) -> String?]]

  /// A loader of `objects`, whose values it takes, into `context`, whose tables are those
  /// of the entities the objects' entity numbers refer to.
  init(taking objects: inout PackedObjects, into context: ObjectContext, tables: [EntityTable]) {
    ids = objects.ids
    entityNumbers = objects.entities
    starts = objects.starts
    let (values, valueCount, strings) = objects.takeValues()
    self.values = values
    self.valueCount = valueCount
    self.strings = strings
    slab = SlotSlab(adopting: values)
    slab.keep(strings.storages)
    self.context = Unmanaged.passUnretained(context)
    let count = ids.count
    let pieceCount = max(1, min(objects.liveCount / Self.minimumPieceSize, Self.maximumPieceCount))
    pieces = (0..<pieceCount).map { piece in
      (count * piece / pieceCount)..<(count * (piece + 1) / pieceCount)
    }
    // Each piece's objects of an entity take the places after those of the pieces before.
    var firstMembers = [Int](repeating: 0, count: pieceCount * tables.count)
    var memberCounts = [Int](repeating: 0, count: tables.count)
    for (piece, positions) in pieces.enumerated() {
      for entity in tables.indices {
        firstMembers[piece * tables.count + entity] = memberCounts[entity]
      }
      for position in positions where tables.indices.contains(Int(entityNumbers[position])) {
        memberCounts[Int(entityNumbers[position])] += 1
      }
    }
    self.firstMembers = firstMembers
    self.memberCounts = memberCounts
    let attributeValues = zip(tables, memberCounts).map { table, count in
      let attributes = table.indexedAttributes
      return attributes.isEmpty
        ? nil : IndexedAttributeValues(properties: attributes, memberCount: count)
    }
    self.attributeValues = attributeValues
    decoders = tables.map { table in
      var decoders: [Int: (Data) -> String?] = [:]
      for property in table.model.properties {
        if case .attribute(let attribute) = property.kind, let decode = attribute.decodingProblem {
          decoders[property.index] = decode
        }
      }
      return decoders
    }
    entities = .allocate(capacity: tables.count)
    for (number, table) in tables.enumerated() {
      let model = table.model
      (entities.baseAddress! + number).initialize(
        to: Entity(
          model: Unmanaged.passUnretained(model), type: model.type,
          propertyCount: model.properties.count,
          isIndexed: Self.copy(model.isIndexed),
          relationships: Self.copy(
            zip(model.relationshipIndices, model.relationshipModels).map {
              LinkedRelationship(index: $0, model: $1)
            }),
          table: Unmanaged.passUnretained(table),
          indexedToOne: Self.copy(table.indexedToOneRelationships),
          members: .allocate(capacity: memberCounts[number]),
          indexedAttributes: Self.copy(attributeValues[number]?.properties ?? []),
          attributeValues: attributeValues[number].map { Unmanaged.passUnretained($0) },
          checks: Self.copy(model.properties.map { StoredValueCheck($0.propertyDescription) }),
          codableAttributes: Self.copy(decoders[number].keys.sorted()),
          seatsForObservation: context.isObservable && model.sharesObservation))
    }
    made = .allocate(capacity: count)
    made.initialize(repeating: nil)
  }

  /// `elements` in memory of their own, which no reference counts (freed in ``deinit``).
  private static func copy<Element>(_ elements: [Element]) -> UnsafeBufferPointer<Element> {
    let copy = UnsafeMutableBufferPointer<Element>.allocate(capacity: elements.count)
    _ = copy.initialize(from: elements)
    return UnsafeBufferPointer(copy)
  }

  deinit {
    for range in valuesLeft { (values + range.lowerBound).deinitialize(count: range.count) }
    for position in heldFrom..<made.count { made[position]?.release() }
    made.deallocate()
    for entity in entities {
      entity.isIndexed.deallocate()
      entity.relationships.deallocate()
      entity.indexedToOne.deallocate()
      entity.members.deallocate()
      entity.indexedAttributes.deallocate()
      entity.checks.deallocate()
      entity.codableAttributes.deallocate()
    }
    entities.deallocate()
  }

  /// The first value of the object at `position`, or the end of the values.
  private func valueStart(_ position: Int) -> Int {
    position < starts.count ? starts[position] : valueCount
  }

  // MARK: Making

  /// Makes every object, each piece on a core of its own.
  ///
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` for an object of an unknown entity or
  ///   with the wrong number of values; the first in stored order.
  func makeObjects() throws {
    // Each object takes a reference to its model: retained here, on one thread, for all.
    for (entity, count) in zip(entities, memberCounts) {
      for _ in 0..<count { _ = entity.model.retain() }
    }
    var outcomes = [(valuesLeft: Range<Int>, error: (any Error)?)](
      repeating: (0..<0, nil), count: pieces.count)
    outcomes.withUnsafeMutableBufferPointer { outcomes in
      Parallel.forEach(pieces.count) { piece in
        outcomes[piece] = makeObjects(inPiece: piece)
      }
    }
    valuesLeft = outcomes.map(\.valuesLeft).filter { !$0.isEmpty }
    guard let error = outcomes.lazy.compactMap(\.error).first else { return }
    // The references retained for objects not made.
    var notMade = memberCounts
    for position in made.indices where made[position] != nil {
      notMade[Int(entityNumbers[position])] -= 1
    }
    for (entity, count) in zip(entities, notMade) {
      for _ in 0..<count { entity.model.release() }
    }
    throw error
  }

  /// Makes the objects of piece `piece`; returns the values it did not turn into slots
  /// (none unless it failed) and why it failed.
  private func makeObjects(inPiece piece: Int) -> (valuesLeft: Range<Int>, error: (any Error)?) {
    let positions = pieces[piece]
    let state = ModelBuildState.current
    let share = slab.share()
    let end = valueStart(positions.upperBound)
    var firstValueLeft = valueStart(positions.lowerBound)
    // Strings left as bytes, met in the order of their values' positions (those of removed
    // objects and replaced values are passed over).
    var strings = self.strings.makeCursor(at: firstValueLeft)
    // The place in its table of the piece's next object of each entity.
    var nextMembers = Array(
      firstMembers[(piece * entities.count)..<((piece + 1) * entities.count)])
    // The piece's objects take seats in registrars of their own, in the order they are made.
    var observationSeats = ObservationSeats()
    // The piece's places in the columns of indexed attribute values, initialized before any
    // object is made (so that every place is, whatever happens next).
    for (number, entity) in entities.enumerated() {
      guard let values = entity.attributeValues else { continue }
      let endMember =
        piece + 1 < pieces.count
        ? firstMembers[(piece + 1) * entities.count + number] : memberCounts[number]
      values._withUnsafeGuaranteedRef { $0.prepare(members: nextMembers[number]..<endMember) }
    }
    do {
      try state.run(.materialize, model: nil) {
        for position in positions where entityNumbers[position] != PackedObjects.removed {
          let id = ids[position]
          guard entities.indices.contains(Int(entityNumbers[position])) else {
            throw ObjectGraphError(
              .corruptStore, "stored object \(id) has unknown entity \(entityNumbers[position])",
              objectID: id)
          }
          let entityNumber = Int(entityNumbers[position])
          let entity = entities[entityNumber]
          let range = PackedObjects.valueRange(position, starts: starts, valueCount: valueCount)
          let count = range.count
          guard count == entity.propertyCount else {
            let name = entity.model.takeUnretainedValue().name
            throw ObjectGraphError(
              .corruptStore,
              "stored object \(id) of \(name) has \(count) values "
                + "for \(entity.propertyCount) properties", entity: name, objectID: id)
          }
          strings.skip(to: range.lowerBound)
          // The run's memory becomes the object's slots, a value at a time: each moves out
          // and a slot takes its place. Attribute slots take their values; relationship
          // slots hold their stored identifiers until they are linked.
          let run = values + range.lowerBound
          // The first property whose stored value its model cannot read, if any.
          var misfit: Int?
          for index in 0..<count {
            let value = (run + index).move()
            let slot = SlotSlab.slot(replacing: run + index)
            // An entry stands for its value only while that is the `.null` placeholder: a
            // value replaced since is the value.
            if let string = strings.take(at: range.lowerBound + index), case .null = value {
              if entity.checks[index].kind != .string { misfit = misfit ?? index }
              // Indexed attributes are indexed on another thread: no slot of theirs may
              // change when first read, so their strings are decoded now.
              if entity.isIndexed[index] {
                slot.initialize(to: .value(.string(string.value)))
              } else {
                slot.initialize(to: .deferred(.storedString(consume string)))
              }
            } else {
              if !entity.checks[index].accepts(value) {
                misfit = misfit ?? index
              }
              slot.initialize(to: .value(value))
            }
          }
          let slots = SlotSlab.slots(of: run, count: count)
          if let misfit {
            let error = refuse(slots, count: count, of: id, entityNumber, misfit: misfit)
            firstValueLeft = range.upperBound  // its slots are destroyed
            throw error
          }
          for property in entity.codableAttributes {
            guard case .value(.data(let data)) = slots[property],
              let problem = decoders[entityNumber][property]!(data)
            else { continue }
            let error = refuse(
              slots, count: count, of: id, entityNumber, undecodable: property, problem)
            firstValueLeft = range.upperBound
            throw error
          }
          firstValueLeft = range.upperBound
          let member = nextMembers[entityNumber]
          nextMembers[entityNumber] = member + 1
          // Indexed attributes hold values (their strings decoded above), noted for the
          // index build while they are in the cache.
          if let values = entity.attributeValues {
            for (column, property) in entity.indexedAttributes.enumerated() {
              if case .value(let value) = slots[property] {
                values._withUnsafeGuaranteedRef {
                  $0.set(value, attribute: column, member: member)
                }
              }
            }
          }
          state.prepare(slots, count: count, in: share, retainedModel: entity.model)
          let object = entity.type.init()
          object.storedObjectID = id
          object.lifecycle = .persisted
          object.trackingReference = context
          object.tableIndex = member
          if entity.seatsForObservation {
            // Here, while the object is in the cache, rather than at its first read, which
            // a walk of the graph pays for every object on one core.
            observationSeats.seat(object)
          }
          entity.members[member] = Unmanaged.passUnretained(object)
          made[position] = Unmanaged.passRetained(object)
        }
      }
    } catch {
      return (firstValueLeft..<end, error)
    }
    return (end..<end, nil)
  }

  /// The error for the object `id` whose stored value of property `misfit` (or whose
  /// `Codable` attribute `undecodable`) its model cannot read; its `count` slots, made
  /// already, are destroyed.
  private func refuse(
    _ slots: UnsafeMutablePointer<Slot>, count: Int, of id: ObjectID, _ entityNumber: Int,
    misfit: Int? = nil, undecodable: Int? = nil, _ problem: String = ""
  ) -> ObjectGraphError {
    let model = entities[entityNumber].model.takeUnretainedValue()
    let error: ObjectGraphError
    if let misfit {
      let value: PersistentValue =
        if case .value(let value) = slots[misfit] { value } else { .null }
      let stored: PersistentValue =
        if case .deferred = slots[misfit] { .string("…") } else { value }
      error = StoredValueCheck.mismatch(
        stored, of: id, in: model.entityDescription, property: misfit)
    } else {
      let name = model.properties[undecodable!].name
      error = ObjectGraphError(
        .schemaMismatch,
        "stored object \(id) of \(model.name) holds a value of \(name) that its Codable type "
          + "no longer decodes (the type changed since it was saved?): \(problem)",
        entity: model.name, property: name, objectID: id)
    }
    slots.deinitialize(count: count)
    return error
  }

  // MARK: Registering

  /// Hands every object to `registered`, the context's identity map, in stored order.
  ///
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` for an identifier stored twice.
  func register(in registered: inout ObjectNumberMap<ManagedObject>) throws {
    var position = 0
    defer { heldFrom = position }
    // Handed over with the loader's references: no retain and release here. The numbers in
    // the map's array part (reserved for the load: all of them, unless they are sparse)
    // are written in place, without a uniqueness check for each.
    try registered.fillArrayPart { places, filled in
      while position < made.count {
        guard let object = made[position] else {
          position += 1
          continue
        }
        let number = ids[position].rawValue
        guard number < UInt64(places.count) else { return }
        guard places[Int(number)] == nil else { throw storedTwice(at: position) }
        places[Int(number)] = object.takeRetainedValue()
        position += 1
        filled += 1
      }
    }
    while position < made.count {
      position += 1
      guard let object = made[position - 1] else { continue }
      guard registered.insert(object.takeRetainedValue(), for: ids[position - 1]) else {
        throw storedTwice(at: position - 1)
      }
    }
  }

  /// The error for the object at `position`, whose identifier an object before it has.
  private func storedTwice(at position: Int) -> ObjectGraphError {
    let id = ids[position]
    return ObjectGraphError(
      .corruptStore, "stored object \(id) appears twice",
      entity: entities[Int(entityNumbers[position])].model.takeUnretainedValue().name,
      objectID: id)
  }

  // MARK: Linking

  /// Links every object's relationships, each piece on a core of its own: each slot's
  /// stored identifier or list of them becomes the objects `registered` holds for them.
  ///
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` for an identifier of no stored object
  ///   of the relationship's destination; the first in stored order.
  func link(resolvingIn registered: ObjectNumberMap<ManagedObject>) throws {
    var outcomes = [(entries: [[EntityTable.LoadedEntry]], error: (any Error)?)](
      repeating: ([], nil), count: pieces.count)
    outcomes.withUnsafeMutableBufferPointer { outcomes in
      Parallel.forEach(pieces.count) { piece in
        var entries = [[EntityTable.LoadedEntry]](repeating: [], count: entities.count)
        do {
          try link(at: pieces[piece], resolvingIn: registered, entries: &entries)
          outcomes[piece] = (entries, nil)
        } catch {
          outcomes[piece] = ([], error)
        }
      }
    }
    if let error = outcomes.lazy.compactMap(\.error).first { throw error }
    entries = entities.indices.map { number in outcomes.flatMap { $0.entries[number] } }
  }

  /// Links the objects at `positions`, adding to `entries` (by entity) the to-one index
  /// entries they need.
  private func link(
    at positions: Range<Int>, resolvingIn registered: borrowing ObjectNumberMap<ManagedObject>,
    entries: inout [[EntityTable.LoadedEntry]]
  ) throws {
    for position in positions {
      guard let object = made[position] else { continue }
      let entityNumber = Int(entityNumbers[position])
      let entity = entities[entityNumber]
      let slots = object._withUnsafeGuaranteedRef { $0.slots }
      for relationship in entity.relationships {
        try link(
          slots + relationship.index, relationship, of: entity, id: ids[position],
          resolvingIn: registered)
      }
      for (property, indexesOnlyNone) in entity.indexedToOne {
        switch slots[property] {
        case .toOne(.none):
          entries[entityNumber].append(
            EntityTable.LoadedEntry(property: property, object: object, target: nil))
        case .toOne(.some(let target)) where !indexesOnlyNone:
          entries[entityNumber].append(
            EntityTable.LoadedEntry(
              property: property, object: object, target: ObjectIdentifier(target)))
        default:
          break
        }
      }
    }
  }

  /// Links a loaded object's relationship: its slot holds the stored identifier or list of
  /// them, and gets the objects (an empty relationship while it is linked, and if that
  /// fails). The stored list is freed here, while it is in the cache.
  private func link(
    _ slot: UnsafeMutablePointer<Slot>, _ relationship: LinkedRelationship, of entity: Entity,
    id: ObjectID, resolvingIn registered: borrowing ObjectNumberMap<ManagedObject>
  ) throws {
    guard case .value(let stored) = slot.move() else {
      preconditionFailure("ObjectGraph: a loaded relationship slot holds no stored value")
    }
    slot.initialize(to: relationship.isToMany ? .toMany([]) : .toOne(nil))
    switch stored {
    case .null where !relationship.isRequired:
      break
    case .null:
      throw Self.missingRequired(relationship, of: id, entity)
    case .reference(let target) where !relationship.isToMany:
      slot.pointee = .toOne(
        try resolve(target, relationship, of: entity, id: id, in: registered))
    case .references(let targets) where relationship.isToMany:
      if targets.isEmpty { break }
      // Written in place: `append` was two calls an element, the array's generic code.
      slot.pointee = .toMany(
        try [ManagedObject](unsafeUninitializedCapacity: targets.count) { objects, count in
          for target in targets {
            (objects.baseAddress! + count).initialize(
              to: try resolve(target, relationship, of: entity, id: id, in: registered))
            count += 1
          }
        })
    default:
      throw Self.misfit(stored, in: relationship, of: id, entity)
    }
  }

  // The linking errors are made out of line, so that the path every reference takes keeps
  // no registers for building their messages (see DesignNotes, "Known limits").

  /// The error for object `id`, stored without an object in a required relationship.
  @inline(never)
  private static func missingRequired(
    _ relationship: LinkedRelationship, of id: ObjectID, _ entity: Entity
  ) -> ObjectGraphError {
    let model = entity.model.takeUnretainedValue()
    let name = model.properties[relationship.index].name
    return ObjectGraphError(
      .schemaMismatch,
      "stored object \(id) of \(model.name) holds no object in \(name), which the model "
        + "declares required (without `?`): declare it optional, or relate every stored "
        + "object first", entity: model.name, property: name, objectID: id)
  }

  /// The error for object `id`, whose stored value of a relationship is not a reference (a
  /// to-one) or a list of them (a to-many).
  @inline(never)
  private static func misfit(
    _ stored: PersistentValue, in relationship: LinkedRelationship, of id: ObjectID,
    _ entity: Entity
  ) -> ObjectGraphError {
    let model = entity.model.takeUnretainedValue()
    let name = model.properties[relationship.index].name
    return ObjectGraphError(
      .corruptStore, "stored object \(id) of \(model.name) holds \(stored) in \(name)",
      entity: model.name, property: name, objectID: id)
  }

  /// The object a relationship of object `id` refers to as `target`.
  private func resolve(
    _ target: ObjectID, _ relationship: LinkedRelationship, of entity: Entity, id: ObjectID,
    in registered: borrowing ObjectNumberMap<ManagedObject>
  ) throws -> ManagedObject {
    // The model comparison answers for all but objects of a subclass entity.
    guard let object = registered[target],
      Unmanaged.passUnretained(object.model).toOpaque() == relationship.destination.toOpaque()
        || object.isKind(of: relationship.destinationType)
    else {
      throw Self.dangling(target, relationship, of: id, entity)
    }
    return object
  }

  /// The error for object `id`, whose relationship refers to `target`, which is no stored
  /// object of the relationship's destination.
  @inline(never)
  private static func dangling(
    _ target: ObjectID, _ relationship: LinkedRelationship, of id: ObjectID, _ entity: Entity
  ) -> ObjectGraphError {
    let model = entity.model.takeUnretainedValue()
    let name = model.properties[relationship.index].name
    return ObjectGraphError(
      .corruptStore,
      "stored object \(id) of \(model.name) refers through \(name) to \(target), "
        + "which is not a stored \(relationship.destination.takeUnretainedValue().name)",
      entity: model.name, property: name, objectID: id)
  }

  // MARK: Tables

  /// Hands each entity's table its objects, in stored order, and their to-one index
  /// entries, and starts building its attribute indexes on another thread from the values
  /// noted (``EntityTable/startBuildingAttributeIndexes(from:)``).
  func addToTables() {
    for (number, entity) in entities.enumerated() {
      entity.table._withUnsafeGuaranteedRef { table in
        table.adoptLoaded(Array(entity.members), entries: entries[number])
        table.startBuildingAttributeIndexes(from: attributeValues[number])
      }
    }
  }
}
