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
    delete([object])
  }

  /// Deletes every object of a model class that matches a predicate (all of them when the
  /// predicate is nil), with the same delete rules as ``delete(_:)``: a "delete all" button.
  ///
  /// ```swift
  /// try context.delete(model: Box.self)
  /// try context.delete(model: Box.self, where: #Predicate { $0.title == "" })
  /// ```
  ///
  /// - Throws: ``ObjectGraphError`` when the class is not in the schema or the predicate
  ///   cannot be evaluated; nothing is deleted then.
  public func delete<T: ManagedObject>(model: T.Type, where predicate: Predicate<T>? = nil)
    throws
  {
    let objects = try fetch(FetchDescriptor<T>(predicate: predicate))
    delete(objects)
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
          case .value, .deferred: break
          }
        }
      }
    }
  }
}
