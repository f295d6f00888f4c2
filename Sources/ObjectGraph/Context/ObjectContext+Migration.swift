extension ObjectContext {
  /// Every object the context holds (saved or inserted, not deleted), with its current
  /// values, packed in identifier order: what a migration stage's context leaves.
  ///
  /// With them, by entity name, the properties the objects changed since the context's last
  /// save (every property of an entity with a new object): a value changed before a save
  /// was checked by that save against every object (``validate()``), so a stage's unique
  /// values changed nowhere else still differ.
  ///
  /// - Complexity: O(*n*) in the objects and their values.
  func migratedContents() -> (contents: StoreContents, changed: [String: Set<Int>]) {
    var objects: [ManagedObject] = []
    objects.reserveCapacity(registered.count)
    var entities: [Int] = []
    entities.reserveCapacity(registered.count)
    let entityCount = (tables.map(\.entityIndex).max() ?? -1) + 1
    var changedByEntity = [ChangedProperties](repeating: ChangedProperties(), count: entityCount)
    for (_, object) in registered.pairs.sorted(by: { $0.0 < $1.0 })
    where object.lifecycle == .inserted || object.lifecycle == .persisted {
      let entity = table(for: object.model).entityIndex
      objects.append(object)
      entities.append(entity)
      if object.lifecycle == .inserted {
        for property in 0..<object.slotCount { changedByEntity[entity].insert(property) }
      } else if let changes = object.changes {
        changes.insertChangedProperties(into: &changedByEntity[entity])
      }
    }
    var changed: [String: Set<Int>] = [:]
    for table in tables where !changedByEntity[table.entityIndex].isEmpty {
      changed[table.model.name] = Set(changedByEntity[table.entityIndex])
    }
    let valueCount = objects.reduce(0) { $0 + $1.slotCount }
    let packed = PackedObjects.filling(objectCapacity: objects.count, valueCapacity: valueCount) {
      (packed: inout PackedObjects.Filler) in
      for (object, entity) in zip(objects, entities) {
        packed.beginObject(id: object.storedObjectID!, entity: entity)
        for index in 0..<object.slotCount {
          packed.appendValue(persistentValue(object.slots[index]))
        }
      }
    }
    let contents = StoreContents(
      list: ObjectList(packed: packed), nextObjectNumber: coordinator.reservedUpTo)
    return (contents, changed)
  }
}
