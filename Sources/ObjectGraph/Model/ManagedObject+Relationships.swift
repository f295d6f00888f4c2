/// Relationship bookkeeping: every change of one side of a relationship is mirrored on the
/// inverse side at once, on objects in a context or not, and relating an object to one in a
/// context inserts it there.
///
/// All writes go through ``ManagedObject/writeSlot(_:_:edit:)``, so change tracking, indexes
/// and observers see the inverse side effects like any other change.
extension ManagedObject {
  // MARK: To-one

  /// Sets a to-one relationship, updating both sides.
  @usableFromInline
  final func setToOne(_ index: Int, to newTarget: ManagedObject?) {
    let relationship = model.relationship(index)!
    let oldTarget = slots[index].object
    if oldTarget === newTarget { return }
    if let newTarget { checkDestination(newTarget, of: relationship, index) }
    if let inverse = relationship.inverse, let inverseModel = relationship.inverseModel {
      if let oldTarget {
        oldTarget.unlink(self, fromInverse: inverse, isToMany: inverseModel.isToMany)
      }
      if let newTarget {
        newTarget.link(self, intoInverse: inverse, of: inverseModel, forward: index)
      }
    }
    writeSlot(index, .toOne(newTarget))
    if let newTarget { adopt(newTarget, through: index) }
  }

  // MARK: To-many

  /// Replaces a to-many relationship's objects, updating every inverse that changed.
  ///
  /// Duplicates keep their first position. The change is recorded as one list edit when it
  /// is one (append, insert, remove, single move), as a replacement otherwise.
  @usableFromInline
  final func setToMany(_ index: Int, to requested: [ManagedObject]) {
    let relationship = model.relationship(index)!
    let old = slots[index].objects
    var seen = Set<ObjectIdentifier>(minimumCapacity: requested.count)
    var new: [ManagedObject] = []
    new.reserveCapacity(requested.count)
    for object in requested where seen.insert(ObjectIdentifier(object)).inserted {
      checkDestination(object, of: relationship, index)
      new.append(object)
    }
    guard let edit = ListEditRecord.singleEdit(from: old, to: new) else {
      replaceToMany(index, relationship, old: old, new: new, newIDs: seen)
      return
    }
    switch edit {
    case .none: return
    case .some(.insert(let object, let position)): insertRelated(object, at: position, into: index)
    case .some(.remove(let position)): removeRelated(at: position, from: index)
    case .some(.move(let from, let to)): moveRelated(from: from, to: to, in: index)
    }
  }

  private final func replaceToMany(
    _ index: Int, _ relationship: RelationshipModel, old: [ManagedObject], new: [ManagedObject],
    newIDs: Set<ObjectIdentifier>
  ) {
    let oldIDs = Set(old.lazy.map(ObjectIdentifier.init))
    if let inverse = relationship.inverse, let inverseModel = relationship.inverseModel {
      for object in old where !newIDs.contains(ObjectIdentifier(object)) {
        object.unlink(self, fromInverse: inverse, isToMany: inverseModel.isToMany)
      }
      for object in new where !oldIDs.contains(ObjectIdentifier(object)) {
        object.link(self, intoInverse: inverse, of: inverseModel, forward: index)
      }
    }
    writeSlot(index, .toMany(new))
    for object in new where !oldIDs.contains(ObjectIdentifier(object)) {
      adopt(object, through: index)
    }
  }

  /// Inserts an object into an ordered to-many relationship; if it is already there, moves it.
  final func insertRelated(_ object: ManagedObject, at position: Int, into index: Int) {
    let relationship = model.relationship(index)!
    checkDestination(object, of: relationship, index)
    let list = slots[index].objects
    guard position >= 0 && position <= list.count else {
      fatalError(
        MisuseMessage.indexOutOfRange(
          position, "insert position", of: self, index, count: list.count, endIsValid: true))
    }
    if let current = list.firstIndex(where: { $0 === object }) {
      moveRelated(from: current, to: min(position, list.count - 1), in: index)
      return
    }
    if let inverse = relationship.inverse, let inverseModel = relationship.inverseModel {
      object.link(self, intoInverse: inverse, of: inverseModel, forward: index)
    }
    editToMany(index, .insert(object, at: position)) { $0.insert(object, at: position) }
    adopt(object, through: index)
  }

  /// Removes the object at a position of an ordered to-many relationship.
  final func removeRelated(at position: Int, from index: Int) {
    let relationship = model.relationship(index)!
    let object = slots[index].objects[position]
    if let inverse = relationship.inverse, let inverseModel = relationship.inverseModel {
      object.unlink(self, fromInverse: inverse, isToMany: inverseModel.isToMany)
    }
    editToMany(index, .remove(at: position)) { $0.remove(at: position) }
  }

  /// Moves an object within an ordered to-many relationship (`Array` semantics: remove at
  /// `from`, then insert at `to`).
  final func moveRelated(from: Int, to: Int, in index: Int) {
    if from == to { return }
    editToMany(index, .move(from: from, to: to)) { $0.insert($0.remove(at: from), at: to) }
  }

  /// Applies an index edit to a to-many slot and records it.
  ///
  /// When the list's value at the last save is not needed (the object is new, or that value
  /// is already recorded), the list is taken out of its slot while it changes, so appending
  /// to a list of *n* objects costs O(1), not a copy of the *n*.
  private final func editToMany(
    _ index: Int, _ edit: ListEditRecord, _ body: (inout [ManagedObject]) -> Void
  ) {
    let needsCommittedValue =
      (lifecycle == .persisted || lifecycle == .deleted) && changes?.committed[index] == nil
    var list = slots[index].objects
    if !needsCommittedValue { slots[index] = .toMany([]) }
    body(&list)
    writeSlot(index, .toMany(list), edit: edit)
  }

  // MARK: Inverse side

  /// Removes `owner` from this object's inverse relationship `index`.
  final func unlink(_ owner: ManagedObject, fromInverse index: Int, isToMany: Bool) {
    if isToMany {
      guard let position = slots[index].objects.firstIndex(where: { $0 === owner }) else {
        return
      }
      editToMany(index, .remove(at: position)) { $0.remove(at: position) }
    } else if slots[index].object === owner {
      writeSlot(index, .toOne(nil))
    }
  }

  /// Makes this object's inverse relationship `index` hold `owner`, taking this object away
  /// from whatever held it before through the forward relationship `forward`.
  final func link(
    _ owner: ManagedObject, intoInverse index: Int, of inverseModel: RelationshipModel,
    forward: Int
  ) {
    if inverseModel.isToMany {
      let list = slots[index].objects
      if list.contains(where: { $0 === owner }) { return }
      editToMany(index, .insert(owner, at: list.count)) { list in
        // A list that starts growing one append at a time (children given their parent)
        // starts with room for four: 1, 2, 4, 8, 16 would reallocate five times for ten.
        if list.isEmpty { list.reserveCapacity(4) }
        list.append(owner)
      }
    } else {
      let previous = slots[index].object
      if previous === owner { return }
      if let previous {
        // `previous` held this object through `forward`; it lets go (one-to-one or to-many).
        let isForwardToMany = owner.model.relationship(forward)!.isToMany
        previous.unlink(self, fromInverse: forward, isToMany: isForwardToMany)
      }
      writeSlot(index, .toOne(owner))
    }
  }

  // MARK: Helpers

  private final func checkDestination(
    _ object: ManagedObject, of relationship: RelationshipModel, _ index: Int
  ) {
    precondition(
      object.isKind(of: relationship.destinationType),
      "ObjectGraph: \(model.name).\(model.properties[index].name) holds "
        + "\(relationship.destinationType), not \(type(of: object))")
  }

  /// Relating two objects (through this object's relationship `index`) puts them in the
  /// same context: whichever is inserted brings the other in. Objects of two contexts stop
  /// the program with a message naming both.
  private final func adopt(_ object: ManagedObject, through index: Int) {
    // Compared and called unretained: see ``isTracked(by:)``.
    switch (trackingReference, object.trackingReference) {
    case (let context?, nil): context._withUnsafeGuaranteedRef { $0.insert(object) }
    case (nil, let context?): context._withUnsafeGuaranteedRef { $0.insert(self) }
    case (let mine?, let theirs?):
      if mine.toOpaque() != theirs.toOpaque() {
        fatalError(
          MisuseMessage.relating(
            self, object, through: index, ownerContext: mine.takeUnretainedValue(),
            objectContext: theirs.takeUnretainedValue()))
      }
    case (nil, nil): break
    }
    if object.lifecycle == .deleted || lifecycle == .deleted, let context = trackingReference,
      object.trackingReference?.toOpaque() == context.toOpaque()
    {
      followDeleteRule(relating: object, through: index)
    }
  }

  /// Relating an object to one deleted in the same context (before the save) follows the
  /// delete rule as if the relation had been there at the delete, so that no save can
  /// refer to an object it deletes: the deleted side's rule (its relationship back, or this
  /// one when this object is the deleted one) cascades (the other object is deleted too) or
  /// nullifies (the relation is undone); deny and no action leave it, and the save then
  /// fails naming both. A relationship without an inverse to a deleted object is undone.
  private final func followDeleteRule(relating object: ManagedObject, through index: Int) {
    guard let context = trackingReference?.takeUnretainedValue() else { return }
    let relationship = model.relationship(index)!
    let (doomed, survivor) = lifecycle == .deleted ? (self, object) : (object, self)
    if doomed === survivor || survivor.lifecycle == .deleted { return }
    let rule: DeleteRule
    if doomed === self {
      rule = relationship.deleteRule
    } else if let inverseModel = relationship.inverseModel {
      rule = inverseModel.deleteRule
    } else {
      rule = .nullify
    }
    switch rule {
    case .cascade:
      context.delete([survivor])
    case .nullify:
      switch slots[index] {
      case .toOne: setToOne(index, to: nil)
      case .toMany: setToMany(index, to: slots[index].objects.filter { $0 !== object })
      case .value, .deferred: break
      }
    case .deny, .noAction:
      break
    }
  }

  final func isKind(of type: ManagedObject.Type) -> Bool {
    var current: AnyClass? = Swift.type(of: self)
    while let candidate = current {
      if candidate == type { return true }
      current = class_getSuperclassPortable(candidate)
    }
    return false
  }
}

/// `class_getSuperclass` without the Objective-C runtime.
private func class_getSuperclassPortable(_ type: AnyClass) -> AnyClass? {
  _getSuperclass(type)
}
