extension ObjectContext {
  /// Every object the context holds (saved or inserted, not deleted), with its current
  /// values, packed in identifier order: what a migration stage's context leaves.
  ///
  /// With them, by entity name, the properties the objects changed since the context's last
  /// save (every property of an entity with a new object): a value changed before a save
  /// was checked by that save against every object (``validate()``), so a stage's unique
  /// values changed nowhere else still differ.
  ///
  /// The objects are packed in parts on every core (each part reads its own objects' slots
  /// and only the identifiers of the objects they relate to): packing 101,100 boxes on one
  /// thread was a tenth of a custom stage's migration.
  ///
  /// - Complexity: O(*n*) in the objects and their values.
  func migratedContents() -> (contents: StoreContents, changed: [String: Set<Int>]) {
    // Unretained: the identity map holds every object until the context goes.
    var objects: [Unmanaged<ManagedObject>] = []
    objects.reserveCapacity(registered.count)
    var entities: [Int] = []
    entities.reserveCapacity(registered.count)
    /// Per object, the values of the objects before it (the last is the total).
    var valueEnds: [Int] = []
    valueEnds.reserveCapacity(registered.count)
    var valueCount = 0
    for reference in registered.unretainedValuesInNumberOrder() {
      reference._withUnsafeGuaranteedRef { object in
        guard object.lifecycle == .inserted || object.lifecycle == .persisted else { return }
        objects.append(reference)
        entities.append(table(for: object.model).entityIndex)
        valueCount += object.slotCount
        valueEnds.append(valueCount)
      }
    }
    let entityCount = (tables.map(\.entityIndex).max() ?? -1) + 1
    let partCount = Parallel.pieceCount(
      for: objects.count, minimumPerPiece: BinaryFormat.minimumObjectsPerPart)
    let bounds = (0...partCount).map { objects.count * $0 / partCount }
    let capacities = (0..<partCount).map { part in
      let range = bounds[part]..<bounds[part + 1]
      let before = range.lowerBound == 0 ? 0 : valueEnds[range.lowerBound - 1]
      let values = range.isEmpty ? 0 : valueEnds[range.upperBound - 1] - before
      return PackedObjects.PartCapacity(objects: range.count, values: values)
    }
    var changedByPart = [[ChangedProperties]](repeating: [], count: partCount)
    let packed = changedByPart.withUnsafeMutableBufferPointer { changedByPart in
      PackedObjects.filling(parts: capacities) { (part, packed: inout PackedObjects.Filler) in
        var changed = [ChangedProperties](repeating: ChangedProperties(), count: entityCount)
        for position in bounds[part]..<bounds[part + 1] {
          let entity = entities[position]
          objects[position]._withUnsafeGuaranteedRef { object in
            if object.lifecycle == .inserted {
              for property in 0..<object.slotCount { changed[entity].insert(property) }
            } else if let changes = object.changes {
              changes.insertChangedProperties(into: &changed[entity])
            }
            packed.beginObject(id: object.storedObjectID!, entity: entity)
            for index in 0..<object.slotCount {
              packed.appendValue(persistentValue(object.slots[index]))
            }
          }
        }
        changedByPart[part] = changed
      }
    }
    var changed: [String: Set<Int>] = [:]
    for table in tables {
      let properties = changedByPart.flatMap { $0.isEmpty ? [] : Array($0[table.entityIndex]) }
      if !properties.isEmpty { changed[table.model.name] = Set(properties) }
    }
    let contents = StoreContents(
      list: ObjectList(packed: packed), nextObjectNumber: coordinator.reservedUpTo)
    return (contents, changed)
  }
}
