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
  /// The container of a context made with ``init(_:)``, which keeps it (as a SwiftData
  /// context keeps its container); nil for a main context, which its container owns.
  private let madeFromContainer: ObjectContainer?
  /// The container whose main context this is, held weakly: it owns this context.
  weak var owningContainer: ObjectContainer?
  /// The generation of the store the objects come from (``StoreCoordinator/generation``).
  var storeGeneration: UInt64
  /// This context in the container's ``SaveHistory``, and the version of the last save it
  /// merged or made.
  let historyReference: ContextReference
  let historyMember: Int
  var mergedVersion: UInt64
  /// The version the context's objects were loaded at (or emptied at, by
  /// ``deleteAllData()``).
  var loadedVersion: UInt64 = 0
  /// Whether this is a main context the app has not asked for yet (see ``SaveHistory``).
  var isDormant = false
  /// How a save of another context that changed what this context changed and has not
  /// saved is merged: ``MergePolicy/error`` (the default: this context's save throws
  /// ``ObjectGraphError/Code/conflict``), or a policy that resolves it (Core Data's
  /// `mergePolicy`).
  ///
  /// ```swift
  /// context.mergePolicy = .mergeByPropertyObjectTrump
  /// ```
  public var mergePolicy = MergePolicy.error
  #if DEBUG
    /// Stops the program when two threads use the context at once (debug builds only).
    let useCheck = ContextUseCheck()
  #endif
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
  /// The seats of objects read for the first time, in shared registrars.
  @exclusivity(unchecked) private var observationSeats = ObservationSeats()
  @exclusivity(unchecked) var observers = ContextObservers()
  /// Whether Observation hears of the reads and writes of this context's objects: false for
  /// the contexts of a migration's stages, which no view watches, so that the code of a
  /// stage touching every object pays for no registrar (a lock per write).
  @exclusivity(unchecked) var isObservable = true
  @exclusivity(unchecked) var isDelivering = false
  /// Whether the context delivers its changes once per turn of the main queue.
  @exclusivity(unchecked) var deliversOnMainQueue = false
  @exclusivity(unchecked) var isDeliveryScheduled = false

  /// Creates a context of a container, loading the store's objects.
  ///
  /// - Throws: The store's error when it cannot be read, or
  ///   ``ObjectGraphError/Code/corruptStore`` when its objects do not fit the schema.
  public convenience init(_ container: ObjectContainer) throws {
    let reference = ContextReference()
    let loaded = try container.coordinator.load(joiningAs: reference)
    try self.init(
      coordinator: container.coordinator, contents: loaded.contents,
      storeGeneration: loaded.generation, container: container,
      history: (reference, loaded.member, loaded.version))
  }

  /// Creates a context of `contents`, the store's objects at version `history.version`
  /// (joining the save history as a main context when `history` is nil); `isObservable`
  /// false for a migration stage's (see ``isObservable``).
  init(
    coordinator: StoreCoordinator, contents: consuming StoreContents, storeGeneration: UInt64 = 0,
    container: ObjectContainer? = nil,
    history: (reference: ContextReference, member: Int, version: UInt64)? = nil,
    isObservable: Bool = true
  ) throws {
    self.coordinator = coordinator
    self.isObservable = isObservable  // before the load, which seats observed objects
    self.storeGeneration = storeGeneration
    madeFromContainer = container
    if let history {
      historyReference = history.reference
      historyMember = history.member
      mergedVersion = history.version
    } else {
      historyReference = ContextReference()
      (historyMember, mergedVersion) = coordinator.join(
        mergingOnMainQueue: true, as: historyReference)
      isDormant = true
    }
    defer { historyReference.context = self }
    loadedVersion = mergedVersion
    for (index, model) in coordinator.models.enumerated() {
      let table = EntityTable(model: model, entityIndex: index)
      tables.append(table)
      tablesByModel[ObjectIdentifier(model)] = table
    }
    try materialize(contents)
  }

  /// Whether the context's tables are those of `coordinator`'s models, in its order (those
  /// of a context that ``init(coordinator:adopting:)`` adopts).
  func hasModels(of coordinator: StoreCoordinator) -> Bool {
    self.coordinator.models.count == coordinator.models.count
      && zip(self.coordinator.models, coordinator.models).allSatisfy { $0 === $1 }
  }

  /// Creates the main context of `coordinator` from the objects of `stage`, the context of a
  /// migration's last stage, whose objects are the migrated store's contents: the stage's
  /// changes become the committed state, and its objects, with their tables and indexes,
  /// become this context's, leaving `stage` empty.
  ///
  /// Making the main context again from the migrated values would cost what loading them
  /// costs, and freeing the stage's objects as much again: a custom stage touching each of
  /// 101,100 boxes spent a quarter of its migration doing both.
  ///
  /// - Precondition: `stage` holds objects of `coordinator`'s models, in its order.
  /// - Complexity: O(*n*) in the objects, one pass.
  init(coordinator: StoreCoordinator, adopting stage: ObjectContext) {
    precondition(
      stage.hasModels(of: coordinator),
      "ObjectGraph: a migration stage's context of other models than the container's")
    self.coordinator = coordinator
    storeGeneration = 0
    madeFromContainer = nil
    historyReference = ContextReference()
    (historyMember, mergedVersion) = coordinator.join(
      mergingOnMainQueue: true, as: historyReference)
    isDormant = true
    loadedVersion = mergedVersion
    defer { historyReference.context = self }
    stage.commitWithoutSaving()
    swap(&registered, &stage.registered)
    swap(&tables, &stage.tables)
    swap(&tablesByModel, &stage.tablesByModel)
    // As loaded: saved at no version of their own, touched by no batch of this context.
    let reference = Unmanaged.passUnretained(self)
    registered.forEachValue { object in
      object.trackingReference = reference
      object.savedVersion = 0
      object.pendingFlags = 0
      object.pendingPosition = -1
      object.deliveredFlags = 0
      object.deliveredBatch = 0
    }
  }

  deinit {
    // Everything else lets go of the objects first, so that the identity map holds the
    // last reference to each (inserted objects are registered too). Each is then detached,
    // its parent/child reference cycles broken, and the objects nobody else holds are freed
    // in the order they were made, touching each object's memory in order: freed from an
    // index instead, they went in hash order, at random (3 times slower at 100,000). The
    // objects the app still holds keep their relationships readable (``ReleasedGraph``).
    for table in tables { table.removeAll() }
    inserted.removeAll()
    updated.removeAll()
    deleted.removeAll()
    pending = PendingChanges()
    ReleasedGraph.release(&registered)
    coordinator.leave(historyMember)
  }

  // MARK: Inspecting

  /// Notes, in debug builds, that the calling thread enters a public entry point (see
  /// ``ContextUseCheck``); pair with ``endUse()``. Nothing in release builds.
  @inline(__always)
  func beginUse() {
    #if DEBUG
      useCheck.enter(MisuseMessage.name(of: self))
    #endif
  }

  @inline(__always)
  func endUse() {
    #if DEBUG
      useCheck.leave()
    #endif
  }

  /// The schema of the context's container.
  public var schema: Schema { coordinator.schema }

  /// The container this context belongs to (SwiftData's `ModelContext.container`).
  ///
  /// ```swift
  /// let context = container.mainContext
  /// context.container === container  // true
  /// ```
  ///
  /// A context made with ``init(_:)`` keeps its container alive. The main context is owned
  /// by its container and refers to it weakly, so the two form no cycle; if the app released
  /// the container and kept the main context, this gives a new container object over the
  /// same schema and store, whose ``ObjectContainer/mainContext`` is this context (and the
  /// same object each time while someone holds it).
  ///
  /// - Complexity: O(1).
  public var container: ObjectContainer {
    if let container = madeFromContainer ?? owningContainer { return container }
    return ObjectContainer(coordinator: coordinator, mainContext: self)
  }

  /// Whether anything was inserted, changed or deleted since the last save.
  public var hasChanges: Bool {
    beginUse()
    defer { endUse() }
    return !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty
  }

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

  /// The registered object with an identifier, if the context holds it (deleted ones too),
  /// after merging the saves of other contexts this one missed.
  ///
  /// - Complexity: O(1).
  public func object(with id: ObjectID) -> ManagedObject? {
    beginUse()
    defer { endUse() }
    mergeSavedChanges()
    return registered[id]
  }

  /// The names of the properties of `object` changed since the last save, with their
  /// current values; empty for an unchanged object. For an inserted object, every property.
  ///
  /// Relationship values are given as object identifiers.
  public func changedValues(of object: ManagedObject) -> [String: PersistentValue] {
    beginUse()
    defer { endUse() }
    let properties = object.model.properties
    if object.lifecycle == .inserted {
      return Dictionary(
        uniqueKeysWithValues: properties.map { ($0.name, persistentValue(object.slots[$0.index])) })
    }
    guard let changes = object.changes else { return [:] }
    return Dictionary(
      uniqueKeysWithValues: changes.changedProperties.map {
        (properties[$0].name, persistentValue(object.slots[$0]))
      })
  }

  /// The values that the changed properties of `object` held at the last save.
  public func committedValues(of object: ManagedObject) -> [String: PersistentValue] {
    beginUse()
    defer { endUse() }
    guard let changes = object.changes else { return [:] }
    let properties = object.model.properties
    return Dictionary(
      uniqueKeysWithValues: changes.changedProperties.map {
        let committed = changes.committedValue(of: $0, current: object.slots[$0])
        return (properties[$0].name, persistentValue(committed))
      })
  }

  // MARK: Inserting

  /// Inserts an object and every object it reaches through relationships.
  ///
  /// Inserting an object already in this context does nothing, unless it was deleted in
  /// this context and the deletion is not saved yet: then the deletion is cancelled, as
  /// Core Data's `insert` does, and the object is live again with its values as they are
  /// now. What the delete did to other objects stays done (the objects its cascade deleted
  /// stay deleted until they are inserted again too; relations its nullify rule undid stay
  /// undone), so an app that deletes everything and inserts the same objects again relates
  /// them again, as Apple's sample data reload does. An object whose deletion was saved has
  /// left the context, and inserting it makes it a new object, with a new ``ObjectID``, its
  /// attribute values, and no relations. Objects reached through relationships that are
  /// already in this context stay as they are.
  ///
  /// ```swift
  /// context.delete(box)
  /// context.insert(box)   // not deleted after all
  /// ```
  ///
  /// - Precondition: The object's class is in the container's schema, and neither it nor any
  ///   object it reaches belongs to another context; otherwise the program stops with a
  ///   message naming the object, its class and the contexts (in release builds too).
  /// - Complexity: O(*k*) in the number of newly inserted objects and their relationships.
  public func insert(_ object: ManagedObject) {
    beginUse()
    defer { endUse() }
    // Starts with an empty list, which allocates nothing: a new object related only to
    // objects already here (a child given a saved parent) costs no array.
    var pending: [ManagedObject] = []
    var next: ManagedObject? = object
    while let current = next ?? pending.popLast() {
      next = nil
      // Objects related before any was inserted hold each other from now on.
      if current.isDraft { DraftGraph.release(from: current) }
      if current.isTracked(by: self) {
        if current.lifecycle == .deleted { bringBack(current) }
        continue
      }
      if let owner = current.trackingContext {
        fatalError(
          MisuseMessage.inserting(current, reachedFrom: object, into: self, ownedBy: owner))
      }
      guard let table = listedTable(for: current.model) else {
        fatalError(MisuseMessage.inserting(current, reachedFrom: object, notInSchemaOf: self))
      }
      register(current, in: table)
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

  private func register(_ object: ManagedObject, in table: EntityTable) {
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
  /// Registers an object another context saved (see ``mergeSavedChanges()``); its values
  /// are set next, then it joins its table.
  func adoptStored(_ object: ManagedObject, id: ObjectID) {
    object.storedObjectID = id
    object.trackingContext = self
    object.lifecycle = .persisted
    let isNew = registered.insert(object, for: id)
    assert(isNew, "a merged object is registered already")
  }

  func unregister(_ object: ManagedObject) {
    if let id = object.storedObjectID { registered[id] = nil }
  }

  /// Seats an object read for the first time in the current shared Observation registrar.
  func seatForObservation(_ object: ManagedObject) {
    observationSeats.seat(object)
  }

  // MARK: Tables

  /// The table of a model. Called on every change, so a schema of a few entities is
  /// searched by identity, which is faster than hashing.
  ///
  /// - Precondition: The model is in the container's schema: ``insert(_:)`` lets in no
  ///   object of another.
  func table(for model: EntityModel) -> EntityTable {
    guard let table = listedTable(for: model) else {
      preconditionFailure("ObjectGraph: \(model.name) is not a model of this context's container")
    }
    return table
  }

  /// The table of a model, or nil when the container's schema does not list it.
  @inline(__always)
  private func listedTable(for model: EntityModel) -> EntityTable? {
    if tables.count <= 8 {
      for table in tables where table.model === model { return table }
    }
    return tablesByModel[ObjectIdentifier(model)]
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
      let isToMany: Bool
      if case .toMany = old { isToMany = true } else { isToMany = false }
      if let changes = object.changes {
        changes.record(property, from: old, edit: edit, isToMany: isToMany)
      } else {
        // The first change since the save: made with it (no lookups in empty maps).
        object.changes = ObjectChanges(first: property, from: old, edit: edit, isToMany: isToMany)
        updated.insert(object)
      }
    case .inserted, .detached:
      break
    }
  }

  /// The changes of a saved object, made (and the object counted as updated) at its first
  /// change since the last save.
  @inline(__always)
  func trackedChanges(of object: ManagedObject) -> ObjectChanges {
    if let existing = object.changes { return existing }
    let changes = ObjectChanges()
    object.changes = changes
    updated.insert(object)
    return changes
  }

  /// Records the edits after the first of a list changed by several at once (the first was
  /// recorded by ``objectWillChange(_:property:from:edit:)``).
  func recordFurtherEdits(
    _ edits: ArraySlice<ListEditRecord>, of object: ManagedObject, property: Int
  ) {
    guard object.lifecycle == .persisted || object.lifecycle == .deleted,
      let changes = object.changes
    else { return }
    for edit in edits {
      changes.record(property, from: object.slots[property], edit: edit, isToMany: true)
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

  /// Makes the stored objects, on every core (see ``ObjectLoader``), with background builds
  /// held back meanwhile (``BackgroundWork``), then starts building their attribute indexes
  /// on another thread.
  private func materialize(_ contents: consuming StoreContents) throws {
    // Taken out, not copied: the values are taken from a buffer no one else holds.
    var objects = contents.list.takePacked()
    registered.reserve(upTo: contents.nextObjectNumber, expectedCount: objects.liveCount)
    // Their attribute indexes are built from all of them at once, below.
    for table in tables { table.deferAttributeIndexes() }
    let loader = ObjectLoader(taking: &objects, into: self, tables: tables)
    try BackgroundWork.holdingBack {
      try loader.makeObjects()
      try loader.register(in: &registered)
      try loader.link(resolvingIn: registered)
    }
    loader.addToTables()
  }

  // MARK: Helpers

  func persistentValue(_ slot: Slot) -> PersistentValue {
    switch slot {
    case .value(let value): value
    case .deferred(let pending): pending.make()
    case .toOne(let object): object?.storedObjectID.map { .reference($0) } ?? .null
    case .toMany(let objects): .references(Self.identifiers(of: objects))
    case .released(let link):
      link.isToMany
        ? .references(link.numbers.map { ObjectID(rawValue: $0) })
        : link.numbers.first.map { .reference(ObjectID(rawValue: $0)) } ?? .null
    case .draft, .draftList: preconditionFailure("a draft is in no context")
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
    case .released(let link): link.isToMany ? .toMany([]) : .toOne(nil)
    case .draft, .draftList: preconditionFailure("a draft's relationship is emptied by a write")
    }
  }
}
