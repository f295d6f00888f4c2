extension ObjectContext {
  /// Every object the context holds (saved or inserted, not deleted), with its current
  /// values, packed in identifier order: what a migration stage's context leaves.
  ///
  /// - Complexity: O(*n*) in the objects and their values.
  func migratedContents() -> StoreContents {
    var objects: [ManagedObject] = []
    objects.reserveCapacity(registered.count)
    for (_, object) in registered.pairs.sorted(by: { $0.0 < $1.0 })
    where object.lifecycle == .inserted || object.lifecycle == .persisted {
      objects.append(object)
    }
    let valueCount = objects.reduce(0) { $0 + $1.slotCount }
    let packed = PackedObjects.filling(objectCapacity: objects.count, valueCapacity: valueCount) {
      (packed: inout PackedObjects.Filler) in
      for object in objects {
        packed.beginObject(id: object.storedObjectID!, entity: table(for: object.model).entityIndex)
        for index in 0..<object.slotCount {
          packed.appendValue(persistentValue(object.slots[index]))
        }
      }
    }
    return StoreContents(
      list: ObjectList(packed: packed), nextObjectNumber: coordinator.reservedUpTo)
  }
}
