import Foundation

extension Notification.Name {
  /// Posted by ``ObjectContext/processPendingChanges()`` with the coalesced changes; the
  /// object is the context, the user info holds ``ObjectContext/insertedObjectsKey``,
  /// ``ObjectContext/updatedObjectsKey``, ``ObjectContext/deletedObjectsKey`` (arrays of
  /// objects) and ``ObjectContext/changeSummaryKey`` (a ``ChangeSummary``).
  /// Core Data's `NSManagedObjectContextObjectsDidChange`.
  public static let objectContextObjectsDidChange = Notification.Name(
    "ObjectGraph.ObjectContextObjectsDidChange")
  /// Posted before a context saves. Core Data's `NSManagedObjectContextWillSave`.
  public static let objectContextWillSave = Notification.Name("ObjectGraph.ObjectContextWillSave")
  /// Posted after a context saved; the user info holds ``ObjectContext/changesetKey`` (the
  /// ``Changeset`` the store received). Core Data's `NSManagedObjectContextDidSave`.
  public static let objectContextDidSave = Notification.Name("ObjectGraph.ObjectContextDidSave")
}

extension ObjectContext {
  /// User info key of inserted objects (`[ManagedObject]`).
  public static let insertedObjectsKey = "inserted"
  /// User info key of updated objects (`[ManagedObject]`).
  public static let updatedObjectsKey = "updated"
  /// User info key of deleted objects (`[ManagedObject]`).
  public static let deletedObjectsKey = "deleted"
  /// User info key of the ``ChangeSummary`` of a delivery.
  public static let changeSummaryKey = "summary"
  /// User info key of the saved ``Changeset``.
  public static let changesetKey = "changeset"

  // MARK: Observing

  /// Calls `handler` with every coalesced delivery of changes.
  ///
  /// Changes are gathered and delivered together at ``processPendingChanges()``, which
  /// ``save()``, ``fetch(_:)`` and ``rollback()`` call, and which the main context also runs
  /// once per turn of the main queue. Changes made by a handler arrive in the next delivery.
  ///
  /// - Returns: A token; dropping it stops delivery.
  public func observeChanges(_ handler: @escaping (ObjectContextChanges) -> Void)
    -> ObservationToken
  {
    beginUse()
    defer { endUse() }
    return token(for: observers.add(ChangeHandlerObserver(handler)))
  }

  /// Calls `handler` before and after every save.
  ///
  /// - Returns: A token; dropping it stops delivery.
  public func observeSaves(_ handler: @escaping (SaveEvent) -> Void) -> ObservationToken {
    beginUse()
    defer { endUse() }
    return token(for: observers.addSaveObserver(handler))
  }

  /// The coalesced changes as an asynchronous sequence of ``ChangeSummary`` values.
  ///
  /// The sequence ends when its consumer stops iterating.
  public func changeSummaries() -> AsyncStream<ChangeSummary> {
    beginUse()
    defer { endUse() }
    let (stream, continuation) = AsyncStream<ChangeSummary>.makeStream()
    let observer = StreamObserver(continuation)
    observer.id = observers.add(observer)
    return stream
  }

  /// Calls `handler` when chosen properties of one object change, or when it is deleted.
  ///
  /// ```swift
  /// let token = context.observe(box, keyPaths: [\.title]) { change in print(change.changedKeys) }
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object to observe.
  ///   - keyPaths: The properties to observe; every property when empty.
  /// - Returns: A token; dropping it stops delivery.
  public func observe<T: ManagedObject>(
    _ object: T, keyPaths: [PartialKeyPath<T>] = [], _ handler: @escaping (ObjectChange) -> Void
  ) -> ObservationToken {
    beginUse()
    defer { endUse() }
    let properties =
      keyPaths.isEmpty ? nil : Set(keyPaths.compactMap { object.model.propertyIndex(for: $0) })
    return token(
      for: observers.add(ObjectObserver(object: object, properties: properties, handler: handler)))
  }

  /// Calls `handler` with the difference each time an ordered to-many relationship of one
  /// object changes: objects removed, inserted or moved, and children whose own properties
  /// changed.
  ///
  /// ```swift
  /// let token = context.observe(box, relationship: \.children) { change in
  ///   rows = change.apply(to: rows, takingInsertionsFrom: box.children)
  /// }
  /// ```
  ///
  /// - Returns: A token; dropping it stops delivery.
  public func observe<T: ManagedObject, U: ManagedObject>(
    _ object: T, relationship keyPath: KeyPath<T, [U]>, _ handler: @escaping (ListChange) -> Void
  ) -> ObservationToken {
    beginUse()
    defer { endUse() }
    guard let property = object.model.propertyIndex(for: keyPath) else {
      fatalError(MisuseMessage.observing(keyPath, of: object))
    }
    return token(
      for: observers.add(RelationshipObserver(owner: object, property: property, handler: handler)))
  }

  /// Calls `handler` with the difference each time an ordered to-many relationship declared
  /// in the CloudKit shape (`[T]?`) changes, as for a `[T]` relationship.
  ///
  /// - Returns: A token; dropping it stops delivery.
  public func observe<T: ManagedObject, U: ManagedObject>(
    _ object: T, relationship keyPath: KeyPath<T, [U]?>, _ handler: @escaping (ListChange) -> Void
  ) -> ObservationToken {
    beginUse()
    defer { endUse() }
    guard let property = object.model.propertyIndex(for: keyPath) else {
      fatalError(MisuseMessage.observing(keyPath, of: object))
    }
    return token(
      for: observers.add(RelationshipObserver(owner: object, property: property, handler: handler)))
  }

  /// A query whose results stay current as the context changes.
  ///
  /// - Throws: As ``fetch(_:)``.
  public func liveQuery<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws -> LiveQuery<T> {
    beginUse()
    defer { endUse() }
    return try LiveQuery(context: self, descriptor: descriptor)
  }

  // MARK: Delivering

  /// Merges the saves other contexts of the container made since this context last merged
  /// or saved, then delivers the changes gathered since the last delivery (merged ones
  /// included) to every observer, live query and `NotificationCenter`, as one coalesced
  /// delivery.
  ///
  /// A save that conflicts with this context's unsaved changes waits, with every later one,
  /// until this context saves (which then throws ``ObjectGraphError/Code/conflict``) or
  /// rolls back. Does nothing while a delivery is under way: changes made by observers
  /// arrive in the next delivery.
  ///
  /// ```swift
  /// let background = try container.newContext()
  /// // ... another context saves ...
  /// background.processPendingChanges()   // its objects now show that save
  /// ```
  public func processPendingChanges() {
    beginUse()
    defer { endUse() }
    guard !isDelivering else { return }
    mergeSavedChanges()
    guard !pending.isEmpty else { return }
    isDelivering = true
    defer { isDelivering = false }
    let delivered = pending.take(marking: observers.readDeliveriesByObject)
    for query in observers.allLiveQueries { query.refresh(delivered) }
    var keys: [ObjectID: Set<String>] = [:]
    // One set of names per model and set of properties, shared by the objects that changed
    // alike (a thousand renames make one set, not a thousand).
    var names: [NamesKey: Set<String>] = [:]
    for object in delivered.updated {
      guard let id = object.storedObjectID else { continue }
      let properties = delivered.updatedKeys[ObjectIdentifier(object)] ?? ChangedProperties()
      let model = object.model
      let key = properties.bitsIfNoneBeyond.map {
        NamesKey(model: ObjectIdentifier(model), properties: $0)
      }
      if let key, let known = names[key] {
        keys[id] = known
        continue
      }
      let made = Set(properties.map { model.properties[$0].name })
      if let key { names[key] = made }
      keys[id] = made
    }
    let insertedInOrder = delivered.insertedAreInIDOrder
    let changes = ObjectContextChanges(
      inserted: insertedInOrder ? delivered.inserted : sortedByID(delivered.inserted),
      insertedIDs: insertedInOrder ? delivered.insertedIDs : nil,
      updated: sortedByID(delivered.updated), deleted: sortedByID(delivered.deleted), keys: keys)
    for (id, observer) in observers.changeObservers where observers.contains(id) {
      observer.deliver(changes, delivered, in: self)
    }
    if !observers.objectObservers.isEmpty {
      for object in changes.updated + changes.deleted {
        for (id, observer) in observers.observers(of: ObjectIdentifier(object))
        where observers.contains(id) {
          observer.deliver(delivered)
        }
      }
    }
    let userInfoKeys = UserInfoKeys.shared
    // Room for four times the keys: two `AnyHashable` keys in one bucket cost a dynamic
    // comparison of about 1,900 instructions (hash seeds differ per process, so whether
    // they collide did too).
    var userInfo: [AnyHashable: Any] = Dictionary(minimumCapacity: 16)
    userInfo[userInfoKeys.inserted] = changes.inserted
    userInfo[userInfoKeys.updated] = changes.updated
    userInfo[userInfoKeys.deleted] = changes.deleted
    userInfo[userInfoKeys.summary] = changes.summary
    NotificationCenter.default.post(
      name: .objectContextObjectsDidChange, object: self, userInfo: userInfo)
  }

  /// A model and a set of its first 64 properties, as bits.
  private struct NamesKey: Hashable {
    let model: ObjectIdentifier
    let properties: UInt64
  }

  func notifySaveObservers(_ event: SaveEvent) {
    for (id, handler) in observers.saveObservers where observers.contains(id) { handler(event) }
    switch event {
    case .willSave:
      NotificationCenter.default.post(name: .objectContextWillSave, object: self)
    case .didSave(let changeset):
      NotificationCenter.default.post(
        name: .objectContextDidSave, object: self,
        userInfo: [UserInfoKeys.shared.changeset: changeset])
    }
  }

  // MARK: Bookkeeping

  func register(_ query: any LiveQueryMaintenance, for model: EntityModel) -> Int {
    observers.add(query, for: model)
  }

  func removeObserver(_ id: Int) {
    observers.remove(id)
  }

  private func token(for id: Int) -> ObservationToken {
    ObservationToken { [weak self] in self?.observers.remove(id) }
  }

  /// Notes an insertion, update or deletion for the next delivery; live queries over the
  /// object's entity take it out of their results before it changes.
  func noteWillTouch(_ object: ManagedObject) {
    if observers.hasLiveQueries {
      for query in observers.liveQueries(of: object.model) { query.willTouch(object) }
    }
    if deliversOnMainQueue, !isDeliveryScheduled, !isDormant { scheduleDelivery() }
  }

  /// The main context delivers once per turn of the main queue.
  private func scheduleDelivery() {
    isDeliveryScheduled = true
    let reference = WeakContext(self)
    DispatchQueue.main.async {
      // The main context is used on the main actor only; a released context is skipped.
      guard let context = reference.context else { return }
      context.isDeliveryScheduled = false
      context.processPendingChanges()
    }
  }
}

/// The user info keys as `AnyHashable`, made once: converting a `String` key costs a box
/// per key per notification.
private struct UserInfoKeys: @unchecked Sendable {  // holds only immutable strings
  static let shared = UserInfoKeys()
  let inserted = AnyHashable(ObjectContext.insertedObjectsKey)
  let updated = AnyHashable(ObjectContext.updatedObjectsKey)
  let deleted = AnyHashable(ObjectContext.deletedObjectsKey)
  let summary = AnyHashable(ObjectContext.changeSummaryKey)
  let changeset = AnyHashable(ObjectContext.changesetKey)
}

/// A weak reference to the main context for the main queue's delivery block, so a context
/// waiting for a turn of the main queue (which a command-line tool may never take) can still
/// be released.
private final class WeakContext: @unchecked Sendable {
  weak var context: ObjectContext?
  init(_ context: ObjectContext) { self.context = context }
}
