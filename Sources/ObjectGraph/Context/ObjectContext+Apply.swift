/// The one write path of changes a context takes rather than makes: a save of another context
/// being merged (``mergeSavedChanges()``), and the inverse of this context's unsaved changes
/// being put back (``rollback()``, and a merge policy's revert of a conflicting change).
///
/// Each is gathered first as ``UntrackedChanges`` (objects leaving the context, property
/// writes, objects joining it) and then applied by ``apply(_:)``, in that order, whoever
/// gathered it. A merge leaves a save's deleted objects, writes its updates and files its new
/// objects; a rollback leaves the objects inserted here, writes every changed property's
/// saved value (a list changed by edits through their inverses) and files the objects
/// deleted here again. Every write goes through ``write(_:to:of:edits:)``: indexes, live
/// queries, Observation, relationship observers and the next delivery all follow, and nothing
/// is tracked (the values are the saved ones).
extension ObjectContext {
  /// Changes to apply to a context's objects without tracking them.
  struct UntrackedChanges {
    /// How one property of one object gets its new value.
    enum Write {
      /// A whole value.
      case value(Slot)
      /// A save's edits of a list, by object id, applied to the list in place: the list is
      /// the stored one, so the edits fit it.
      case savedEdits([ListEdit])
      /// Edits this context made to a list, undone in place by their inverses, last first.
      case undoneEdits([ListEditRecord])
    }

    /// One property write.
    struct PropertyWrite {
      let object: ManagedObject
      let property: Int
      let write: Write
    }

    /// Objects that leave the context, their relationships emptied (a save's deletes, or
    /// objects inserted here and rolled back).
    var leaving: [ManagedObject] = []
    /// Property writes, applied in order.
    var writes: [PropertyWrite] = []
    /// Objects that join the context's tables, their values already in their slots (a save's
    /// new objects, registered already, or objects deleted here and rolled back).
    var joining: [ManagedObject] = []

    /// Changes of one write.
    static func writing(_ write: Write, to property: Int, of object: ManagedObject) -> Self {
      var changes = UntrackedChanges()
      changes.writes.append(PropertyWrite(object: object, property: property, write: write))
      return changes
    }

    /// Adds the write that gives a changed property of `object` its value at the last save
    /// back: a list changed only by edits through their inverses (nothing for no edits);
    /// any other value whole.
    ///
    /// - Complexity: O(1); O(*n* + *k*) for a list of *n* objects changed by *k* edits and
    ///   then set whole.
    mutating func revert(_ property: Int, of object: ManagedObject, _ changes: ObjectChanges) {
      if let edits = changes.recordedEdits(of: property) {
        if !edits.isEmpty {
          writes.append(
            PropertyWrite(object: object, property: property, write: .undoneEdits(edits)))
        }
        return
      }
      let committed = changes.committedValue(of: property, current: object.slots[property])
      writes.append(PropertyWrite(object: object, property: property, write: .value(committed)))
    }
  }

  /// Applies untracked changes: the leaving objects leave every table, the objects deleted
  /// here come back, the writes are written in order, the new objects join, and the leaving
  /// objects leave the identity map and let go of the context and of their relationships
  /// last (a save's list edits may insert an object the save deletes, and it may edit a list
  /// of one).
  ///
  /// An object deleted here comes back (a rollback) before the writes, so that they are
  /// heard as its changes: observers heard of its values before the deletion, unsaved
  /// changes included, and the values it comes back with are the saved ones. Written while
  /// still deleted, they reached no delivery, and a deletion undone before a delivery is
  /// none.
  ///
  /// - Complexity: O(*k*) in the objects and writes, plus each list edit's own work.
  func apply(_ changes: UntrackedChanges) {
    for object in changes.leaving {
      noteWillTouch(object)
      pending.noteDelete(object)
      table(for: object.model).remove(object)
      // Out of its table: written from now on as an object deleted here is.
      if object.lifecycle == .persisted { object.lifecycle = .deleted }
    }
    let isComingBack = changes.joining.map { $0.lifecycle == .deleted }
    for (object, isComingBack) in zip(changes.joining, isComingBack) where isComingBack {
      bringBack(object)
    }
    for change in changes.writes {
      switch change.write {
      case .value(let slot):
        write(slot, to: change.property, of: change.object, edits: [])
      case .savedEdits(let edits):
        applySavedEdits(edits, to: change.property, of: change.object)
      case .undoneEdits(let edits):
        undo(edits, of: change.property, of: change.object)
      }
    }
    for (object, isComingBack) in zip(changes.joining, isComingBack) where !isComingBack {
      noteWillTouch(object)
      pending.noteInsert(object)
      table(for: object.model).add(object)
    }
    for object in changes.leaving {
      unregister(object)
      object.detachFromContext(clearingRelationships: true)
    }
  }

  /// Applies a save's list edits to the list, taken out of its slot so that it changes in
  /// place.
  private func applySavedEdits(_ edits: [ListEdit], to index: Int, of object: ManagedObject) {
    var list = object.slots[index].objects
    object.slots[index] = .toMany([])
    var records: [ListEditRecord] = []
    records.reserveCapacity(edits.count)
    for edit in edits {
      // The list is the stored one (this context merged every save before and did not
      // change it), so the edits fit; one that does not is left out.
      guard (try? edit.count(after: list.count)) != nil else {
        assertionFailure("a merged list edit \(edit) does not fit a list of \(list.count)")
        continue
      }
      switch edit {
      case .insert(let id, let position):
        guard let inserted = registered[id] else { continue }
        list.insert(inserted, at: position)
        records.append(.insert(inserted, at: position))
      case .remove(let position):
        records.append(.remove(list.remove(at: position), at: position))
      case .move(let from, let to):
        list.moveElement(from: from, to: to)
        records.append(.move(from: from, to: to))
      }
    }
    write(.toMany(list), to: index, of: object, edits: records)
  }

  /// Undoes a list's recorded edits: their inverses are applied to the list, taken out of
  /// its slot so that it changes in place, and written with them, as a save's edits are.
  ///
  /// - Complexity: O(*k*) edits, each with the array's own work.
  private func undo(_ edits: [ListEditRecord], of index: Int, of object: ManagedObject) {
    var list = object.slots[index].objects
    object.slots[index] = .toMany([])
    ListEditRecord.undo(edits, on: &list)
    write(.toMany(list), to: index, of: object, edits: ListEditRecord.inverses(of: edits))
  }

  /// Writes a saved value (merged, or the committed value a rollback puts back) as any
  /// change is written (indexes, live queries, Observation, relationship observers, the
  /// next delivery) but without tracking it. An object deleted here is in no table and no
  /// delivery hears of it until it comes back: only its slot and its observers change.
  private func write(
    _ new: Slot, to index: Int, of object: ManagedObject, edits: [ListEditRecord]
  ) {
    noteWillTouch(object)
    let isFiled = object.lifecycle == .persisted
    let table = self.table(for: object.model)
    if isFiled {
      if object.model.isIndexed[index] { table.finishPendingBuild() }
      pending.noteUpdate(object, property: index)
    }
    var old = Slot.value(.null)
    object.notifyObservers(of: index) {
      old = object.slots[index]
      object.slots[index] = new
    }
    if isFiled { table.update(object, index, from: old, to: new) }
    if case .toMany(let list) = new, observers.observesLists {
      observers.noteListWrite(of: object, property: index, edits, count: list.count)
    }
  }
}
