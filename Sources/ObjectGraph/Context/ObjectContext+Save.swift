extension ObjectContext {
  /// Validates the pending changes and hands them to the store as one changeset.
  ///
  /// Validation checks unique attributes, deny rules of deleted objects and the count bounds
  /// of to-many relationships. If validation or the store fails, nothing is written and the
  /// context keeps every pending change, exactly as before the call.
  ///
  /// A save is based on every save the container's other contexts made before it: the saves
  /// this context has not merged yet are merged first (see ``processPendingChanges()``), so
  /// that no value or list edit is applied to data that changed since this context read it.
  /// When one of them changed what this context changed too, nothing is saved.
  ///
  /// - Throws: ``ObjectGraphError`` with code ``ObjectGraphError/Code/uniqueConstraint``
  ///   (naming entity, attribute and value), ``ObjectGraphError/Code/denyRule`` (naming the
  ///   object and relationship), ``ObjectGraphError/Code/countBounds``,
  ///   ``ObjectGraphError/Code/conflict`` (naming per object and property the stored value
  ///   and ours; ``rollback()`` takes the stored values), or the store's error.
  /// - Complexity: O(*k*) in the changed objects and properties, plus the saves merged.
  public func save() throws {
    beginUse()
    defer { endUse() }
    var isAnnounced = false
    while true {
      processPendingChanges()
      let conflicts = mergeSavedChanges()
      if !conflicts.isEmpty { throw conflictError(conflicts) }
      guard hasChanges else { return }
      if !isAnnounced {
        notifySaveObservers(.willSave)
        isAnnounced = true
      }
      // Unique attributes of objects not yet indexed (inserted or loaded in bulk) are indexed
      // on another thread while the changeset is made; validation then waits for them.
      for table in tables { table.startBuildingAttributeIndexes() }
      let changeset = makeChangeset()
      try validate()
      switch try coordinator.save(changeset, generation: storeGeneration, by: historyMember) {
      case .outdated:
        continue  // another context saved since the merge: merge that too, and remake
      case .saved(let version):
        mergedVersion = version
      }
      commit()
      notifySaveObservers(.didSave(changeset))
      if changeset.insertedObjects.count >= Self.backgroundReleaseThreshold {
        Parallel.release(consume changeset)
      }
      return
    }
  }

  /// The fewest new objects whose changeset is freed on another thread after a save.
  static let backgroundReleaseThreshold = 4_096

  /// Discards every change since the last save: inserted objects leave the context, changed
  /// properties (on both sides of each relationship) get their saved values back, and
  /// deleted objects return.
  ///
  /// The inverse of what changed is applied as a merged save is (``apply(_:)``): a list
  /// changed by edits gets its saved order back through their inverses, in place, and
  /// observers hear of those edits.
  ///
  /// - Complexity: O(*k*) in the changed objects and properties.
  public func rollback() {
    beginUse()
    defer { endUse() }
    var changes = UntrackedChanges()
    changes.leaving = inserted.objects
    let updatedObjects = updated.objects
    for object in updatedObjects {
      guard let objectChanges = object.changes else { continue }
      for property in objectChanges.changedProperties {
        changes.revert(property, of: object, objectChanges)
      }
    }
    changes.joining = deleted.objects
    apply(changes)
    for object in updatedObjects { object.changes = nil }
    for object in changes.leaving { object.storedObjectID = nil }
    inserted.removeAll()
    updated.removeAll()
    deleted.removeAll()
    // Held until the inserted set let go of them: the sets do not retain their members.
    withExtendedLifetime(changes) {}
    processPendingChanges()
  }

  // MARK: Validation

  func validate() throws {
    for object in sortedByID(deleted.objects) {
      for property in object.model.properties {
        guard case .relationship(let relationship) = property.kind else { continue }
        if relationship.deleteRule == .noAction {
          try checkNoDanglingReferences(to: object, property)
        }
        guard relationship.deleteRule == .deny else { continue }
        let remaining = object.slots[property.index].objects.filter { !$0.isDeleted }
        if let first = remaining.first {
          throw ObjectGraphError(
            .denyRule,
            "cannot delete \(object.model.name) \(object.storedObjectID!): its relationship "
              + "\(property.name) (delete rule deny) still holds \(remaining.count) "
              + "object(s), first \(first)",
            entity: object.model.name, property: property.name, objectID: object.storedObjectID)
        }
      }
    }
    try checkRequiredValues()
    // When no unique index holds a value twice and no list has count bounds, no rule can
    // break: the changed objects need not even be listed.
    guard tables.contains(where: \.mayBreakRules) else { return }
    for objects in [sortedByID(inserted.objects), sortedByID(updated.objects)] {
      try validateRules(of: objects)
    }
  }

  /// Checks that every object to be saved holds a value in each property that requires
  /// one (``EntityModel/requiredIndices``): an inserted object in each, an updated one in
  /// each it changed (a stored object has every value, and a setter cannot store `nil` in a
  /// non-optional attribute; a required to-one can lose its object through its inverse or a
  /// delete).
  ///
  /// - Complexity: O(*c*) in the changed objects, when some entity requires values; O(*e*)
  ///   in the entities otherwise.
  private func checkRequiredValues() throws {
    guard tables.contains(where: { !$0.model.requiredIndices.isEmpty }) else { return }
    for objects in [sortedByID(inserted.objects), sortedByID(updated.objects)] {
      for object in objects where !object.isDeleted && !object.model.requiredIndices.isEmpty {
        for index in object.model.requiredIndices {
          if object.lifecycle != .inserted, object.changes?.hasChanged(index) != true { continue }
          switch object.slots[index] {
          case .value(.null), .toOne(nil): throw missingValue(object, index)
          default: continue
          }
        }
      }
    }
  }

  private func missingValue(_ object: ManagedObject, _ index: Int) -> ObjectGraphError {
    let property = object.model.properties[index]
    let id = object.objectID.map { "\($0)" } ?? "(new)"
    let fix =
      property.isRelationship
      ? "holds no object: it is a required relationship (declared without `?`), so relate an "
        + "object (or declare it optional) before saving"
      : "was never set: it is declared without a default value, so set it (in the "
        + "initializer, after super.init()) before saving"
    return ObjectGraphError(
      .missingValue, "\(object.model.name) \(id).\(property.name) \(fix)",
      entity: object.model.name, property: property.name, objectID: object.objectID)
  }

  /// A delete rule of no action leaves the related objects pointing at the deleted one:
  /// saving that would write references to an object the store no longer has, so the save
  /// fails, naming both, until the app points them elsewhere.
  private func checkNoDanglingReferences(to deleted: ManagedObject, _ property: PropertyModel)
    throws
  {
    guard case .relationship(let relationship) = property.kind,
      let inverse = relationship.inverse
    else { return }
    for related in deleted.slots[property.index].objects
    where related.isTracked(by: self) && !related.isDeleted
      && related.slots[inverse].objects.contains(where: { $0 === deleted })
    {
      let inverseName = related.model.properties[inverse].name
      throw ObjectGraphError(
        .danglingReference,
        "cannot delete \(deleted.model.name) \(deleted.storedObjectID!): "
          + "\(related.model.name) \(related.objectID.map { "\($0)" } ?? "(new)").\(inverseName) still refers to it "
          + "(delete rule of \(property.name) is no action); set \(inverseName) to another "
          + "object or nil before saving",
        entity: related.model.name, property: inverseName, objectID: related.objectID)
    }
  }

  /// Checks unique attributes and count bounds of changed objects, in the given order.
  private func validateRules(of objects: [ManagedObject]) throws {
    for object in objects where !object.model.validatedIndices.isEmpty && !object.isDeleted {
      let table = self.table(for: object.model)
      for index in object.model.validatedIndices {
        if object.lifecycle != .inserted, object.changes?.hasChanged(index) != true { continue }
        let property = object.model.properties[index]
        switch property.kind {
        case .attribute:
          // An index where no two objects share a value has no clash to find.
          guard let uniqueIndex = table.attributeIndex(index), uniqueIndex.sharedKeyCount > 0
          else { continue }
          let value = object.slots[index].value
          let clashes = uniqueIndex.count(for: value)
          if value != .null, clashes > 1 {
            throw ObjectGraphError(
              .uniqueConstraint,
              "\(object.model.name).\(property.name) must be unique, but \(clashes) objects "
                + "hold \(value)", entity: object.model.name, property: property.name,
              objectID: object.storedObjectID)
          }
        case .relationship(let relationship):
          let count = object.slots[index].objects.count
          if let minimum = relationship.minimumCount, count < minimum {
            throw boundsError(object, property, count, "at least \(minimum)")
          }
          if let maximum = relationship.maximumCount, count > maximum {
            throw boundsError(object, property, count, "at most \(maximum)")
          }
        }
      }
    }
  }

  private func boundsError(
    _ object: ManagedObject, _ property: PropertyModel, _ count: Int, _ bound: String
  ) -> ObjectGraphError {
    ObjectGraphError(
      .countBounds,
      "\(object.model.name) \(object.storedObjectID!).\(property.name) holds \(count) "
        + "object(s) but must hold \(bound)", entity: object.model.name,
      property: property.name, objectID: object.storedObjectID)
  }

  // MARK: Changeset

  func makeChangeset() -> Changeset {
    var changeset = Changeset(nextObjectNumber: coordinator.reservedUpTo)
    changeset.baseVersion = mergedVersion
    // The inserted set is in identifier order already: objects are numbered as they are
    // inserted, and the set keeps insertion order. Walked as it is (no array of it, no
    // sort), 100,000 new objects are visited once, not three times.
    // Every object has its model's property count of slots: the values fit exactly.
    let packed = PackedObjects.filling(
      objectCapacity: inserted.count,
      valueCapacity: inserted.count * (tables.lazy.map(\.model.propertyCount).max() ?? 0)
    ) { (packed: inout PackedObjects.Filler) in
      var lastModel: EntityModel?
      var entity = 0
      inserted.forEach { object in
        if object.model !== lastModel {
          lastModel = object.model
          entity = table(for: object.model).entityIndex
        }
        precondition(packed.hasRoom(forValues: object.slotCount), "more values than properties")
        packed.beginObject(id: object.storedObjectID!, entity: entity)
        for index in 0..<object.slotCount {
          packed.appendValue(persistentValue(object.slots[index]))
        }
      }
    }
    changeset.insertedObjects = ObjectList(packed: packed)
    for object in sortedByID(updated.objects) where object.lifecycle == .persisted {
      guard let changes = object.changes else { continue }
      var propertyChanges: [PropertyChange] = []
      var changed = ChangedProperties()  // in increasing order, with no array made
      changes.insertChangedProperties(into: &changed)
      for property in changed {
        let current = object.slots[property]
        if case .toMany(let list) = current {
          if let edits = changes.recordedEdits(of: property),
            let listEdits = listEdits(edits, count: list.count)
          {
            if !listEdits.isEmpty {
              propertyChanges.append(PropertyChange(property: property, kind: .edit(listEdits)))
            }
            continue
          }
        }
        let value = persistentValue(current)
        let committed = changes.committedValue(of: property, current: current)
        if value != persistentValue(committed) {
          propertyChanges.append(PropertyChange(property: property, kind: .set(value)))
        }
      }
      if !propertyChanges.isEmpty {
        changeset.updated.append(
          ObjectUpdate(
            id: object.storedObjectID!, entity: table(for: object.model).entityIndex,
            changes: propertyChanges))
      }
    }
    changeset.deleted = sortedByID(deleted.objects).map { $0.storedObjectID! }
    return changeset
  }

  /// The recorded edits as store edits, or nil when replacing the list is cheaper or the
  /// edits mention an object that will not be in the store.
  private func listEdits(_ records: [ListEditRecord], count: Int) -> [ListEdit]? {
    guard records.count <= max(count, 1) else { return nil }
    var edits: [ListEdit] = []
    edits.reserveCapacity(records.count)
    for record in records {
      switch record {
      case .insert(let object, let position):
        guard object.isTracked(by: self), let id = object.storedObjectID else { return nil }
        edits.append(.insert(id, at: position))
      case .remove(_, let position):
        edits.append(.remove(at: position))
      case .move(let from, let to):
        edits.append(.move(from: from, to: to))
      }
    }
    return edits
  }

  /// Makes the changes the committed state without saving them: a migration stage's
  /// changes are in the migrated store already (see ``init(coordinator:adopting:)``).
  ///
  /// What the changes kept (a committed value per property changed, and the batch of
  /// changes not delivered) is freed on another thread, as the whole stage's context
  /// would be: after a stage that set a property of each of 101,100 boxes, freeing it here
  /// took 6 ms.
  func commitWithoutSaving() {
    var recorded: [ObjectChanges] = []
    recorded.reserveCapacity(updated.count)
    updated.forEach { object in
      if let changes = object.changes { recorded.append(changes) }
    }
    commit()
    let undelivered = pending
    pending = PendingChanges()
    Parallel.release(UncheckedSendable((recorded, undelivered)))
  }

  /// Makes the saved state the new committed state.
  private func commit() {
    // Held here until the deleted set lets go of them: the sets do not retain their members.
    let deletedObjects = deleted.objects
    for object in deletedObjects {
      unregister(object)
      object.detachFromContext(clearingRelationships: true)
    }
    // One pass over each set: after a save of 100,000 new objects, every pass costs.
    let version = mergedVersion
    inserted.removeAll {
      $0.lifecycle = .persisted
      $0.savedVersion = version
    }
    updated.removeAll {
      $0.changes = nil
      $0.savedVersion = version
    }
    deleted.removeAll()
    withExtendedLifetime(deletedObjects) {}
  }
}
