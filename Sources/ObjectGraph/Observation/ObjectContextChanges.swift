/// One coalesced delivery of a context's changes: what was inserted, updated (with the keys
/// that changed) and deleted since the previous delivery.
///
/// ```swift
/// let token = context.observeChanges { changes in
///   for object in changes.updated { print(object, changes.changedKeys(of: object)) }
/// }
/// ```
public struct ObjectContextChanges {
  /// Objects inserted since the previous delivery, in ``ObjectID`` order.
  public let inserted: [ManagedObject]
  /// Objects whose properties changed, in ``ObjectID`` order.
  public let updated: [ManagedObject]
  /// Objects deleted, in ``ObjectID`` order.
  public let deleted: [ManagedObject]
  /// The changed keys of each updated object, by identifier: the summary's dictionary too.
  private let keys: [ObjectID: Set<String>]
  /// The identifiers of `inserted`, when known already (read while delivering, so that
  /// 100,000 inserted objects are not visited again for the summary).
  private let insertedIDs: [ObjectID]?

  init(
    inserted: [ManagedObject], insertedIDs: [ObjectID]? = nil, updated: [ManagedObject],
    deleted: [ManagedObject], keys: [ObjectID: Set<String>]
  ) {
    self.inserted = inserted
    self.insertedIDs = insertedIDs
    self.updated = updated
    self.deleted = deleted
    self.keys = keys
  }

  /// The names of the properties of an updated object that changed.
  public func changedKeys(of object: ManagedObject) -> Set<String> {
    object.objectID.flatMap { keys[$0] } ?? []
  }

  /// Whether nothing changed.
  public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

  /// The same changes by identifier, to send to another actor.
  public var summary: ChangeSummary {
    ChangeSummary(
      inserted: insertedIDs ?? inserted.compactMap(\.objectID),
      updated: keys,
      deleted: deleted.compactMap(\.objectID))
  }
}

/// A context's changes by identifier: `Sendable`, for other actors and for `AsyncSequence`.
public struct ChangeSummary: Hashable, Sendable {
  /// Identifiers of inserted objects.
  public var inserted: [ObjectID]
  /// Identifiers of updated objects, with the names of the properties that changed.
  public var updated: [ObjectID: Set<String>]
  /// Identifiers of deleted objects.
  public var deleted: [ObjectID]
}

/// A save, as told to save observers.
public enum SaveEvent {
  /// The context is about to validate and save its pending changes.
  case willSave
  /// The context saved this changeset to its store.
  case didSave(Changeset)
}
