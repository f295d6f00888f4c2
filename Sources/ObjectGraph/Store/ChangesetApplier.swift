/// Applies a ``Changeset`` to a dictionary of snapshots, all or nothing.
///
/// Shared by every store that keeps (or replays into) snapshots in memory, so the meaning
/// of a changeset is written once. It first checks the whole changeset and computes the new
/// snapshots of the objects it touches, then writes them: a changeset that does not fit
/// changes nothing, and the cost is that of the changeset, not of the store.
public struct ChangesetApplier: Sendable {
  /// The schema the snapshots follow.
  public let schema: Schema

  /// Creates an applier for a schema.
  public init(schema: Schema) {
    self.schema = schema
  }

  /// Applies `changeset` to `objects`.
  ///
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` when the changeset inserts an object
  ///   that exists, updates or deletes one that does not, names an unknown entity or
  ///   property, or edits a list out of range; `objects` is then unchanged.
  /// - Complexity: O(*k*) in the size of the changeset, plus the cost of each list edit.
  public func apply(_ changeset: Changeset, to objects: inout some SnapshotStorage) throws {
    var changed: [ObjectID: ObjectSnapshot] = [:]
    changed.reserveCapacity(changeset.insertedObjects.count + changeset.updated.count)
    // The changed objects in the changeset's order, so storage that keeps an order (a
    // replayed file) gets inserted objects in the order they were saved, not hash order.
    var order: [ObjectID] = []
    order.reserveCapacity(changed.capacity)
    for snapshot in changeset.inserted {
      try check(snapshot)
      guard !objects.contains(snapshot.id), changed[snapshot.id] == nil else {
        throw ObjectGraphError(
          .corruptStore, "object \(snapshot.id) is inserted twice", objectID: snapshot.id)
      }
      changed[snapshot.id] = snapshot
      order.append(snapshot.id)
    }
    for update in changeset.updated {
      guard var snapshot = changed[update.id] ?? objects[update.id] else {
        throw ObjectGraphError(
          .corruptStore, "updated object \(update.id) does not exist", objectID: update.id)
      }
      for change in update.changes { try apply(change, to: &snapshot) }
      if changed.updateValue(snapshot, forKey: update.id) == nil { order.append(update.id) }
    }
    var deleted = Set<ObjectID>()
    deleted.reserveCapacity(changeset.deleted.count)
    for id in changeset.deleted {
      guard changed[id] != nil || objects.contains(id), deleted.insert(id).inserted else {
        throw ObjectGraphError(.corruptStore, "deleted object \(id) does not exist", objectID: id)
      }
    }
    for id in order { objects[id] = changed.removeValue(forKey: id) }
    // In the changeset's order (by id, as saves write them), not the set's hash order:
    // storage laid out by id is then visited in order.
    for id in changeset.deleted { objects[id] = nil }
  }

  /// Checks an inserted object's entity and number of values.
  func check(_ snapshot: ObjectSnapshot) throws {
    try check(snapshot.id, entity: snapshot.entity, valueCount: snapshot.values.count)
  }

  /// Checks that an inserted object's entity exists and that it has a value per property.
  func check(_ id: ObjectID, entity entityIndex: Int, valueCount: Int) throws {
    guard schema.entities.indices.contains(entityIndex) else {
      throw ObjectGraphError(
        .corruptStore, "object \(id) has unknown entity \(entityIndex)", objectID: id)
    }
    let entity = schema.entities[entityIndex]
    guard valueCount == entity.properties.count else {
      throw ObjectGraphError(
        .corruptStore,
        "object \(id) of \(entity.name) has \(valueCount) values, "
          + "expected \(entity.properties.count)", entity: entity.name, objectID: id)
    }
  }

  private func apply(_ change: PropertyChange, to snapshot: inout ObjectSnapshot) throws {
    let entity = schema.entities[snapshot.entity]
    guard snapshot.values.indices.contains(change.property) else {
      throw ObjectGraphError(
        .corruptStore,
        "object \(snapshot.id) of \(entity.name) has no property \(change.property)",
        entity: entity.name, objectID: snapshot.id)
    }
    switch change.kind {
    case .set(let value):
      snapshot.values[change.property] = value
    case .edit(let edits):
      let name = entity.properties[change.property].name
      var list: [ObjectID]
      switch snapshot.values[change.property] {
      case .references(let ids): list = ids
      case .null: list = []
      default:
        throw ObjectGraphError(
          .corruptStore,
          "list edits on \(entity.name).\(name), which is not a to-many relationship",
          entity: entity.name, property: name, objectID: snapshot.id)
      }
      try list.apply(edits)
      snapshot.values[change.property] = .references(list)
    }
  }
}
