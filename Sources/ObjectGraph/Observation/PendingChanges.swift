/// The changes made in a context since the last delivery to its observers, coalesced: an
/// object inserted and deleted before a delivery is in neither list, an inserted object's
/// later edits are part of its insertion, and an updated object's keys accumulate.
struct PendingChanges {
  private(set) var inserted: [ObjectIdentifier: ManagedObject] = [:]
  private(set) var updated: [ObjectIdentifier: ManagedObject] = [:]
  private(set) var updatedKeys: [ObjectIdentifier: Set<Int>] = [:]
  private(set) var deleted: [ObjectIdentifier: ManagedObject] = [:]

  var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

  mutating func noteInsert(_ object: ManagedObject) {
    let id = ObjectIdentifier(object)
    // Deleted and brought back (rollback) before anyone heard of the deletion: no news.
    if !deleted.isEmpty, deleted.removeValue(forKey: id) != nil { return }
    inserted[id] = object
  }

  mutating func noteUpdate(_ object: ManagedObject, property: Int) {
    let id = ObjectIdentifier(object)
    if !inserted.isEmpty, inserted[id] != nil { return }
    if !deleted.isEmpty, deleted[id] != nil { return }
    updated[id] = object
    updatedKeys[id, default: []].insert(property)
  }

  mutating func noteDelete(_ object: ManagedObject) {
    let id = ObjectIdentifier(object)
    if inserted.removeValue(forKey: id) != nil { return }
    updated[id] = nil
    updatedKeys[id] = nil
    deleted[id] = object
  }

  /// Whether an object was inserted, updated or deleted.
  func touches(_ id: ObjectIdentifier) -> Bool {
    inserted[id] != nil || updated[id] != nil || deleted[id] != nil
  }
}
