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
    // Packed new objects that no update names are checked and stored whole, with no
    // snapshot or dictionary entry per object (a replayed import of 100,000 objects made
    // both); others go through snapshots.
    let whole = try insertedWhole(changeset, into: objects)
    // Made only for inserts: most replayed saves have none, and making a dictionary for
    // each cost more than applying it.
    var changed: [ObjectID: ObjectSnapshot] = [:]
    // The inserted objects in the changeset's order, so storage that keeps an order (a
    // replayed file) gets them in the order they were saved, not hash order.
    var order: [ObjectID] = []
    if whole == nil && !changeset.insertedObjects.isEmpty {
      changed.reserveCapacity(changeset.insertedObjects.count)
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
    }
    // Stored objects change a value at a time: an update of one property of one object
    // neither makes nor rewrites the object's whole snapshot.
    var values = PendingValues()
    for update in changeset.updated {
      if var snapshot = changed[update.id] {
        for change in update.changes {
          let entity = schema.entities[snapshot.entity]
          try checkProperty(
            change.property, of: update.id, entity, valueCount: snapshot.values.count)
          snapshot.values[change.property] = try applied(
            change, to: snapshot.values[change.property], of: update.id, entity)
        }
        changed[update.id] = snapshot
        continue
      }
      guard let shape = objects.shape(of: update.id) else {
        throw ObjectGraphError(
          .corruptStore, "updated object \(update.id) does not exist", objectID: update.id)
      }
      let entity = schema.entities[shape.entity]
      for change in update.changes {
        try checkProperty(change.property, of: update.id, entity, valueCount: shape.valueCount)
        let key = StoredProperty(id: update.id, property: change.property)
        switch change.kind {
        case .set(let value):
          // The value before is not needed (nor decoded, for a stored string).
          values.set(value, for: key)
        case .edit(let edits):
          // Checked against the list's length now, applied in place once all fits: a list
          // edit then costs the array's shift, not a copy of the list.
          let length =
            try values.editedLength(of: key)
            ?? listLength(
              values.setValue(of: key).map(\.listCount)
                ?? objects.listCount(of: update.id, property: change.property),
              change.property, of: update.id, entity)
          values.append(
            edits, for: key, length: try edits.reduce(length) { try $1.count(after: $0) })
        }
      }
    }
    try checkDeletes(changeset.deleted) {
      changed[$0] != nil || whole?.contains($0) == true || objects.contains($0)
    }
    if let whole { objects.insert(contentsOf: whole.objects) }
    for id in order { objects[id] = changed.removeValue(forKey: id) }
    for pending in values.inOrder {
      let (id, property) = (pending.key.id, pending.key.property)
      if let value = pending.value {
        var value = value
        if !pending.edits.isEmpty { value.editList(pending.edits) }
        objects.setValue(value, of: id, property: property)
      } else {
        objects.editList(of: id, property: property, pending.edits)
      }
    }
    // In the changeset's order (by id, as saves write them), not the set's hash order:
    // storage laid out by id is then visited in order.
    for id in changeset.deleted { objects[id] = nil }
  }

  /// Checks that every deleted object exists (`exists`) and is deleted once.
  private func checkDeletes(_ deleted: [ObjectID], exists: (ObjectID) -> Bool) throws {
    // Saves list deletes by id: in increasing order, none can repeat, and no set is needed
    // (hashing 10,000 ids was most of replaying a cascade delete).
    var isIncreasing = true
    for (number, id) in deleted.enumerated() {
      if number > 0, deleted[number - 1] >= id { isIncreasing = false }
      guard exists(id) else {
        throw ObjectGraphError(.corruptStore, "deleted object \(id) does not exist", objectID: id)
      }
    }
    guard !isIncreasing else { return }
    var seen = Set<ObjectID>(minimumCapacity: deleted.count)
    for id in deleted where !seen.insert(id).inserted {
      throw ObjectGraphError(.corruptStore, "object \(id) is deleted twice", objectID: id)
    }
  }

  /// A property of a stored object, whose new value an update computes.
  private struct StoredProperty: Hashable {
    var id: ObjectID
    var property: Int
  }

  /// `count`, the length of property `property`'s value, which must be a list.
  private func listLength(
    _ count: Int?, _ property: Int, of id: ObjectID, _ entity: EntityDescription
  ) throws -> Int {
    guard let count else {
      let name = entity.properties[property].name
      throw ObjectGraphError(
        .corruptStore,
        "list edits on \(entity.name).\(name), which is not a to-many relationship",
        entity: entity.name, property: name, objectID: id)
    }
    return count
  }

  /// The new values of stored objects' properties, in the order first set.
  ///
  /// Found by a scan while there are few (a save changes a property or two: making and
  /// hashing a dictionary for each of a thousand replayed saves cost more than applying
  /// them), by a dictionary once there are many.
  private struct PendingValues {
    /// A new value and its property (a struct, not a tuple: an array of tuples looks its
    /// type up at run time each time it is made).
    struct Pending {
      var key: StoredProperty
      /// The value set, or `nil` for the stored value.
      var value: PersistentValue?
      /// List edits to apply after `value`, and the list's length after them.
      var edits: [ListEdit] = []
      var length = 0
    }

    private(set) var inOrder: [Pending] = []
    private var positions: [StoredProperty: Int]?
    private static let scannedCount = 16

    /// The length of list property `key` after its pending edits, if it has any.
    func editedLength(of key: StoredProperty) -> Int? {
      guard let position = position(of: key), !inOrder[position].edits.isEmpty else { return nil }
      return inOrder[position].length
    }

    /// The value set for property `key`, if it has one and no edits after it.
    func setValue(of key: StoredProperty) -> PersistentValue? {
      guard let position = position(of: key), inOrder[position].edits.isEmpty else { return nil }
      return inOrder[position].value
    }

    mutating func set(_ value: PersistentValue, for key: StoredProperty) {
      if let position = position(of: key) {
        inOrder[position].value = value
        inOrder[position].edits = []
        return
      }
      add(Pending(key: key, value: value))
    }

    /// Adds list edits to property `key`, which then has `length` objects.
    mutating func append(_ edits: [ListEdit], for key: StoredProperty, length: Int) {
      if let position = position(of: key) {
        inOrder[position].edits += edits
        inOrder[position].length = length
        return
      }
      add(Pending(key: key, value: nil, edits: edits, length: length))
    }

    private mutating func add(_ pending: Pending) {
      let key = pending.key
      inOrder.append(pending)
      if positions != nil {
        positions![key] = inOrder.count - 1
      } else if inOrder.count > Self.scannedCount {
        positions = Dictionary(
          uniqueKeysWithValues: inOrder.indices.map { (inOrder[$0].key, $0) })
      }
    }

    private func position(of key: StoredProperty) -> Int? {
      if let positions { return positions[key] }
      return inOrder.firstIndex { $0.key == key }
    }
  }

  /// New objects stored whole: packed, none removed, their ids increasing (so none repeats).
  private struct InsertedWhole {
    let objects: PackedObjects

    /// Whether `id` is one of them: a binary search of their ids.
    func contains(_ id: ObjectID) -> Bool {
      let ids = objects.ids
      var (low, high) = (0, ids.count)
      while low < high {
        let middle = (low + high) / 2
        if ids[middle] < id { low = middle + 1 } else { high = middle }
      }
      return low < ids.count && ids[low] == id
    }
  }

  /// The changeset's new objects, checked, when they can be stored whole: packed with no
  /// removed position, in increasing id order, none stored already and none named by an
  /// update of the same changeset; `nil` when they go through snapshots (nothing is changed
  /// either way).
  ///
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` for an object of an unknown entity or
  ///   a wrong number of values, or one stored already.
  private func insertedWhole(_ changeset: Changeset, into objects: some SnapshotStorage)
    throws -> InsertedWhole?
  {
    guard case .packed(let packed) = changeset.insertedObjects.storage, packed.liveCount > 0,
      packed.liveCount == packed.positionCount
    else { return nil }
    for (position, id) in packed.ids.enumerated() {
      if position > 0, packed.ids[position - 1] >= id { return nil }
      try check(
        id, entity: Int(packed.entities[position]), valueCount: packed.valueRange(position).count)
      guard !objects.contains(id) else {
        throw ObjectGraphError(.corruptStore, "object \(id) is inserted twice", objectID: id)
      }
    }
    let whole = InsertedWhole(objects: packed)
    if changeset.updated.contains(where: { whole.contains($0.id) }) { return nil }
    return whole
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

  /// Checks that an object of `entity` with `valueCount` values has property `property`.
  private func checkProperty(
    _ property: Int, of id: ObjectID, _ entity: EntityDescription, valueCount: Int
  ) throws {
    guard property >= 0, property < valueCount else {
      throw ObjectGraphError(
        .corruptStore, "object \(id) of \(entity.name) has no property \(property)",
        entity: entity.name, objectID: id)
    }
  }

  /// The value of a property after a change, from its value before.
  private func applied(
    _ change: PropertyChange, to current: PersistentValue, of id: ObjectID,
    _ entity: EntityDescription
  ) throws -> PersistentValue {
    switch change.kind {
    case .set(let value):
      return value
    case .edit(let edits):
      let name = entity.properties[change.property].name
      var list: [ObjectID]
      switch current {
      case .references(let ids): list = ids
      case .null: list = []
      default:
        throw ObjectGraphError(
          .corruptStore,
          "list edits on \(entity.name).\(name), which is not a to-many relationship",
          entity: entity.name, property: name, objectID: id)
      }
      try list.apply(edits)
      return .references(list)
    }
  }
}
