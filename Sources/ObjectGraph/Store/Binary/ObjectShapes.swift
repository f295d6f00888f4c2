/// What an open ``BinaryStore`` remembers about its live objects between saves: which exist,
/// of which entity, and how long each ordered list is. That is enough to refuse a changeset
/// that does not fit (an update or delete of an unknown object, an insert of a known one, a
/// list edit out of range) before anything is written, for about 30 bytes an object instead
/// of a copy of every value; the values themselves live in the file (and in the contexts).
///
/// The rules are those of ``ChangesetApplier``, applied to shapes instead of snapshots, all or
/// nothing: a refused changeset leaves the shapes as they were, and ``revert(_:)`` undoes an
/// applied one whose write failed.
struct ObjectShapes {
  /// A to-many property of one object.
  struct ListKey: Hashable {
    var id: ObjectID
    var property: Int32
  }

  /// What ``revert(_:)`` needs to undo one applied changeset.
  struct Undo {
    fileprivate var entities: [(ObjectID, Int32?)] = []
    fileprivate var lengths: [(ListKey, Int32?)] = []
    fileprivate var nextObjectNumber: UInt64
  }

  private let schema: Schema
  /// For each entity, its to-many properties.
  private let listProperties: [[Int]]
  /// The entity of each live object.
  private var entities: [ObjectID: Int32] = [:]
  /// The length of each non-empty ordered list.
  private var lengths: [ListKey: Int32] = [:]
  /// The largest next object number recorded.
  private(set) var nextObjectNumber: UInt64 = 1
  /// Encoded bytes of the whole objects seen, to estimate the size of a compacted file.
  private var sampledObjectBytes = 0
  private var sampledObjectCount = 0

  /// The shapes of `contents`.
  ///
  /// - Complexity: O(*n*) in the objects and their values.
  init(schema: Schema, contents: StoreContents = StoreContents(objects: [], nextObjectNumber: 1)) {
    self.schema = schema
    listProperties = schema.entities.map { entity in
      entity.properties.indices.filter { entity.properties[$0].relationship?.isToMany == true }
    }
    nextObjectNumber = contents.nextObjectNumber
    entities.reserveCapacity(contents.objects.count)
    for object in contents.objects {
      entities[object.id] = Int32(object.entity)
      for property in listProperties[object.entity] {
        let count = Self.listCount(object.values[property])
        if count > 0 { lengths[ListKey(id: object.id, property: Int32(property))] = Int32(count) }
      }
    }
  }

  /// The number of live objects.
  var count: Int { entities.count }

  /// Whether no object is live.
  var isEmpty: Bool { entities.isEmpty }

  /// The estimated size of all live objects in a snapshot record.
  var estimatedObjectBytes: Int {
    guard sampledObjectCount > 0 else { return 0 }
    return Int(Double(sampledObjectBytes) / Double(sampledObjectCount) * Double(entities.count))
  }

  /// Records how many bytes `count` whole objects took when encoded.
  mutating func sampleObjectSize(bytes: Int, count: Int) {
    sampledObjectBytes += bytes
    sampledObjectCount += count
  }

  /// Forgets earlier samples and records a compacted snapshot's object sizes.
  mutating func resetObjectSizeSample(bytes: Int, count: Int) {
    sampledObjectBytes = bytes
    sampledObjectCount = count
  }

  /// Checks a changeset against the live objects and, if it fits, applies it.
  ///
  /// - Returns: What ``revert(_:)`` needs to undo it.
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` saying what does not fit; the shapes
  ///   are then unchanged.
  /// - Complexity: O(*k*) in the size of the changeset.
  mutating func apply(_ changeset: Changeset) throws -> Undo {
    if changeset.updated.isEmpty, changeset.deleted.isEmpty {
      return try insert(changeset)
    }
    // Work on the touched objects only, then write them back.
    var newEntities: [ObjectID: Int32?] = [:]
    var newLengths: [ListKey: Int32] = [:]
    func entity(of id: ObjectID) -> Int32? {
      if let changed = newEntities[id] { return changed }
      return entities[id]
    }
    func length(_ key: ListKey) -> Int32 { newLengths[key] ?? lengths[key] ?? 0 }

    for object in changeset.inserted {
      try ChangesetApplier(schema: schema).check(object)
      guard entity(of: object.id) == nil else {
        throw ObjectGraphError(
          .corruptStore, "object \(object.id) is inserted twice", objectID: object.id)
      }
      newEntities[object.id] = Int32(object.entity)
      for property in listProperties[object.entity] {
        newLengths[ListKey(id: object.id, property: Int32(property))] = Int32(
          Self.listCount(object.values[property]))
      }
    }
    for update in changeset.updated {
      guard let entityIndex = entity(of: update.id).map(Int.init) else {
        throw ObjectGraphError(
          .corruptStore, "updated object \(update.id) does not exist", objectID: update.id)
      }
      let description = schema.entities[entityIndex]
      for change in update.changes {
        guard description.properties.indices.contains(change.property) else {
          throw ObjectGraphError(
            .corruptStore,
            "object \(update.id) of \(description.name) has no property \(change.property)",
            entity: description.name, objectID: update.id)
        }
        let property = description.properties[change.property]
        let isList = property.relationship?.isToMany == true
        let key = ListKey(id: update.id, property: Int32(change.property))
        switch change.kind {
        case .set(let value):
          if isList { newLengths[key] = Int32(Self.listCount(value)) }
        case .edit(let edits):
          guard isList else {
            throw ObjectGraphError(
              .corruptStore,
              "list edits on \(description.name).\(property.name), which is not a to-many "
                + "relationship", entity: description.name, property: property.name,
              objectID: update.id)
          }
          newLengths[key] = Int32(try edits.reduce(Int(length(key))) { try $1.count(after: $0) })
        }
      }
    }
    var deleted = Set<ObjectID>()
    for id in changeset.deleted {
      guard let entityIndex = entity(of: id), deleted.insert(id).inserted else {
        throw ObjectGraphError(.corruptStore, "deleted object \(id) does not exist", objectID: id)
      }
      newEntities[id] = .some(nil)
      for property in listProperties[Int(entityIndex)] {
        newLengths[ListKey(id: id, property: Int32(property))] = 0
      }
    }

    var undo = Undo(nextObjectNumber: nextObjectNumber)
    undo.entities.reserveCapacity(newEntities.count)
    for (id, entity) in newEntities {
      undo.entities.append((id, entities[id]))
      entities[id] = entity
    }
    for (key, length) in newLengths {
      undo.lengths.append((key, lengths[key]))
      lengths[key] = length > 0 ? length : nil
    }
    nextObjectNumber = max(nextObjectNumber, changeset.nextObjectNumber)
    return undo
  }

  /// Applies a changeset that only inserts (the first save of a new graph): checked against
  /// the live objects and itself, then written straight in.
  private mutating func insert(_ changeset: Changeset) throws -> Undo {
    var seen = Set<ObjectID>(minimumCapacity: changeset.inserted.count)
    for object in changeset.inserted {
      try ChangesetApplier(schema: schema).check(object)
      guard entities[object.id] == nil, seen.insert(object.id).inserted else {
        throw ObjectGraphError(
          .corruptStore, "object \(object.id) is inserted twice", objectID: object.id)
      }
    }
    var undo = Undo(nextObjectNumber: nextObjectNumber)
    undo.entities.reserveCapacity(changeset.inserted.count)
    entities.reserveCapacity(entities.count + changeset.inserted.count)
    for object in changeset.inserted {
      entities[object.id] = Int32(object.entity)
      undo.entities.append((object.id, nil))
      for property in listProperties[object.entity] {
        let count = Self.listCount(object.values[property])
        guard count > 0 else { continue }
        let key = ListKey(id: object.id, property: Int32(property))
        lengths[key] = Int32(count)
        undo.lengths.append((key, nil))
      }
    }
    nextObjectNumber = max(nextObjectNumber, changeset.nextObjectNumber)
    return undo
  }

  /// Undoes the changeset applied last.
  ///
  /// - Complexity: O(*k*) in the size of the changeset.
  mutating func revert(_ undo: Undo) {
    for (id, entity) in undo.entities { entities[id] = entity }
    for (key, length) in undo.lengths { lengths[key] = length }
    nextObjectNumber = undo.nextObjectNumber
  }

  private static func listCount(_ value: PersistentValue) -> Int {
    if case .references(let ids) = value { return ids.count }
    return 0
  }
}
