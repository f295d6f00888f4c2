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
    if let newTarget { prepareToRelate(newTarget) }
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
  /// Duplicates keep their first position. Only what changed costs: the common prefix and
  /// suffix of the old and new lists (compared by identity, the cost of reading the array the
  /// caller made) stay, and the differing middle of *m* objects becomes one edit when it is
  /// one (append, insert, remove, single move), or *m* removes and inserts, with the inverses
  /// of the objects that left or came: O(*m*) bookkeeping. A middle that repeats an object or
  /// takes one from the unchanged ends is deduplicated over the whole list.
  @usableFromInline
  final func setToMany(_ index: Int, to requested: [ManagedObject]) {
    let relationship = model.relationship(index)!
    let old = slots[index].objects
    let (prefix, suffix) = commonEnds(old, requested)
    let oldMiddle = old[prefix..<(old.count - suffix)]
    let newMiddle = requested[prefix..<(requested.count - suffix)]
    if oldMiddle.isEmpty && newMiddle.isEmpty { return }
    for object in newMiddle { checkDestination(object, of: relationship, index) }
    prepareToRelate(contentsOf: newMiddle)
    let oldIDs = Set(oldMiddle.lazy.map(ObjectIdentifier.init))
    var newIDs = Set<ObjectIdentifier>(minimumCapacity: newMiddle.count)
    // Whether an object of the new middle is in the list outside the old middle (at an
    // end that stays): O(1) for a list whose inverse is a to-one.
    let isInverseOfToOne =
      relationship.inverse != nil && relationship.inverseModel?.isToMany == false
    let outside = isInverseOfToOne ? nil : Set(old.lazy.map(ObjectIdentifier.init))
    for object in newMiddle {
      let id = ObjectIdentifier(object)
      let isElsewhere =
        !oldIDs.contains(id) && (outside?.contains(id) ?? contains(object, in: index))
      guard newIDs.insert(id).inserted, !isElsewhere else {
        return replaceDeduplicating(index, relationship, old: old, requested: requested)
      }
    }
    if let edit = ListEditRecord.singleEdit(at: prefix, oldMiddle, newMiddle) {
      return apply(edit, to: index)
    }
    if let inverse = relationship.inverse, let inverseModel = relationship.inverseModel {
      for object in oldMiddle where !newIDs.contains(ObjectIdentifier(object)) {
        object.unlink(self, fromInverse: inverse, isToMany: inverseModel.isToMany)
      }
      for object in newMiddle where !oldIDs.contains(ObjectIdentifier(object)) {
        object.link(self, intoInverse: inverse, of: inverseModel, forward: index)
      }
    }
    // The old middle removed from its end, then the new one inserted in order.
    var edits: [ListEditRecord] = []
    edits.reserveCapacity(oldMiddle.count + newMiddle.count)
    for (offset, object) in zip(oldMiddle.indices, oldMiddle).reversed() {
      edits.append(.remove(object, at: offset))
    }
    for (offset, object) in zip(newMiddle.indices, newMiddle) {
      edits.append(.insert(object, at: offset))
    }
    editToMany(index, edits) { $0 = requested }
    for object in newMiddle where !oldIDs.contains(ObjectIdentifier(object)) {
      adopt(object, through: index)
    }
  }

  /// ``setToMany(_:to:)`` for a list that repeats objects: deduplicated (each at its first
  /// position) over the whole list, then replaced.
  private final func replaceDeduplicating(
    _ index: Int, _ relationship: RelationshipModel, old: [ManagedObject],
    requested: [ManagedObject]
  ) {
    var seen = Set<ObjectIdentifier>(minimumCapacity: requested.count)
    var new: [ManagedObject] = []
    new.reserveCapacity(requested.count)
    for object in requested where seen.insert(ObjectIdentifier(object)).inserted {
      checkDestination(object, of: relationship, index)
      PlainArray.append(object, to: &new)
    }
    guard let edit = ListEditRecord.singleEdit(from: old, to: new) else {
      replaceToMany(index, relationship, old: old, new: new, newIDs: seen)
      return
    }
    apply(edit, to: index)
  }

  /// Makes the single edit an assignment of to-many relationship `index` comes to (none for
  /// `nil`) through the relationship's index edits.
  private final func apply(_ edit: ListEditRecord?, to index: Int) {
    switch edit {
    case nil: return
    case .insert(let object, let position)?: insertRelated(object, at: position, into: index)
    case .remove(_, let position)?: removeRelated(at: position, from: index)
    case .move(let from, let to)?: moveRelated(from: from, to: to, in: index)
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
    prepareToRelate(object)
    let relationship = model.relationship(index)!
    checkDestination(object, of: relationship, index)
    let count = slots[index].objects.count
    guard position >= 0 && position <= count else {
      fatalError(
        MisuseMessage.indexOutOfRange(
          position, "insert position", of: self, index, count: count, endIsValid: true))
    }
    if let current = self.position(of: object, in: index) {
      moveRelated(from: current, to: min(position, count - 1), in: index)
      return
    }
    if let inverse = relationship.inverse, let inverseModel = relationship.inverseModel {
      object.link(self, intoInverse: inverse, of: inverseModel, forward: index)
    }
    editToMany(index, .insert(object, at: position)) {
      PlainArray.insert(object, at: position, into: &$0)
    }
    adopt(object, through: index)
  }

  /// Inserts an object as `Array.insert(_:at:)` followed by the relationship's rule that
  /// an object appears once, at its first position: an object already at or after
  /// `position` moves there, one before it stays.
  final func insertRelatedKeepingFirst(_ object: ManagedObject, at position: Int, into index: Int) {
    prepareToRelate(object)
    let count = slots[index].objects.count
    guard position >= 0 && position <= count else {
      fatalError(
        MisuseMessage.indexOutOfRange(
          position, "insert position", of: self, index, count: count, endIsValid: true))
    }
    guard let current = self.position(of: object, in: index) else {
      return insertRelated(object, at: position, into: index)
    }
    if current > position { moveRelated(from: current, to: position, in: index) }
  }

  /// Appends an object as `Array.append(_:)` would, but for an object already in the list,
  /// which stays where it is.
  final func appendRelated(_ object: ManagedObject, to index: Int) {
    prepareToRelate(object)
    checkDestination(object, of: model.relationship(index)!, index)
    if contains(object, in: index) { return }
    insertRelated(object, at: slots[index].objects.count, into: index)
  }

  /// Sets the object at `position` as `Array`'s subscript would, followed by the rule that
  /// an object appears once, at its first position. An object not in the list takes the
  /// place in place: O(1), recorded as the remove and insert it is.
  final func replaceRelated(at position: Int, with object: ManagedObject, in index: Int) {
    prepareToRelate(object)
    checkIndex(position, "position", in: index)
    let relationship = model.relationship(index)!
    checkDestination(object, of: relationship, index)
    let replaced = slots[index].objects[position]
    if replaced === object { return }
    switch self.position(of: object, in: index) {
    case nil:
      if let inverse = relationship.inverse, let inverseModel = relationship.inverseModel {
        replaced.unlink(self, fromInverse: inverse, isToMany: inverseModel.isToMany)
        object.link(self, intoInverse: inverse, of: inverseModel, forward: index)
      }
      editToMany(index, [.remove(replaced, at: position), .insert(object, at: position)]) {
        $0[position] = object
      }
      adopt(object, through: index)
    case let current? where current > position:
      removeRelated(at: position, from: index)
      moveRelated(from: current - 1, to: position, in: index)
    case _?:
      removeRelated(at: position, from: index)  // before `position`: it keeps its place
    }
  }

  /// Exchanges the objects at two positions (`Array.swapAt(_:_:)`) in place: O(1), recorded
  /// as the two moves it is (the one at `high` to `low`, then the one after it to `high`).
  final func swapRelated(_ first: Int, _ second: Int, in index: Int) {
    checkIndex(first, "position", in: index)
    checkIndex(second, "position", in: index)
    if first == second { return }
    let (low, high) = (min(first, second), max(first, second))
    editToMany(index, [.move(from: high, to: low), .move(from: low + 1, to: high)]) { list in
      list.swapAt(low, high)
      list[low].listPositionHint = Int32(truncatingIfNeeded: low)
      list[high].listPositionHint = Int32(truncatingIfNeeded: high)
    }
  }

  /// Removes the object at a position of an ordered to-many relationship; returns it.
  @discardableResult
  final func removeRelated(at position: Int, from index: Int) -> ManagedObject {
    checkIndex(position, "position", in: index)
    let relationship = model.relationship(index)!
    let object = slots[index].objects[position]
    if let inverse = relationship.inverse, let inverseModel = relationship.inverseModel {
      object.unlink(self, fromInverse: inverse, isToMany: inverseModel.isToMany)
    }
    editToMany(index, .remove(object, at: position)) {
      _ = PlainArray.remove(at: position, from: &$0)
    }
    return object
  }

  /// Removes the objects at `positions` (ascending) of an ordered to-many relationship in
  /// one write: O(*n*) for the list, O(1) bookkeeping a removed object.
  final func removeRelated(atOffsets positions: [Int], from index: Int) {
    guard !positions.isEmpty else { return }
    if positions.count == 1 {
      removeRelated(at: positions[0], from: index)
      return
    }
    let relationship = model.relationship(index)!
    let list = slots[index].objects
    let removed = positions.map { list[$0] }
    if let inverse = relationship.inverse, let inverseModel = relationship.inverseModel {
      for object in removed {
        object.unlink(self, fromInverse: inverse, isToMany: inverseModel.isToMany)
      }
    }
    // From the last, so that each edit's position holds when the edits are replayed.
    let edits = zip(removed, positions).reversed().map { ListEditRecord.remove($0, at: $1) }
    editToMany(index, edits) { list in
      var kept: [ManagedObject] = []
      kept.reserveCapacity(list.count - positions.count)
      var next = 0
      for (position, object) in list.enumerated() {
        if next < positions.count, positions[next] == position {
          next += 1
        } else {
          PlainArray.append(object, to: &kept)
        }
      }
      list = kept
    }
  }

  /// Whether `object` is in to-many relationship `index`: O(1) when the relationship's
  /// inverse is a to-one (the object then names its owner), O(*n*) otherwise.
  final func contains(_ object: ManagedObject, in index: Int) -> Bool {
    let relationship = model.relationship(index)!
    if let inverse = relationship.inverse, relationship.inverseModel?.isToMany == false {
      let isHeld = object.slots[inverse].object === self
      assert(
        slots[index].objects.count > Self.checkedListLength
          || isHeld == slots[index].objects.contains { $0 === object }, "inverse out of step")
      return isHeld
    }
    return slots[index].objects.contains { $0 === object }
  }

  /// The position of `object` in to-many relationship `index`, if it is there.
  ///
  /// Found from the object's ``listPositionHint`` (set where it was last inserted or moved
  /// to): O(1) when nothing before it moved since, O(*d*) when the list shifted it by *d*
  /// places (an insert or remove before it shifts it by one), searching outward from the
  /// hint up to ``hintSearchDistance``. Beyond that (a list just loaded, or one shifted far),
  /// one pass finds it and notes every object's position as its hint, so that the next
  /// lookups in that list are short again: O(*n*) once, not at each lookup.
  final func position(of object: ManagedObject, in index: Int) -> Int? {
    guard contains(object, in: index) else { return nil }
    let list = slots[index].objects
    return list.withUnsafeBufferPointer { list in
      let hint = Int(object.listPositionHint)
      if hint >= 0 && hint < list.count {
        if list[hint] === object { return hint }
        for distance in 1...Self.hintSearchDistance {
          let after = hint + distance
          let before = hint - distance
          if after < list.count, list[after] === object { return after }
          if before >= 0, list[before] === object { return before }
          if after >= list.count && before < 0 { break }
        }
      }
      var found: Int?
      for (position, element) in list.enumerated() {
        element.listPositionHint = Int32(truncatingIfNeeded: position)
        if element === object { found = position }
      }
      return found
    }
  }

  /// The longest list whose inverse is checked against a search in debug builds (a check
  /// of every edit of a longer list would make tests quadratic).
  static let checkedListLength = 1_000

  /// How far from its hint an object is looked for before the list is searched whole.
  static let hintSearchDistance = 1_024

  /// Stops the program with a message naming the object and relationship when `position`
  /// is not a position of its list.
  private final func checkIndex(_ position: Int, _ role: String, in index: Int) {
    let count = slots[index].objects.count
    guard position >= 0 && position < count else {
      fatalError(MisuseMessage.indexOutOfRange(position, role, of: self, index, count: count))
    }
  }

  /// Moves an object within an ordered to-many relationship (`Array` semantics: remove at
  /// `from`, then insert at `to`).
  final func moveRelated(from: Int, to: Int, in index: Int) {
    if from == to { return }
    editToMany(index, .move(from: from, to: to)) { $0.moveElement(from: from, to: to) }
  }

  /// Applies an index edit to a to-many slot and records it.
  ///
  /// The list is taken out of its slot while it changes, so that it is its only holder and
  /// changes in place: appending to a list of *n* objects costs O(1), not a copy of the *n*.
  /// Its value at the last save is not needed: the recorded edits undo to it
  /// (``ObjectChanges/committedValue(of:current:)``).
  private final func editToMany(
    _ index: Int, _ edit: ListEditRecord, _ body: (inout [ManagedObject]) -> Void
  ) {
    var list = slots[index].objects
    slots[index] = isDraft ? slots[index].lendingList : .toMany([])
    body(&list)
    switch edit {
    case .insert(let object, let position):
      object.listPositionHint = Int32(truncatingIfNeeded: position)
    case .move(_, let to): list[to].listPositionHint = Int32(truncatingIfNeeded: to)
    case .remove: break
    }
    writeSlot(index, .toMany(list), edit: edit)
  }

  /// ``editToMany(_:_:_:)`` for several edits made by one change (removes, then inserts
  /// at their final positions).
  private final func editToMany(
    _ index: Int, _ edits: [ListEditRecord], _ body: (inout [ManagedObject]) -> Void
  ) {
    var list = slots[index].objects
    slots[index] = isDraft ? slots[index].lendingList : .toMany([])
    body(&list)
    for case .insert(let object, let position) in edits {
      object.listPositionHint = Int32(truncatingIfNeeded: position)
    }
    writeSlot(index, .toMany(list), edits: edits)
  }

  // MARK: Inverse side

  /// Removes `owner` from this object's inverse relationship `index`.
  final func unlink(_ owner: ManagedObject, fromInverse index: Int, isToMany: Bool) {
    if isToMany {
      guard let position = position(of: owner, in: index) else { return }
      editToMany(index, .remove(owner, at: position)) {
        _ = PlainArray.remove(at: position, from: &$0)
      }
    } else if slots[index].object === owner {
      writeSlot(index, .toOne(nil))
    }
  }

  /// Removes `owner` from this object's inverse relationship `index`, found by a search and
  /// without touching `owner`'s side: for a merge that settled `owner`'s to-one on another
  /// object and left this side holding it (``ObjectContext`` settling a to-one both
  /// contexts set). A tracked change, as any edit of the relationship.
  ///
  /// - Complexity: O(*n*) in the list's objects.
  final func dropStale(_ owner: ManagedObject, fromInverse index: Int, isToMany: Bool) {
    if isToMany {
      guard let position = slots[index].objects.firstIndex(where: { $0 === owner }) else {
        return
      }
      editToMany(index, .remove(owner, at: position)) {
        _ = PlainArray.remove(at: position, from: &$0)
      }
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
      // `owner` just set its to-one to this object, which it did not name before: when the
      // list is the inverse of that to-one, the owner is not in it.
      let isInverseOfToOne = owner.model.relationship(forward)?.isToMany == false
      if !isInverseOfToOne, contains(owner, in: index) { return }
      assert(
        slots[index].objects.count > Self.checkedListLength
          || !slots[index].objects.contains { $0 === owner }, "inverse out of step")
      let count = slots[index].objects.count
      editToMany(index, .insert(owner, at: count)) { list in
        // A list that starts growing one append at a time (children given their parent)
        // starts with room for four: 1, 2, 4, 8, 16 would reallocate five times for ten.
        if list.isEmpty { list.reserveCapacity(4) }
        PlainArray.append(owner, to: &list)
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

  /// Readies this object and `object` to be related: two objects in no context join one
  /// draft graph (see ``DraftGraph``); a draft about to enter a context (the other
  /// object's) becomes an ordinary object first, with every draft it reaches.
  @inline(__always)
  private final func prepareToRelate(_ object: ManagedObject) {
    guard needsPreparing(object) else { return }
    prepareToRelateSlowly(CollectionOfOne(object))
  }

  /// ``prepareToRelate(_:)`` for several objects (a list's new objects).
  private final func prepareToRelate(contentsOf objects: ArraySlice<ManagedObject>) {
    guard objects.contains(where: needsPreparing) else { return }
    prepareToRelateSlowly(objects)
  }

  /// Whether relating `object` to this object involves a draft, or makes two (both in no
  /// context).
  @inline(__always)
  private final func needsPreparing(_ object: ManagedObject) -> Bool {
    isDraft || object.isDraft || (trackingReference == nil && object.trackingReference == nil)
  }

  @inline(never)
  private final func prepareToRelateSlowly(_ objects: some Collection<ManagedObject>) {
    // A released object's relationships refuse the write; one without inverse is held.
    if isReleased { return }
    let entersContext = trackingReference != nil || objects.contains { $0.trackingReference != nil }
    if entersContext {
      if isDraft { DraftGraph.release(from: self) }
      for object in objects where object.isDraft { DraftGraph.release(from: object) }
    } else {
      for object in objects where !object.isReleased { DraftGraph.join(self, object) }
    }
  }

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
      case .value, .deferred, .released, .draft, .draftList: break
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

extension Slot {
  /// The slot while its list is taken out to change in place (so that the taken array is
  /// its storage's only holder): empty, or a draft's as it is (its graph keeps its numbers).
  fileprivate var lendingList: Slot {
    switch self {
    case .draftList(_, let membership): .draftList([], membership)
    case .draft: self
    case .value, .deferred, .toOne, .toMany, .released: .toMany([])
    }
  }
}

/// `class_getSuperclass` without the Objective-C runtime.
private func class_getSuperclassPortable(_ type: AnyClass) -> AnyClass? {
  _getSuperclass(type)
}
