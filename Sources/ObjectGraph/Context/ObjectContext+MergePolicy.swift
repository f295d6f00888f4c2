/// Merge policies: what a context's ``ObjectContext/mergePolicy`` makes of a save of another
/// context that conflicts with this context's unsaved changes (see ``MergePolicy``).
///
/// A resolution is worked out from the save and this context's changes before anything is
/// written, and applied by the ordinary merge (``mergeSavedChanges()``): first what it drops
/// or reverts here, then the save's changes less those it leaves out, then what it forgets
/// or rebases here. A save it cannot resolve is left unmerged, as under
/// ``MergePolicy/error``.
extension ObjectContext {
  /// What a merge policy makes of one conflicting save.
  struct MergeResolution {
    /// A property of an object.
    struct Key: Hashable {
      let id: ObjectID
      let property: Int
    }

    /// Before the merge: attributes changed here that go back to their committed value
    /// (``MergePolicy/rollback``: the store wins for the whole object).
    var reverted: [Key] = []
    /// Before the merge: objects whose changes here are dropped (the save deletes them).
    var dropped: [ManagedObject] = []
    /// Saved changes left out of the merge: the value here stays (a policy keeps it, or
    /// it is the saved value already).
    var skipped: Set<Key> = []
    /// Objects deleted here: the save's changes to their attributes are left out.
    var skippedObjects: Set<ObjectID> = []
    /// After the merge: changes here forgotten (the property holds the saved value).
    var forgotten: [Key] = []
    /// After the merge: attributes whose value here stays, now changed from this saved one.
    var rebased: [(Key, PersistentValue)] = []
  }

  /// How ``mergePolicy`` resolves a save that conflicts with this context's changes, or nil
  /// when it does not (``MergePolicy/error``, or a relationship changed differently on both
  /// sides).
  ///
  /// - Complexity: O(*k*) in the save's changes and this context's changes to the objects
  ///   it touches, plus the lists both changed.
  func resolution(of changeset: Changeset) -> MergeResolution? {
    if mergePolicy == .error { return nil }
    var resolution = MergeResolution()
    for update in changeset.updated {
      guard let object = registered[update.id] else { continue }
      let isAttribute = { (property: Int) in object.model.relationship(property) == nil }
      if object.lifecycle == .deleted {
        // Deleted here: the delete wins over changes of attributes.
        guard update.changes.allSatisfy({ isAttribute($0.property) }) else { return nil }
        resolution.skippedObjects.insert(update.id)
        continue
      }
      guard let changes = object.changes else { continue }
      var overlapping: [PropertyChange] = []
      var alike: Set<Int> = []
      for change in update.changes where changes.hasChanged(change.property) {
        if isAttribute(change.property) {
          overlapping.append(change)
          continue
        }
        // A relationship both sides left alike is kept once; any other is a conflict.
        guard savedChange(change, leaves: object, as: changes) else { return nil }
        let key = MergeResolution.Key(id: update.id, property: change.property)
        resolution.skipped.insert(key)
        resolution.forgotten.append(key)
        alike.insert(change.property)
      }
      if overlapping.isEmpty { continue }
      let key = { (property: Int) in MergeResolution.Key(id: update.id, property: property) }
      switch mergePolicy {
      case .error:
        return nil
      case .mergeByPropertyStoreTrump:
        resolution.forgotten += overlapping.map { key($0.property) }
      case .mergeByPropertyObjectTrump:
        for change in overlapping {
          resolution.skipped.insert(key(change.property))
          resolution.rebased.append((key(change.property), Self.savedValue(change)))
        }
      case .rollback:
        let saved = Set(update.changes.map(\.property))
        for property in changes.changedProperties
        where !saved.contains(property) && !alike.contains(property) {
          guard isAttribute(property) else { return nil }
          resolution.reverted.append(key(property))
        }
        resolution.forgotten += overlapping.map { key($0.property) }
      case .overwrite:
        for change in update.changes where !alike.contains(change.property) {
          guard isAttribute(change.property) else { return nil }
          resolution.skipped.insert(key(change.property))
          resolution.rebased.append((key(change.property), Self.savedValue(change)))
        }
      }
    }
    for id in changeset.deleted {
      guard let object = registered[id] else { continue }
      if object.lifecycle == .deleted {
        resolution.dropped.append(object)  // deleted on both sides
        continue
      }
      guard let changes = object.changes else { continue }
      // The delete wins over changes of attributes.
      guard changes.changedProperties.allSatisfy({ object.model.relationship($0) == nil }) else {
        return nil
      }
      resolution.dropped.append(object)
    }
    return resolution
  }

  /// Applies what a resolution does here before its save merges.
  func prepare(_ resolution: MergeResolution) {
    for key in resolution.reverted {
      guard let object = registered[key.id], let changes = object.changes else { continue }
      let committed = changes.committedValue(of: key.property, current: object.slots[key.property])
      write(committed, to: key.property, of: object, edits: [])
      forgetChange(of: object, key.property)
    }
    for object in resolution.dropped {
      object.changes = nil
      updated.remove(object)
      if object.lifecycle == .deleted {
        // Both sides deleted it: the merge deletes it here as a saved delete.
        deleted.remove(object)
        object.lifecycle = .persisted
      }
    }
  }

  /// Applies what a resolution does here after its save merged.
  func finish(_ resolution: MergeResolution) {
    for key in resolution.forgotten {
      guard let object = registered[key.id] else { continue }
      forgetChange(of: object, key.property)
    }
    for (key, value) in resolution.rebased {
      guard let object = registered[key.id] else { continue }
      let changes: ObjectChanges
      if let existing = object.changes {
        changes = existing
      } else {
        changes = ObjectChanges()
        object.changes = changes
        updated.insert(object)
      }
      changes.rebase(key.property, committed: slot(value, key.property, of: object.model))
    }
  }

  /// Forgets this context's change of one property; an object left with none is no longer
  /// updated.
  private func forgetChange(of object: ManagedObject, _ property: Int) {
    guard let changes = object.changes else { return }
    changes.forget(property)
    if changes.isEmpty, object.lifecycle == .persisted {
      object.changes = nil
      updated.remove(object)
    }
  }

  /// Whether a saved change of a relationship leaves it as this context holds it: the same
  /// change was made on both sides.
  private func savedChange(
    _ change: PropertyChange, leaves object: ManagedObject, as changes: ObjectChanges
  ) -> Bool {
    let current = object.slots[change.property]
    let ours = current.objects.map(\.storedObjectID)
    switch change.kind {
    case .set(.reference(let id)): return ours == [id]
    case .set(.references(let ids)): return ours == ids.map(Optional.some)
    case .set(.null): return ours.isEmpty
    case .set: return false
    case .edit(let edits):
      let committed = changes.committedValue(of: change.property, current: current)
      var ids = committed.objects.compactMap(\.storedObjectID)
      guard ids.count == committed.objects.count, (try? ids.apply(edits)) != nil else {
        return false
      }
      return ours == ids.map(Optional.some)
    }
  }

  /// The value an attribute's saved change sets.
  private static func savedValue(_ change: PropertyChange) -> PersistentValue {
    if case .set(let value) = change.kind { return value }
    return .null  // list edits are relationships', never an attribute's
  }
}
