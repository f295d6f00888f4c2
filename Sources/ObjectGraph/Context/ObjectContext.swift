import Foundation

/// A scratchpad of model objects: it tracks what you insert, change and delete, keeps every
/// relationship consistent, answers fetches (pending changes included) and saves to the
/// container's store.
///
/// ```swift
/// let context = container.mainContext
/// let inbox = Box(title: "Inbox")
/// context.insert(inbox)
/// let task = Box(title: "Task", parent: inbox)   // inserted too: related to inbox
/// try context.save()
/// ```
///
/// A context holds at most one instance per ``ObjectID`` (its identity map) and all objects
/// it has loaded or been given. A context and its objects stay on one actor (the main
/// context on the main actor). Releasing a context releases its objects: it unlinks their
/// relationships, so no reference cycle between parents and children outlives it.
public final class ObjectContext {
  let coordinator: StoreCoordinator
  /// The identity map: every registered object (inserted, saved or deleted-but-unsaved).
  @exclusivity(unchecked) private(set) var registered = ObjectNumberMap<ManagedObject>()
  /// One table per entity of the schema, in schema order.
  @exclusivity(unchecked) private(set) var tables: [EntityTable] = []
  private var tablesByModel: [ObjectIdentifier: EntityTable] = [:]

  /// Objects inserted since the last save, in insertion (and so identifier) order.
  @exclusivity(unchecked) var inserted = ObjectSet(.inserted)
  /// Saved objects with changed properties (``ManagedObject/changes``); deleted ones too.
  @exclusivity(unchecked) var updated = ObjectSet(.updated)
  /// Saved objects deleted since the last save.
  @exclusivity(unchecked) var deleted = ObjectSet(.deleted)
  @exclusivity(unchecked) private var reservedNumbers: Range<UInt64> = 0..<0

  /// Changes not yet delivered to observers.
  @exclusivity(unchecked) var pending = PendingChanges()
  /// The registrar that objects read for the first time share, and its seats taken.
  @exclusivity(unchecked) private var observationGroup: ObservationBox?
  @exclusivity(unchecked) private var observationSeatsTaken = 0
  @exclusivity(unchecked) var observers = ContextObservers()
  @exclusivity(unchecked) var isDelivering = false
  /// Whether the context delivers its changes once per turn of the main queue.
  @exclusivity(unchecked) var deliversOnMainQueue = false
  @exclusivity(unchecked) var isDeliveryScheduled = false

  /// Creates a context of a container, loading the store's objects.
  ///
  /// - Throws: The store's error when it cannot be read, or
  ///   ``ObjectGraphError/Code/corruptStore`` when its objects do not fit the schema.
  public convenience init(_ container: ObjectContainer) throws {
    try self.init(coordinator: container.coordinator, contents: container.coordinator.store.load())
  }

  init(coordinator: StoreCoordinator, contents: consuming StoreContents) throws {
    self.coordinator = coordinator
    for (index, model) in coordinator.models.enumerated() {
      let table = EntityTable(model: model, entityIndex: index)
      tables.append(table)
      tablesByModel[ObjectIdentifier(model)] = table
    }
    try materialize(contents)
  }

  deinit {
    // Everything else lets go of the objects first, so that the identity map holds the
    // last reference to each (inserted objects are registered too). Each is then detached,
    // its parent/child reference cycles broken, and freed in one pass in the order the
    // objects were made, touching each object's memory once and in order: freed from an
    // index instead, they went in hash order, at random (3 times slower at 100,000).
    for table in tables { table.removeAll() }
    inserted.removeAll()
    updated.removeAll()
    deleted.removeAll()
    pending = PendingChanges()
    registered.removeAll { $0.detachFromContext(clearingRelationships: true) }
  }

  // MARK: Inspecting

  /// The schema of the context's container.
  public var schema: Schema { coordinator.schema }

  /// Whether anything was inserted, changed or deleted since the last save.
  public var hasChanges: Bool { !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty }

  /// Objects inserted since the last save, in insertion order.
  public var insertedObjects: [ManagedObject] { sortedByID(inserted.objects) }

  /// Saved objects with changed properties since the last save (not deleted ones).
  public var updatedObjects: [ManagedObject] {
    sortedByID(updated.objects.filter { $0.lifecycle == .persisted })
  }

  /// Saved objects deleted since the last save.
  public var deletedObjects: [ManagedObject] { sortedByID(deleted.objects) }

  /// Every object the context holds, saved or not, excluding deleted ones.
  public var registeredObjects: [ManagedObject] {
    sortedByID(registered.values.filter { !$0.isDeleted })
  }

  /// The registered object with an identifier, if the context holds it (deleted ones too).
  public func object(with id: ObjectID) -> ManagedObject? { registered[id] }

  /// The names of the properties of `object` changed since the last save, with their
  /// current values; empty for an unchanged object. For an inserted object, every property.
  ///
  /// Relationship values are given as object identifiers.
  public func changedValues(of object: ManagedObject) -> [String: PersistentValue] {
    let properties = object.model.properties
    if object.lifecycle == .inserted {
      return Dictionary(
        uniqueKeysWithValues: properties.map { ($0.name, persistentValue(object.slots[$0.index])) })
    }
    guard let changes = object.changes else { return [:] }
    return Dictionary(
      uniqueKeysWithValues: changes.committed.keys.map {
        (properties[$0].name, persistentValue(object.slots[$0]))
      })
  }

  /// The values that the changed properties of `object` held at the last save.
  public func committedValues(of object: ManagedObject) -> [String: PersistentValue] {
    guard let changes = object.changes else { return [:] }
    let properties = object.model.properties
    return Dictionary(
      uniqueKeysWithValues: changes.committed.map {
        (properties[$0.key].name, persistentValue($0.value))
      })
  }

  // MARK: Inserting

  /// Inserts an object and every object it reaches through relationships.
  ///
  /// Inserting an object already in this context does nothing. Objects reached through
  /// relationships that are already in this context stay as they are.
  ///
  /// - Precondition: The object's class is in the container's schema, and neither it nor any
  ///   object it reaches belongs to another context.
  /// - Complexity: O(*k*) in the number of newly inserted objects and their relationships.
  public func insert(_ object: ManagedObject) {
    // Starts with an empty list, which allocates nothing: a new object related only to
    // objects already here (a child given a saved parent) costs no array.
    var pending: [ManagedObject] = []
    var next: ManagedObject? = object
    while let current = next ?? pending.popLast() {
      next = nil
      if current.isTracked(by: self) { continue }
      precondition(
        current.trackingReference == nil, "ObjectGraph: \(current) belongs to another context")
      register(current)
      for property in current.model.relationshipIndices {
        switch current.slots[property] {
        case .toOne(let related?) where !related.isTracked(by: self):
          pending.append(related)
        case .toMany(let list):
          for related in list where !related.isTracked(by: self) { pending.append(related) }
        default:
          break
        }
      }
    }
  }

  private func register(_ object: ManagedObject) {
    let table = self.table(for: object.model)
    object.resolveDeferredValues()
    if reservedNumbers.isEmpty { reservedNumbers = coordinator.reserveObjectNumbers(1024) }
    let id = ObjectID(rawValue: reservedNumbers.popFirst()!)
    object.storedObjectID = id
    object.trackingContext = self
    object.lifecycle = .inserted
    let isNew = registered.insert(object, for: id)
    assert(isNew, "a reserved object number was handed out twice")
    inserted.insert(object)
    noteWillTouch(object)
    pending.noteInsert(object)
    table.add(object)
  }

  /// Removes an object from the identity map.
  func unregister(_ object: ManagedObject) {
    if let id = object.storedObjectID { registered[id] = nil }
  }

  /// Seats an object read for the first time in the current shared Observation registrar.
  func seatForObservation(_ object: ManagedObject) {
    if observationGroup == nil || observationSeatsTaken == ObservationBox.capacity {
      observationGroup = ObservationBox()
      observationSeatsTaken = 0
    }
    object.observation = observationGroup
    object.observationSeat = UInt8(truncatingIfNeeded: observationSeatsTaken)
    observationSeatsTaken += 1
  }

  // MARK: Tables

  /// The table of a model. Called on every change, so a schema of a few entities is
  /// searched by identity, which is faster than hashing.
  func table(for model: EntityModel) -> EntityTable {
    if tables.count <= 8 {
      for table in tables where table.model === model { return table }
    }
    guard let table = tablesByModel[ObjectIdentifier(model)] else {
      preconditionFailure(
        "ObjectGraph: \(model.name) is not a model of this context's container; list it in "
          + "ObjectContainer(for:)")
    }
    return table
  }

  func table(for type: ManagedObject.Type) throws -> EntityTable {
    // Every fetch names its class: with a few entities, comparing classes beats the
    // registry's lock and two hash lookups (a tenth of a fetch by id).
    if tables.count <= 8 {
      for table in tables where table.model.type == type { return table }
    }
    let model = ModelRegistry.model(for: type)
    guard let table = tablesByModel[ObjectIdentifier(model)] else {
      throw ObjectGraphError(
        .unknownEntity, "\(model.name) is not a model of this context's container",
        entity: model.name)
    }
    return table
  }

  // MARK: Change tracking

  /// Called by ``ManagedObject/writeSlot(_:_:edit:)`` before a registered object's property
  /// changes: records the committed value and the list edit.
  func objectWillChange(
    _ object: ManagedObject, property: Int, from old: Slot, edit: ListEditRecord?
  ) {
    if object.lifecycle == .inserted || object.lifecycle == .persisted {
      noteChange(of: object, property: property)
    }
    if object.model.isIndexed[property] { table(for: object.model).finishPendingBuild() }
    switch object.lifecycle {
    case .persisted, .deleted:
      let changes: ObjectChanges
      if let existing = object.changes {
        changes = existing
      } else {
        changes = ObjectChanges()
        object.changes = changes
        updated.insert(object)
      }
      let isToMany: Bool
      if case .toMany = old { isToMany = true } else { isToMany = false }
      changes.record(property, from: old, edit: edit, isToMany: isToMany)
    case .inserted, .detached:
      break
    }
  }

  /// Notes for the next delivery that a property of an inserted or saved object changes.
  func noteChange(of object: ManagedObject, property: Int) {
    noteWillTouch(object)
    pending.noteUpdate(object, property: property)
  }

  /// Called after a registered object's property changed: keeps the indexes current.
  func objectDidChange(_ object: ManagedObject, property: Int, from old: Slot, to new: Slot) {
    guard object.lifecycle != .deleted else { return }
    table(for: object.model).update(object, property, from: old, to: new)
  }

  // MARK: Loading

  /// Makes the stored objects. Each object's run of decoded values becomes its slots in
  /// place, in the memory the store decoded them into (``SlotSlab``): no copy, no retain.
  /// Each object is made with ``ModelBuildState/prepare(_:count:in:model:)``; its
  /// relationships, whose stored identifiers wait in their slots, are linked once every
  /// object exists, then it is indexed.
  private func materialize(_ contents: consuming StoreContents) throws {
    // Taken out, not copied: the values are taken from a buffer no one else holds.
    var objects = contents.list.takePacked()
    let nextObjectNumber = contents.nextObjectNumber
    let state = ModelBuildState.current
    // Unretained: `registered` holds every loaded object.
    var loaded: [Unmanaged<ManagedObject>] = []
    loaded.reserveCapacity(objects.liveCount)
    registered.reserve(upTo: nextObjectNumber, expectedCount: objects.liveCount)
    var counts = [Int](repeating: 0, count: tables.count)
    for position in 0..<objects.positionCount where objects.isLive(position) {
      let entity = Int(objects.entities[position])
      if counts.indices.contains(entity) { counts[entity] += 1 }
    }
    for (table, count) in zip(tables, counts) {
      table.reserveCapacity(count)
      table.deferAttributeIndexes()
    }
    let ids = objects.ids
    let entities = objects.entities
    let starts = objects.starts
    let (values, valueCount, deferredStrings) = objects.takeValues()
    let slab = SlotSlab(adopting: values)
    slab.keep(deferredStrings.storages)
    // Values from here on are still values (the runs before are slots or removed objects'
    // `.null`s); what a failure leaves of them is destroyed before the slab frees the memory.
    var firstValueLeft = 0
    do {
      // The model of the entity of the object before, kept while the entity repeats:
      // looking it up for each object costs retains and releases of shared objects.
      var lastEntity = -1
      var model = EntityModel.describing
      var objectType: ManagedObject.Type = ManagedObject.self
      var propertyCount = 0
      var isIndexed: [Bool] = []
      // Strings left as bytes, met in the order of their values' positions (those of
      // removed objects and replaced values are passed over).
      var strings = deferredStrings.makeCursor()
      try state.run(.materialize, model: nil) {
        for position in ids.indices where entities[position] != PackedObjects.removed {
          let id = ids[position]
          let entity = Int(entities[position])
          if entity != lastEntity {
            guard tables.indices.contains(entity) else {
              throw ObjectGraphError(
                .corruptStore, "stored object \(id) has unknown entity \(entity)", objectID: id)
            }
            lastEntity = entity
            model = tables[entity].model
            objectType = model.type
            propertyCount = model.properties.count
            isIndexed = model.isIndexed
          }
          let range = PackedObjects.valueRange(position, starts: starts, valueCount: valueCount)
          let count = range.count
          guard count == propertyCount else {
            throw ObjectGraphError(
              .corruptStore,
              "stored object \(id) of \(model.name) has \(count) values "
                + "for \(model.properties.count) properties", entity: model.name, objectID: id)
          }
          strings.skip(to: range.lowerBound)
          // The run's memory becomes the object's slots, a value at a time: each moves out
          // and a slot takes its place. Attribute slots take their values; relationship
          // slots hold their stored identifiers until they are linked, once every object
          // exists.
          let run = values + range.lowerBound
          for index in 0..<count {
            let value = (run + index).move()
            let slot = SlotSlab.slot(replacing: run + index)
            // An entry stands for its value only while that is the `.null` placeholder: a
            // value replaced since is the value.
            if let string = strings.take(at: range.lowerBound + index), case .null = value {
              // Indexed attributes are indexed on another thread: no slot of theirs may
              // change when first read, so their strings are decoded now.
              if isIndexed[index] {
                slot.initialize(to: .value(.string(string.value)))
              } else {
                slot.initialize(to: .deferred(.storedString(consume string)))
              }
            } else {
              slot.initialize(to: .value(value))
            }
          }
          firstValueLeft = range.upperBound
          let slots = SlotSlab.slots(of: run, count: count)
          state.prepare(slots, count: count, in: slab, model: model)
          let object = objectType.init()
          object.storedObjectID = id
          object.lifecycle = .persisted
          object.trackingContext = self
          loaded.append(Unmanaged.passUnretained(object))
          // Moved into the identity map, which keeps it: no retain and release here.
          guard registered.insert(consume object, for: id) else {
            throw ObjectGraphError(
              .corruptStore, "stored object \(id) appears twice", entity: model.name,
              objectID: id)
          }
        }
      }
    } catch {
      (values + firstValueLeft).deinitialize(count: valueCount - firstValueLeft)
      throw error
    }
    // What is left of the values are removed objects' `.null`s, which need no destruction.
    // Every object exists: link the relationships, replacing each stored identifier or list
    // of them in its slot, then index the object.
    // Unretained, like the objects: the context keeps its tables, the tables their models.
    var next = 0
    var lastEntity = -1
    var model = EntityModel.describing
    var table: Unmanaged<EntityTable>?
    var relationships: [LinkedRelationship] = []
    for position in ids.indices where entities[position] != PackedObjects.removed {
      let object = loaded[next]
      next += 1
      let entity = Int(entities[position])
      if entity != lastEntity {
        lastEntity = entity
        table = Unmanaged.passUnretained(tables[entity])
        model = tables[entity].model
        relationships = zip(model.relationshipIndices, model.relationshipModels).map {
          LinkedRelationship(index: $0, model: $1)
        }
      }
      let slots = object._withUnsafeGuaranteedRef { $0.slots }
      for number in 0..<relationships.count {
        let relationship = relationships[number]
        try link(slots + relationship.index, relationship, of: model, id: ids[position])
      }
      table!._withUnsafeGuaranteedRef { table in
        object._withUnsafeGuaranteedRef { table.add($0) }
      }
    }
    for table in tables { table.startBuildingAttributeIndexes() }
  }

  /// What linking needs of a relationship, read once per entity: reading a
  /// ``RelationshipModel`` (a class) for every object retained and released it.
  private struct LinkedRelationship {
    var index: Int
    var isToMany: Bool
    var destination: Unmanaged<EntityModel>
    var destinationType: ManagedObject.Type

    init(index: Int, model: RelationshipModel) {
      self.index = index
      isToMany = model.isToMany
      destination = Unmanaged.passUnretained(model.destination)
      destinationType = model.destinationType
    }
  }

  /// Links a loaded object's relationship: its slot holds the stored identifier or list of
  /// them, and gets the objects (an empty relationship while it is linked, and if that
  /// fails). The stored list is freed here, while it is in the cache.
  private func link(
    _ slot: UnsafeMutablePointer<Slot>, _ relationship: LinkedRelationship,
    of model: EntityModel, id: ObjectID
  ) throws {
    guard case .value(let stored) = slot.move() else {
      preconditionFailure("ObjectGraph: a loaded relationship slot holds no stored value")
    }
    slot.initialize(to: relationship.isToMany ? .toMany([]) : .toOne(nil))
    slot.pointee = try linkedSlot(stored, relationship, of: model, id: id)
  }

  /// The slot of a loaded object's relationship, from its stored value.
  private func linkedSlot(
    _ value: PersistentValue, _ relationship: LinkedRelationship, of model: EntityModel,
    id: ObjectID
  ) throws -> Slot {
    let index = relationship.index
    func resolve(_ target: ObjectID) throws -> ManagedObject {
      // The model comparison answers for all but objects of a subclass entity.
      guard let object = registered[target],
        Unmanaged.passUnretained(object.model).toOpaque() == relationship.destination.toOpaque()
          || object.isKind(of: relationship.destinationType)
      else {
        let name = model.properties[index].name
        throw ObjectGraphError(
          .corruptStore,
          "stored object \(id) of \(model.name) refers through \(name) to \(target), "
            + "which is not a stored \(relationship.destination.takeUnretainedValue().name)",
          entity: model.name,
          property: name, objectID: id)
      }
      return object
    }
    switch value {
    case .null:
      return relationship.isToMany ? .toMany([]) : .toOne(nil)
    case .reference(let target) where !relationship.isToMany:
      return .toOne(try resolve(target))
    case .references(let targets) where relationship.isToMany:
      if targets.isEmpty { return .toMany([]) }
      // Written in place: `append` was two calls an element, the array's generic code.
      return .toMany(
        try [ManagedObject](unsafeUninitializedCapacity: targets.count) { objects, count in
          for target in targets {
            (objects.baseAddress! + count).initialize(to: try resolve(target))
            count += 1
          }
        })
    default:
      let name = model.properties[index].name
      throw ObjectGraphError(
        .corruptStore, "stored object \(id) of \(model.name) holds \(value) in \(name)",
        entity: model.name, property: name, objectID: id)
    }
  }

  // MARK: Helpers

  func persistentValue(_ slot: Slot) -> PersistentValue {
    switch slot {
    case .value(let value): value
    case .deferred(let pending): pending.make()
    case .toOne(let object): object?.storedObjectID.map { .reference($0) } ?? .null
    case .toMany(let objects): .references(Self.identifiers(of: objects))
    }
  }

  /// The identifiers of the objects that have one, in order, in an array allocated once.
  private static func identifiers(of objects: [ManagedObject]) -> [ObjectID] {
    // Reserving room in an empty array costs a trip through the runtime even for none.
    if objects.isEmpty { return [] }
    var identifiers: [ObjectID] = []
    identifiers.reserveCapacity(objects.count)
    for object in objects {
      if let identifier = object.storedObjectID { identifiers.append(identifier) }
    }
    return identifiers
  }

  /// Objects in ``ObjectID`` order (unnumbered ones first).
  ///
  /// - Complexity: O(*n*) when already in order, O(*n* log *n*) otherwise, comparing plain
  ///   numbers read once per object (reading a class's property inside the comparator would
  ///   cost an exclusivity check per compare). Closures, not key paths: in a generic context
  ///   a key path is instantiated at run time on every call.
  func sortedByID<S: Sequence<ManagedObject>>(_ objects: S) -> [ManagedObject] {
    // An array shares its storage here; sets in insertion order are usually sorted already.
    let array = Array(objects)
    var previous: UInt64 = 0
    var isSorted = true
    for object in array {
      let key = object.storedObjectID?.rawValue ?? 0
      if key < previous {
        isSorted = false
        break
      }
      previous = key
    }
    if isSorted { return array }
    var keyed: [(key: UInt64, object: ManagedObject)] = array.map {
      (key: $0.storedObjectID?.rawValue ?? 0, object: $0)
    }
    keyed.sort { $0.key < $1.key }
    return keyed.map { $0.object }
  }

}

extension ManagedObject {
  /// Takes the object out of its context (rollback of an insert, save of a delete, the
  /// context going away).
  final func detachFromContext(clearingRelationships: Bool) {
    trackingContext = nil
    changes = nil
    lifecycle = .detached
    guard clearingRelationships else { return }
    for index in model.relationshipIndices {
      if case .toMany(let objects) = slots[index], objects.isEmpty { continue }
      if case .toOne(nil) = slots[index] { continue }
      notifyObservers(of: index) { slots[index] = slots[index].emptied }
    }
  }
}

extension Slot {
  /// The empty value of a relationship slot.
  var emptied: Slot {
    switch self {
    case .value, .deferred: self
    case .toOne: .toOne(nil)
    case .toMany: .toMany([])
    }
  }
}
