import Foundation

extension ObjectContext {
  /// Deletes an object, applying its relationships' delete rules at once.
  ///
  /// - nullify: the object is removed from the related objects' inverse;
  /// - cascade: the related objects are deleted too, to any depth (iteratively);
  /// - deny: nothing changes now; ``save()`` fails while the relationship holds objects;
  /// - noAction: the related objects keep pointing at the deleted object.
  ///
  /// Relationships declared without an inverse that point at the object lose it too. An
  /// object inserted and deleted before a save simply leaves the context.
  ///
  /// - Complexity: O(*k*) in the deleted objects and their relationships, plus the removal
  ///   of each subtree root from its parent's list, plus a scan of the entities that relate
  ///   to the deleted ones without an inverse.
  public func delete(_ object: ManagedObject) {
    beginUse()
    defer { endUse() }
    delete([object])
  }

  /// Deletes every object of a model class that matches a predicate (all of them when the
  /// predicate is nil), with the same delete rules as ``delete(_:)``: a "delete all" button.
  /// SwiftData's `ModelContext.delete(model:where:includeSubclasses:)`.
  ///
  /// ```swift
  /// try context.delete(model: Box.self)
  /// try context.delete(model: Box.self, where: #Predicate { $0.title == "" })
  /// try context.delete(model: Vehicle.self, includeSubclasses: false)  // not the Trucks
  /// ```
  ///
  /// Each model class is an entity of its own, and a fetch of a class returns only its own
  /// instances; this deletes the instances of the container's model classes that inherit
  /// from `model` too, unless `includeSubclasses` is false. The predicate is evaluated on
  /// each of them.
  ///
  /// - Parameters:
  ///   - model: The model class.
  ///   - predicate: Which objects to delete; all when nil.
  ///   - includeSubclasses: Whether to delete the matching objects of the container's model
  ///     classes that inherit from `model` too.
  /// - Throws: ``ObjectGraphError`` when the class is not in the schema or the predicate
  ///   cannot be evaluated; nothing is deleted then.
  /// - Complexity: That of a fetch of `model` with the predicate, plus O(*m*) predicate
  ///   evaluations in the *m* objects of the subclasses, plus ``delete(_:)``'s for what
  ///   matches.
  public func delete<T: ManagedObject>(
    model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true
  ) throws {
    beginUse()
    defer { endUse() }
    var objects: [ManagedObject] = try fetch(FetchDescriptor<T>(predicate: predicate))
    if includeSubclasses {
      for table in tables where table.model.type != model && table.model.type is T.Type {
        for case let object as T in sortedByID(table.objects) {
          do {
            if try predicate?.evaluate(object) ?? true { objects.append(object) }
          } catch {
            throw ObjectGraphError(
              .invalidFetch,
              "cannot evaluate the predicate of delete(model: \(model)) on "
                + "\(table.model.name) \(object.storedObjectID.map { "\($0)" } ?? "(new)"): "
                + "\(error)", entity: table.model.name, objectID: object.storedObjectID,
              underlying: error)
          }
        }
      }
    }
    delete(objects)
  }

  /// Empties the context after ``ObjectContainer/deleteAllData()`` emptied its store: every
  /// object is deleted (delete rules are not checked: all go) and leaves the context as a
  /// deleted object does after a save, detached with its relationships empty; unsaved
  /// changes are discarded. Observers are told of the deletions now.
  ///
  /// - Complexity: O(*n*) in the registered objects and their relationships.
  func discardAllObjects(storeGeneration: UInt64) {
    let unsaved = inserted.objects
    delete(sortedByID(registered.values))
    // As a save of these deletes commits them (no store is asked: it is empty already).
    let deletedObjects = deleted.objects
    for object in deletedObjects {
      unregister(object)
      object.detachFromContext(clearingRelationships: true)
    }
    // Unsaved objects left at the delete; their deny and no-action relationships did not.
    for object in unsaved { object.detachFromContext(clearingRelationships: true) }
    updated.removeAll { $0.changes = nil }
    deleted.removeAll()
    withExtendedLifetime(deletedObjects) {}
    self.storeGeneration = storeGeneration
    mergedVersion = coordinator.renew(historyMember)
    loadedVersion = mergedVersion
    processPendingChanges()
  }

  /// Deletes objects as one operation.
  func delete(_ objects: [ManagedObject]) {
    var doomed: [ManagedObject] = []
    var doomedIDs = Set<ObjectIdentifier>()
    for object in objects
    where object.isTracked(by: self) && object.lifecycle != .deleted
      && doomedIDs.insert(ObjectIdentifier(object)).inserted
    {
      doomed.append(object)
    }
    guard !doomed.isEmpty else { return }

    // Gather the cascade, breadth first, without recursion.
    var next = 0
    while next < doomed.count {
      let object = doomed[next]
      next += 1
      for property in object.model.properties {
        guard case .relationship(let relationship) = property.kind,
          relationship.deleteRule == .cascade
        else { continue }
        for related in object.slots[property.index].objects
        where related.isTracked(by: self) && related.lifecycle != .deleted
          && doomedIDs.insert(ObjectIdentifier(related)).inserted
        {
          doomed.append(related)
        }
      }
    }

    // Take them out of the live tables first, so index upkeep skips them.
    var unsaved: [ManagedObject] = []
    for object in doomed {
      noteWillTouch(object)
      pending.noteDelete(object)
      table(for: object.model).remove(object)
      if object.lifecycle == .inserted {
        inserted.remove(object)
        unsaved.append(object)
      } else {
        deleted.insert(object)
      }
      object.lifecycle = .deleted
    }

    // Nullify: unlink each doomed object from the survivors, then clear its own side.
    for object in doomed {
      for property in object.model.properties {
        guard case .relationship(let relationship) = property.kind else { continue }
        switch relationship.deleteRule {
        case .deny, .noAction:
          continue
        case .nullify, .cascade:
          break
        }
        let related = object.slots[property.index].objects
        if related.isEmpty { continue }
        if let inverse = relationship.inverse, let inverseModel = relationship.inverseModel {
          for target in related where !doomedIDs.contains(ObjectIdentifier(target)) {
            target.unlink(object, fromInverse: inverse, isToMany: inverseModel.isToMany)
          }
        }
        object.writeSlot(property.index, object.slots[property.index].emptied)
      }
    }
    removeOneWayReferences(to: doomedIDs, models: Set(doomed.map { ObjectIdentifier($0.model) }))

    // Objects never saved leave the context now; saved ones wait for the save.
    for object in unsaved {
      updated.remove(object)
      unregister(object)
      object.detachFromContext(clearingRelationships: false)
    }
  }

  /// Makes a saved object deleted in this context (the deletion not saved) live again:
  /// ``rollback()`` and ``insert(_:)`` of it. Its slots stay as they are (rollback has put
  /// back its saved values first); the deleted set lets it go, its table takes it back, and
  /// observers hear of an insert (or of nothing, if they had not heard of the deletion).
  func bringBack(_ object: ManagedObject) {
    noteWillTouch(object)
    deleted.remove(object)
    object.lifecycle = .persisted
    pending.noteInsert(object)
    table(for: object.model).add(object)
  }

  /// Removes references to deleted objects held by relationships that have no inverse.
  private func removeOneWayReferences(
    to doomed: Set<ObjectIdentifier>, models: Set<ObjectIdentifier>
  ) {
    for table in tables {
      let oneWay = table.model.properties.filter { property in
        guard case .relationship(let relationship) = property.kind else { return false }
        return relationship.inverse == nil
          && models.contains(ObjectIdentifier(relationship.destination))
      }
      if oneWay.isEmpty { continue }
      for object in table.objects {
        for property in oneWay {
          let current = object.slots[property.index].objects
          guard current.contains(where: { doomed.contains(ObjectIdentifier($0)) }) else {
            continue
          }
          switch object.slots[property.index] {
          case .toOne: object.writeSlot(property.index, .toOne(nil))
          case .toMany:
            object.setToMany(
              property.index, to: current.filter { !doomed.contains(ObjectIdentifier($0)) })
          case .value, .deferred, .released, .draft, .draftList: break
          }
        }
      }
    }
  }
}
