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
    // Unretained: the identity map holds every object until the context goes.
    var objects: [Unmanaged<ManagedObject>] = []
    objects.reserveCapacity(registered.count)
    var entities: [Int] = []
    entities.reserveCapacity(registered.count)
    var valueCount = 0
    let entityCount = (tables.map(\.entityIndex).max() ?? -1) + 1
    var changedByEntity = [ChangedProperties](repeating: ChangedProperties(), count: entityCount)
    for reference in registered.unretainedValuesInNumberOrder() {
      reference._withUnsafeGuaranteedRef { object in
        guard object.lifecycle == .inserted || object.lifecycle == .persisted else { return }
        let entity = table(for: object.model).entityIndex
        objects.append(reference)
        entities.append(entity)
        valueCount += object.slotCount
        if object.lifecycle == .inserted {
          for property in 0..<object.slotCount { changedByEntity[entity].insert(property) }
        } else if let changes = object.changes {
          changes.insertChangedProperties(into: &changedByEntity[entity])
        }
      }
    }
    var changed: [String: Set<Int>] = [:]
    for table in tables where !changedByEntity[table.entityIndex].isEmpty {
      changed[table.model.name] = Set(changedByEntity[table.entityIndex])
    }
    let packed = PackedObjects.filling(objectCapacity: objects.count, valueCapacity: valueCount) {
      (packed: inout PackedObjects.Filler) in
      for (reference, entity) in zip(objects, entities) {
        reference._withUnsafeGuaranteedRef { object in
          packed.beginObject(id: object.storedObjectID!, entity: entity)
          for index in 0..<object.slotCount {
            packed.appendValue(persistentValue(object.slots[index]))
          }
        }
      }
    }
    let contents = StoreContents(
      list: ObjectList(packed: packed), nextObjectNumber: coordinator.reservedUpTo)
    return (contents, changed)
  }
}
