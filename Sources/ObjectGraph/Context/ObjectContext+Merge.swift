/// Merging: a save made in one context reaches every other live context of its container.
///
/// A context merges the saves it missed (``StoreCoordinator/saves(missedBy:)``), whole and
/// in save order, when it is next used (a fetch, a save, ``processPendingChanges()``) and,
/// for the main context, on the main queue right after the save. New objects appear,
/// deleted ones go, and changed values and lists take their saved values, each written as
/// any change is (indexes, live queries, Observation and every observer follow) but not
/// tracked: merged values are saved already.
///
/// A save that changes a property this context changed too and has not saved (or an object
/// it deleted, or deletes one it changed) is a conflict. The context's ``mergePolicy``
/// resolves it as the save merges (see ``MergePolicy``); what it cannot resolve (everything,
/// under ``MergePolicy/error``) holds that save and every later one unmerged, and ``save()``
/// throws ``ObjectGraphError/Code/conflict`` naming each object and property with the stored
/// value and ours; nothing is written. ``rollback()`` drops this context's changes, after
/// which the waiting saves merge.
extension ObjectContext {
  /// One property (or a whole object, for `property` nil) changed in this context and by a
  /// save of another.
  struct MergeConflict {
    let entity: String
    let objectID: ObjectID
    /// The property, or nil when one side deleted the object.
    let property: String?
    /// What the other context saved, and what this one holds.
    let stored: String
    let ours: String
  }

  /// Merges the saves of other contexts this context has not merged, in order, up to the
  /// first that conflicts with its unsaved changes; returns that one's conflicts (none when
  /// everything merged).
  ///
  /// - Complexity: O(1) when there is nothing to merge (an atomic load); O(*k*) in the
  ///   changes merged otherwise, plus the cost of each list edit.
  @discardableResult
  func mergeSavedChanges() -> [MergeConflict] {
    if coordinator.version == mergedVersion { return [] }
    let saves = coordinator.saves(missedBy: historyMember)
    guard !saves.isEmpty else { return [] }
    var conflicts: [MergeConflict] = []
    for save in saves {
      let found = self.conflicts(with: save.changeset)
      if found.isEmpty {
        merge(save.changeset, version: save.version)
      } else if let resolution = resolution(of: save.changeset) {
        merge(save.changeset, version: save.version, resolving: resolution)
      } else {
        conflicts = found
        break
      }
      mergedVersion = save.version
    }
    coordinator.noteMerged(historyMember, upTo: mergedVersion)
    return conflicts
  }

  /// Merges a save into a dormant main context (see ``SaveHistory``), on the saving thread
  /// under the coordinator's lock: no one holds the context or its objects yet.
  func mergeWhileDormant(_ changeset: Changeset, version: UInt64) {
    merge(changeset, version: version)
    mergedVersion = version
    // No one observes it yet: nothing is delivered, now or when it wakes (taken, so that
    // the objects' pending marks are cleared).
    _ = pending.take(marking: false)
  }

  /// Wakes the main context when the app first asks for it: from then on it merges saves
  /// on the main queue.
  func wakeIfDormant() {
    guard isDormant else { return }
    coordinator.wake(historyMember)
    isDormant = false
    #if DEBUG
      useCheck.bindToMainActor()  // each entry point checks it runs on the main actor
    #endif
  }

  /// The error a save throws while a save of another context conflicts with this one's.
  func conflictError(_ conflicts: [MergeConflict]) -> ObjectGraphError {
    let first = conflicts[0]
    let listed = conflicts.prefix(10).map { conflict in
      let place =
        "\(conflict.entity) \(conflict.objectID)" + (conflict.property.map { ".\($0)" } ?? "")
      return "\(place): stored \(conflict.stored), ours \(conflict.ours)"
    }
    let more = conflicts.count > 10 ? "; and \(conflicts.count - 10) more" : ""
    let policy =
      mergePolicy == .error
      ? "" : " (the merge policy \(mergePolicy) does not resolve this)"
    return ObjectGraphError(
      .conflict,
      "another context saved changes to what this context changed: "
        + listed.joined(separator: "; ") + more
        + "; nothing was saved\(policy): roll back to take the stored values",
      entity: first.entity, property: first.property, objectID: first.objectID)
  }

  // MARK: Conflicts

  private func conflicts(with changeset: Changeset) -> [MergeConflict] {
    guard hasChanges else { return [] }
    var conflicts: [MergeConflict] = []
    for update in changeset.updated {
      guard let object = registered[update.id] else { continue }
      if object.lifecycle == .deleted {
        conflicts.append(deletedHere(object, update.id))
        continue
      }
      guard let changes = object.changes else { continue }
      for change in update.changes where changes.hasChanged(change.property) {
        conflicts.append(
          MergeConflict(
            entity: object.model.name, objectID: update.id,
            property: object.model.properties[change.property].name,
            stored: describe(change.kind),
            ours: describe(persistentValue(object.slots[change.property]))))
      }
    }
    for id in changeset.deleted {
      guard let object = registered[id] else { continue }
      if object.lifecycle == .deleted {
        conflicts.append(deletedHere(object, id))
      } else if object.changes != nil {
        conflicts.append(
          MergeConflict(
            entity: object.model.name, objectID: id, property: nil, stored: "deleted",
            ours: "changed"))
      }
    }
    return conflicts
  }

  private func deletedHere(_ object: ManagedObject, _ id: ObjectID) -> MergeConflict {
    MergeConflict(
      entity: object.model.name, objectID: id, property: nil, stored: "changed", ours: "deleted")
  }

  private func describe(_ kind: PropertyChange.Kind) -> String {
    switch kind {
    case .set(let value): describe(value)
    case .edit(let edits): "a list edited \(edits.count) time(s)"
    }
  }

  private func describe(_ value: PersistentValue) -> String {
    switch value {
    case .references(let ids): "a list of \(ids.count)"
    default: "\(value)"
    }
  }

  // MARK: Applying a save

  /// Applies a changeset another context saved as store version `version`, as
  /// `resolution` says when it conflicts with this context's changes: what it drops or
  /// reverts here first, which saved changes it leaves out, and what it forgets or rebases
  /// here after. The save's deleted objects leave, its updates are written and its new
  /// objects join, through ``apply(_:)``.
  private func merge(
    _ changeset: Changeset, version: UInt64, resolving resolution: MergeResolution? = nil
  ) {
    if let resolution { prepare(resolution) }
    var changes = UntrackedChanges()
    let inserted = changeset.inserted
    changes.joining.reserveCapacity(inserted.count)
    for snapshot in inserted {
      let model = coordinator.models[snapshot.entity]
      let object = model.type.init()
      adoptStored(object, id: snapshot.id)
      object.savedVersion = version
      changes.joining.append(object)
    }
    // Values once all are registered, so new objects can refer to each other.
    for (object, snapshot) in zip(changes.joining, inserted) {
      for (index, value) in snapshot.values.enumerated() {
        object.slots[index] = slot(value, index, of: object.model)
      }
    }
    for update in changeset.updated {
      guard let object = registered[update.id] else { continue }
      object.savedVersion = version
      for change in update.changes {
        if let resolution,
          resolution.skipped.contains(MergeResolution.Key(id: update.id, property: change.property))
        {
          continue
        }
        let write: UntrackedChanges.Write
        switch change.kind {
        case .set(let value): write = .value(slot(value, change.property, of: object.model))
        case .edit(let edits): write = .savedEdits(edits)
        }
        changes.writes.append(.init(object: object, property: change.property, write: write))
      }
    }
    changes.leaving = changeset.deleted.compactMap { registered[$0] }
    apply(changes)
    if let resolution { finish(resolution) }
  }

  /// The slot of a stored value of property `index`, its references resolved.
  func slot(_ value: PersistentValue, _ index: Int, of model: EntityModel) -> Slot {
    guard let relationship = model.relationship(index) else { return .value(value) }
    switch value {
    case .reference(let id): return .toOne(registered[id])
    case .references(let ids): return .toMany(ids.compactMap { registered[$0] })
    default: return relationship.isToMany ? .toMany([]) : .toOne(nil)
    }
  }
}
