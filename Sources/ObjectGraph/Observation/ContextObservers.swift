import Foundation

/// Something a context delivers its coalesced changes to.
protocol ContextObserver: AnyObject {
  func deliver(
    _ changes: ObjectContextChanges, _ pending: DeliveredChanges, in context: ObjectContext)
}

/// The observers of one context, with stable delivery order (registration order).
struct ContextObservers {
  private var nextID = 0
  private(set) var changeObservers: [(id: Int, observer: any ContextObserver)] = []
  private(set) var saveObservers: [(id: Int, handler: (SaveEvent) -> Void)] = []
  /// Object observers by observed object, so a delivery costs the changed objects, not
  /// every observer.
  private(set) var objectObservers: [ObjectIdentifier: [(id: Int, observer: ObjectObserver)]] =
    [:]
  private var observedObjects: [Int: ObjectIdentifier] = [:]
  /// Relationship observers by observed object, told of each write of the lists they
  /// observe (see ``UnchangedEnds``).
  private var listObservers: [ObjectIdentifier: [RelationshipObserver]] = [:]
  private var observedLists: [Int: ObjectIdentifier] = [:]
  /// Live queries by entity, held weakly: a live query unregisters itself when released.
  private(set) var liveQueries: [ObjectIdentifier: [Int: LiveQueryReference]] = [:]

  mutating func add(_ observer: any ContextObserver) -> Int {
    nextID += 1
    changeObservers.append((nextID, observer))
    return nextID
  }

  mutating func add(_ observer: ObjectObserver) -> Int {
    nextID += 1
    let object = ObjectIdentifier(observer.object)
    objectObservers[object, default: []].append((nextID, observer))
    observedObjects[nextID] = object
    return nextID
  }

  /// The observers of one object.
  func observers(of object: ObjectIdentifier) -> [(id: Int, observer: ObjectObserver)] {
    objectObservers[object] ?? []
  }

  mutating func add(_ observer: RelationshipObserver) -> Int {
    let id = add(observer as any ContextObserver)
    let owner = ObjectIdentifier(observer.owner)
    listObservers[owner, default: []].append(observer)
    observedLists[id] = owner
    return id
  }

  /// Whether anyone observes a relationship: writes of lists must then be told.
  var observesLists: Bool { !listObservers.isEmpty }

  /// Tells the observers of `owner`'s list `property` of a write that left `count` objects:
  /// `edits` made in this order; none for a write of the whole list.
  func noteListWrite(
    of owner: ManagedObject, property: Int, _ edits: some Collection<ListEditRecord>, count: Int
  ) {
    guard let observers = listObservers[ObjectIdentifier(owner)] else { return }
    for observer in observers where observer.property == property {
      observer.noteWrite(edits, count: count)
    }
  }

  mutating func addSaveObserver(_ handler: @escaping (SaveEvent) -> Void) -> Int {
    nextID += 1
    saveObservers.append((nextID, handler))
    return nextID
  }

  mutating func add(_ query: any LiveQueryMaintenance, for model: EntityModel) -> Int {
    nextID += 1
    liveQueries[ObjectIdentifier(model), default: [:]][nextID] = LiveQueryReference(query: query)
    return nextID
  }

  mutating func remove(_ id: Int) {
    if let object = observedObjects.removeValue(forKey: id) {
      objectObservers[object]?.removeAll { $0.id == id }
      if objectObservers[object]?.isEmpty == true { objectObservers[object] = nil }
      return
    }
    if let owner = observedLists.removeValue(forKey: id),
      let observer = changeObservers.first(where: { $0.id == id })?.observer
    {
      listObservers[owner]?.removeAll { $0 === observer }
      if listObservers[owner]?.isEmpty == true { listObservers[owner] = nil }
    }
    changeObservers.removeAll { $0.id == id }
    saveObservers.removeAll { $0.id == id }
    for key in liveQueries.keys {
      liveQueries[key]?[id] = nil
      if liveQueries[key]?.isEmpty == true { liveQueries[key] = nil }
    }
  }

  func contains(_ id: Int) -> Bool {
    observedObjects[id] != nil || changeObservers.contains { $0.id == id }
      || saveObservers.contains { $0.id == id }
  }

  var hasLiveQueries: Bool { !liveQueries.isEmpty }

  /// Whether any observer reads a delivery object by object (``DeliveredChanges``), so
  /// the objects must be marked with the batch.
  var readDeliveriesByObject: Bool {
    !liveQueries.isEmpty || !changeObservers.isEmpty || !objectObservers.isEmpty
  }

  /// The live queries over one entity.
  func liveQueries(of model: EntityModel) -> [any LiveQueryMaintenance] {
    guard let queries = liveQueries[ObjectIdentifier(model)] else { return [] }
    return queries.values.compactMap(\.query)
  }

  var allLiveQueries: [any LiveQueryMaintenance] {
    liveQueries.values.flatMap { $0.sorted { $0.key < $1.key }.compactMap(\.value.query) }
  }
}

struct LiveQueryReference {
  weak var query: (any LiveQueryMaintenance)?
}

/// A closure observer of every delivery.
final class ChangeHandlerObserver: ContextObserver {
  let handler: (ObjectContextChanges) -> Void
  init(_ handler: @escaping (ObjectContextChanges) -> Void) { self.handler = handler }
  func deliver(
    _ changes: ObjectContextChanges, _ pending: DeliveredChanges, in context: ObjectContext
  ) {
    handler(changes)
  }
}

/// Feeds an `AsyncStream`; removes itself once the stream is finished.
final class StreamObserver: ContextObserver {
  let continuation: AsyncStream<ChangeSummary>.Continuation
  var id = 0
  init(_ continuation: AsyncStream<ChangeSummary>.Continuation) { self.continuation = continuation }
  func deliver(
    _ changes: ObjectContextChanges, _ pending: DeliveredChanges, in context: ObjectContext
  ) {
    if case .terminated = continuation.yield(changes.summary) { context.removeObserver(id) }
  }
}

/// Observes chosen properties of one object.
final class ObjectObserver {
  let object: ManagedObject
  let properties: Set<Int>?
  let handler: (ObjectChange) -> Void

  init(object: ManagedObject, properties: Set<Int>?, handler: @escaping (ObjectChange) -> Void) {
    self.object = object
    self.properties = properties
    self.handler = handler
  }

  func deliver(_ pending: DeliveredChanges) {
    if pending.isDeleted(object) {
      handler(ObjectChange(object: object, changedKeys: [], isDeleted: true))
      return
    }
    guard let keys = pending.updatedKeys(of: object) else { return }
    let relevant = keys.filter { properties?.contains($0) ?? true }
    guard !relevant.isEmpty else { return }
    let names = Set(relevant.map { object.model.properties[$0].name })
    handler(ObjectChange(object: object, changedKeys: names, isDeleted: false))
  }
}

/// Observes one ordered to-many relationship of one object.
///
/// Keeps the identities of the list it last delivered (its own array: holding the list's
/// storage instead would make the relationship's next edit copy the whole list). When one
/// edit changed the list since (an app's drag, insert or delete between two deliveries), or
/// one `swapAt`, the change is that edit's (``ListChange/made(by:_:_:updated:)``, O(1)) or
/// that exchange's (``ListChange/made(byExchanging:_:_:_:updated:)``). Otherwise it
/// compares the delivered identities with the list now: the common prefix and suffix, a
/// scan at the speed of reading the arrays, then the differing middle of *m* objects with a
/// hash of each (O(*m* log *m*)); the kept identities change only in that middle. Children
/// whose own properties changed are found from the updated objects of the delivery, checked
/// against the list in O(1) each when its inverse is a to-one, rather than by a scan of the
/// list.
final class RelationshipObserver: ContextObserver {
  let owner: ManagedObject
  let property: Int
  let handler: (ListChange) -> Void
  private var delivered: [ObjectIdentifier]
  /// What the writes since the last delivery left in place.
  private var unchanged = UnchangedEnds()
  /// The edits since the last delivery: none, those of one write of one or two edits, or
  /// more (or a whole-list write).
  private var edits = EditsSinceDelivery.none

  private enum EditsSinceDelivery {
    case none
    case one(ListEditRecord)
    /// `swapAt` writes its exchange as two moves.
    case two(ListEditRecord, ListEditRecord)
    case more
  }

  init(owner: ManagedObject, property: Int, handler: @escaping (ListChange) -> Void) {
    self.owner = owner
    self.property = property
    self.handler = handler
    delivered = owner.slots[property].objects.map(ObjectIdentifier.init)
  }

  /// Notes a write of the list that left `count` objects: `edits` in this order, or none
  /// for a write of the whole list.
  func noteWrite(_ edits: some Collection<ListEditRecord>, count: Int) {
    switch (self.edits, edits.count) {
    case (.none, 1): self.edits = .one(edits.first!)
    case (.none, 2): self.edits = .two(edits.first!, edits.dropFirst().first!)
    default: self.edits = .more
    }
    guard !edits.isEmpty else { return unchanged.noteWholeChange() }
    var length = count
    for edit in edits {
      switch edit {
      case .insert: length -= 1
      case .remove: length += 1
      case .move: break
      }
    }
    for edit in edits {
      switch edit {
      case .insert: length += 1
      case .remove: length -= 1
      case .move: break
      }
      unchanged.note(edit, count: length)
    }
  }

  func deliver(
    _ changes: ObjectContextChanges, _ pending: DeliveredChanges, in context: ObjectContext
  ) {
    let list = owner.isDeleted ? [] : owner.slots[property].objects
    let ownerChanged =
      pending.isInserted(owner) || pending.updatedKeys(of: owner)?.contains(property) == true
    let updatedChildren = self.updatedChildren(of: list, pending)
    guard ownerChanged || !updatedChildren.isEmpty || owner.isDeleted else { return }
    let unchanged = self.unchanged
    let edits = self.edits
    // Writes made by handlers count for the next delivery.
    self.unchanged = UnchangedEnds()
    self.edits = .none
    let made: ListChange?
    switch edits {
    case .one(let edit):
      made = ListChange.made(by: edit, &delivered, list, updated: updatedChildren)
    case .two(.move(let high, let low), .move(let next, let to))
    where next == low + 1 && to == high:
      made = ListChange.made(byExchanging: low, high, &delivered, list, updated: updatedChildren)
    default:
      made = nil
    }
    let change: ListChange
    if let made {
      change = made
      #if DEBUG
        if list.count <= 1_000 {
          var old = delivered
          Self.undo(edits, on: &old)
          assert(
            ListChange.between(&old, list, updated: updatedChildren) == change,
            "the change of the write's edits is not the change between the lists")
        }
      #endif
    } else {
      change = ListChange.between(
        &delivered, list, updated: updatedChildren,
        unchanged: (unchanged.prefix, unchanged.suffix))
    }
    if !change.isEmpty { handler(change) }
  }

  #if DEBUG
    /// Undoes the edits of one write on the identities of the list they made.
    private static func undo(_ edits: EditsSinceDelivery, on list: inout [ObjectIdentifier]) {
      let made: [ListEditRecord]
      switch edits {
      case .one(let edit): made = [edit]
      case .two(let first, let second): made = [first, second]
      case .none, .more: made = []
      }
      for edit in made.reversed() {
        switch edit {
        case .insert(_, let position): list.remove(at: position)
        case .remove(let object, let position): list.insert(ObjectIdentifier(object), at: position)
        case .move(let from, let to): list.moveElement(from: to, to: from)
        }
      }
    }
  #endif

  /// The indexes in `list` of the objects updated in this delivery.
  private func updatedChildren(of list: [ManagedObject], _ pending: DeliveredChanges) -> IndexSet {
    let relationship = owner.model.relationship(property)
    if let relationship, let inverse = relationship.inverse,
      relationship.inverseModel?.isToMany == false, pending.updated.count < list.count
    {
      // Objects of any entity were updated: only the list's own kind has the inverse.
      var updated = IndexSet()
      for child in pending.updated
      where child.isKind(of: relationship.destinationType) && child.slots[inverse].object === owner
      {
        if let position = owner.position(of: child, in: property) { updated.insert(position) }
      }
      return updated
    }
    return IndexSet(list.indices.filter { pending.isUpdated(list[$0]) })
  }
}

/// A change of one observed object.
public struct ObjectChange {
  /// The object.
  public let object: ManagedObject
  /// The names of the observed properties that changed.
  public let changedKeys: Set<String>
  /// Whether the object was deleted.
  public let isDeleted: Bool
}
