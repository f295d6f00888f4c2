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
    /// After the merge: changes here forgotten (the property holds the saved value).
    var forgotten: [Key] = []
    /// After the merge: attributes whose value here stays, now changed from this saved one.
    var rebased: [(Key, PersistentValue)] = []
    /// After the merge: lists both sides edited, and how they merge.
    var mergedLists: [(Key, ListMergePlan)] = []
    /// After the merge: to-ones both sides set to different objects, and which side wins.
    var toOnes: [(Key, ToOneWinner)] = []
  }

  /// Which side's object a to-one both sides set keeps.
  enum ToOneWinner {
    /// Ours stays; the object the save gave it lets go of this one on the inverse side.
    case ours(saved: ObjectID?)
    /// The save's object is merged; ours lets go of this one on the inverse side.
    case stored(ours: ManagedObject?)
  }

  /// How a list both sides edited merges: the saved change, and whether this context's
  /// moves win where both moved an element (or its whole change gives way, when it only
  /// reordered: ``MergePolicy/rollback``).
  struct ListMergePlan {
    let change: PropertyChange.Kind
    let oursWinMoves: Bool
    let takesTheirs: Bool
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
        // Deleted here: the delete wins over changes of attributes. The saved values are
        // merged all the same, into the deleted object (or, for an attribute changed here
        // too, as the value it goes back to), so that a rollback of the delete brings it
        // back as it is stored.
        guard update.changes.allSatisfy({ isAttribute($0.property) }) else { return nil }
        for change in update.changes where object.changes?.hasChanged(change.property) == true {
          let key = MergeResolution.Key(id: update.id, property: change.property)
          resolution.skipped.insert(key)
          resolution.rebased.append((key, Self.savedValue(change)))
        }
        continue
      }
      guard let changes = object.changes else { continue }
      var overlapping: [PropertyChange] = []
      var settled: Set<Int> = []  // relationships both changed, resolved already
      var isInConflict = false
      for change in update.changes where changes.hasChanged(change.property) {
        if isAttribute(change.property) {
          overlapping.append(change)
          isInConflict = true
          continue
        }
        // A relationship both sides left alike is kept once; a list both edited is merged
        // (see ``ListMerge``), a to-one both set settled; any other is a conflict.
        let key = MergeResolution.Key(id: update.id, property: change.property)
        resolution.skipped.insert(key)
        settled.insert(change.property)
        if savedChange(change, leaves: object, as: changes) {
          resolution.forgotten.append(key)
          continue
        }
        isInConflict = true
        if let merged = listMerge(of: change, into: object, as: changes) {
          resolution.mergedLists.append((key, merged))
        } else if let winner = toOneWinner(of: change, of: object) {
          if case .stored = winner { resolution.skipped.remove(key) }  // the merge sets it
          resolution.toOnes.append((key, winner))
        } else {
          return nil
        }
      }
      // The object policies (rollback, overwrite) act on the whole object in conflict.
      guard isInConflict else { continue }
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
        where !saved.contains(property) && !settled.contains(property) {
          guard isAttribute(property) else { return nil }
          resolution.reverted.append(key(property))
        }
        resolution.forgotten += overlapping.map { key($0.property) }
      case .overwrite:
        for change in update.changes where !settled.contains(change.property) {
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
    var reverts = UntrackedChanges()
    for key in resolution.reverted {
      guard let object = registered[key.id], let changes = object.changes else { continue }
      reverts.revert(key.property, of: object, changes)
    }
    apply(reverts)
    for key in resolution.reverted {
      guard let object = registered[key.id] else { continue }
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
    for (key, plan) in resolution.mergedLists {
      guard let object = registered[key.id] else { continue }
      mergeList(key.property, of: object, plan)
    }
    // After the lists: a list merge may have kept the loser's side of a to-one.
    for (key, winner) in resolution.toOnes {
      guard let object = registered[key.id] else { continue }
      settleToOne(key.property, of: object, winner)
    }
    for key in resolution.forgotten {
      guard let object = registered[key.id] else { continue }
      forgetChange(of: object, key.property)
    }
    for (key, value) in resolution.rebased {
      guard let object = registered[key.id] else { continue }
      trackedChanges(of: object).rebase(
        key.property, committed: slot(value, key.property, of: object.model))
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

  /// How a saved change of a list this context edited too merges under ``mergePolicy``, or
  /// nil when it does not: a many-to-many list (merging it would change the other lists'
  /// members too), or, under ``MergePolicy/rollback``, a list whose members changed here.
  private func listMerge(
    of change: PropertyChange, into object: ManagedObject, as changes: ObjectChanges
  ) -> ListMergePlan? {
    guard let relationship = object.model.relationship(change.property), relationship.isToMany,
      relationship.inverseModel?.isToMany != true
    else { return nil }
    switch mergePolicy {
    case .error:
      return nil
    case .mergeByPropertyStoreTrump:
      return ListMergePlan(change: change.kind, oursWinMoves: false, takesTheirs: false)
    case .mergeByPropertyObjectTrump, .overwrite:
      return ListMergePlan(change: change.kind, oursWinMoves: true, takesTheirs: false)
    case .rollback:
      let current = object.slots[change.property]
      let committed = changes.committedValue(of: change.property, current: current)
      let members = Set(committed.objects.map(ObjectIdentifier.init))
      guard members == Set(current.objects.map(ObjectIdentifier.init)) else { return nil }
      return ListMergePlan(change: change.kind, oursWinMoves: false, takesTheirs: true)
    }
  }

  /// Merges a list both sides edited: the saved list is the saved change applied to the
  /// committed one; the list becomes the three-way merge of the committed, saved and
  /// current lists (``ListMerge``), changed from the saved one.
  ///
  /// Members stay in step with their inverse to-ones: a member only one side added or
  /// removed was given or taken its to-one on that side, and a to-one both changed is a
  /// conflict no policy resolves.
  private func mergeList(_ property: Int, of object: ManagedObject, _ plan: ListMergePlan) {
    guard let changes = object.changes else { return }
    let current = object.slots[property].objects
    let committed = changes.committedValue(of: property, current: object.slots[property]).objects
    var savedIDs: [ObjectID]
    switch plan.change {
    case .set(.references(let ids)): savedIDs = ids
    case .set: savedIDs = []
    case .edit(let edits):
      savedIDs = committed.compactMap(\.storedObjectID)
      try? savedIDs.apply(edits)  // checked by the saving context's store
    }
    let saved = savedIDs.compactMap { registered[$0] }
    let merged: [ManagedObject]
    if plan.takesTheirs {
      merged = saved
    } else {
      merged = ListMerge.merge(
        base: committed, theirs: saved, ours: current, oursWinMoves: plan.oursWinMoves,
        key: ObjectIdentifier.init)
    }
    apply(.writing(.value(.toMany(merged)), to: property, of: object))
    if merged.elementsEqual(saved, by: ===) {
      forgetChange(of: object, property)
    } else {
      changes.rebase(property, committed: .toMany(saved))
    }
  }

  /// Which side wins a to-one both sides set to different objects under ``mergePolicy``, or
  /// nil for a change that is not a to-one's.
  private func toOneWinner(of change: PropertyChange, of object: ManagedObject) -> ToOneWinner? {
    guard let relationship = object.model.relationship(change.property),
      !relationship.isToMany, case .set(let value) = change.kind
    else { return nil }
    switch mergePolicy {
    case .error:
      return nil
    case .mergeByPropertyObjectTrump, .overwrite:
      if case .reference(let id) = value { return .ours(saved: id) }
      return .ours(saved: nil)
    case .mergeByPropertyStoreTrump, .rollback:
      return .stored(ours: object.slots[change.property].object)
    }
  }

  /// Settles a to-one both sides set, once the save merged: the losing side's object lets
  /// go of `object` on the inverse side (a change of this context, tracked, through the
  /// relationship's own bookkeeping), and the to-one's change here is rebased on the saved
  /// object (ours won) or forgotten (the store won).
  private func settleToOne(_ property: Int, of object: ManagedObject, _ winner: ToOneWinner) {
    guard let changes = object.changes, let relationship = object.model.relationship(property)
    else { return }
    let loser: ManagedObject?
    switch winner {
    case .ours(let saved):
      loser = saved.flatMap { registered[$0] }
      changes.rebase(property, committed: .toOne(loser))
    case .stored(let ours):
      loser = ours
      forgetChange(of: object, property)
    }
    guard let loser, loser !== object.slots[property].object,
      let inverse = relationship.inverse, let inverseModel = relationship.inverseModel
    else { return }
    loser.dropStale(object, fromInverse: inverse, isToMany: inverseModel.isToMany)
    forgetIfUnchanged(loser, inverse)
  }

  /// Forgets this context's change of `property` when the property holds its committed
  /// value again (a list that got back what it had).
  ///
  /// - Complexity: O(*n*) for a list of *n* objects.
  private func forgetIfUnchanged(_ object: ManagedObject, _ property: Int) {
    guard let changes = object.changes, changes.hasChanged(property) else { return }
    let current = object.slots[property]
    let committed = changes.committedValue(of: property, current: current)
    let isSame: Bool
    switch (current, committed) {
    case (.toMany(let now), .toMany(let then)): isSame = now.elementsEqual(then, by: ===)
    case (.toOne(let now), .toOne(let then)): isSame = now === then
    default: isSame = false
    }
    if isSame { forgetChange(of: object, property) }
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
