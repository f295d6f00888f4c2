/// Applies a ``Changeset`` to a dictionary of snapshots, checking that it fits.
///
/// Shared by every store that keeps (or replays into) snapshots in memory, so the meaning
/// of a changeset is written once. It throws before changing anything it was handed only if
/// the caller passes a copy; ``InMemoryStore`` does exactly that.
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
  ///   property, or edits a list out of range. `objects` may then be partly changed.
  /// - Complexity: O(*k*) in the size of the changeset, plus the cost of each list edit.
  public func apply(_ changeset: Changeset, to objects: inout [ObjectID: ObjectSnapshot])
    throws
  {
    for snapshot in changeset.inserted {
      guard schema.entities.indices.contains(snapshot.entity) else {
        throw ObjectGraphError(
          .corruptStore, "object \(snapshot.id) has unknown entity \(snapshot.entity)",
          objectID: snapshot.id)
      }
      let entity = schema.entities[snapshot.entity]
      guard snapshot.values.count == entity.properties.count else {
        throw ObjectGraphError(
          .corruptStore,
          "object \(snapshot.id) of \(entity.name) has \(snapshot.values.count) values, "
            + "expected \(entity.properties.count)", entity: entity.name, objectID: snapshot.id)
      }
      guard objects[snapshot.id] == nil else {
        throw ObjectGraphError(
          .corruptStore, "object \(snapshot.id) is inserted twice", entity: entity.name,
          objectID: snapshot.id)
      }
      objects[snapshot.id] = snapshot
    }
    for update in changeset.updated {
      guard var snapshot = objects[update.id] else {
        throw ObjectGraphError(
          .corruptStore, "updated object \(update.id) does not exist", objectID: update.id)
      }
      let entity = schema.entities[snapshot.entity]
      for change in update.changes {
        guard snapshot.values.indices.contains(change.property) else {
          throw ObjectGraphError(
            .corruptStore,
            "object \(update.id) of \(entity.name) has no property \(change.property)",
            entity: entity.name, objectID: update.id)
        }
        switch change.kind {
        case .set(let value):
          snapshot.values[change.property] = value
        case .edit(let edits):
          var list: [ObjectID]
          switch snapshot.values[change.property] {
          case .references(let ids): list = ids
          case .null: list = []
          default:
            throw ObjectGraphError(
              .corruptStore,
              "list edits on \(entity.name).\(entity.properties[change.property].name), "
                + "which is not a to-many relationship", entity: entity.name,
              property: entity.properties[change.property].name, objectID: update.id)
          }
          try list.apply(edits)
          snapshot.values[change.property] = .references(list)
        }
      }
      objects[update.id] = snapshot
    }
    for id in changeset.deleted {
      guard objects.removeValue(forKey: id) != nil else {
        throw ObjectGraphError(
          .corruptStore, "deleted object \(id) does not exist", objectID: id)
      }
    }
  }
}
