/// An index operation on an ordered to-many relationship, as recorded by the context between
/// saves; turned into a ``ListEdit`` (with object identifiers) when saved.
enum ListEditRecord {
  case insert(ManagedObject, at: Int)
  /// The object removed, kept so that the edit can be undone.
  case remove(ManagedObject, at: Int)
  case move(from: Int, to: Int)

  /// The edits that undo `edits` (made in this order), in the order to make them: each
  /// one's inverse, the last first.
  ///
  /// - Complexity: O(*k*) edits.
  static func inverses(of edits: [ListEditRecord]) -> [ListEditRecord] {
    edits.reversed().map { edit in
      switch edit {
      case .insert(let object, let position): .remove(object, at: position)
      case .remove(let object, let position): .insert(object, at: position)
      case .move(let from, let to): .move(from: to, to: from)
      }
    }
  }

  /// Undoes `edits`, made in this order, on the list they turned `list` into.
  ///
  /// - Complexity: O(*k*) edits, each with the array's own work.
  static func undo(_ edits: [ListEditRecord], on list: inout [ManagedObject]) {
    for edit in edits.reversed() {
      switch edit {
      case .insert(_, let position): _ = PlainArray.remove(at: position, from: &list)
      case .remove(let object, let position): PlainArray.insert(object, at: position, into: &list)
      case .move(let from, let to): list.moveElement(from: to, to: from)
      }
    }
  }

  /// The single edit that turns `old` into `new`, if there is one.
  ///
  /// Finds the common prefix and suffix, then checks whether the differing middle is one
  /// edit (``singleEdit(at:_:_:)``). This recognizes the array operations users perform on a
  /// relationship property (`append`, `insert(_:at:)`, `remove(at:)`,
  /// `move(fromOffsets:toOffset:)` of one row).
  ///
  /// - Complexity: O(*n*), comparing identities.
  static func singleEdit(from old: [ManagedObject], to new: [ManagedObject]) -> ListEditRecord?? {
    let (prefix, suffix) = commonEnds(old, new)
    return singleEdit(
      at: prefix, old[prefix..<(old.count - suffix)], new[prefix..<(new.count - suffix)])
  }

  /// The single edit that turns the differing middle `oldMiddle` of a list, starting at
  /// `prefix`, into `newMiddle`: none (`.some(nil)`) when both are empty, one insertion, one
  /// removal, or one element moved to the other end; `nil` when it is more than one edit.
  ///
  /// - Complexity: O(*m*) in the middles.
  static func singleEdit(
    at prefix: Int, _ oldMiddle: ArraySlice<ManagedObject>, _ newMiddle: ArraySlice<ManagedObject>
  ) -> ListEditRecord?? {
    if oldMiddle.isEmpty, newMiddle.isEmpty { return .some(nil) }
    if oldMiddle.isEmpty, newMiddle.count == 1 {
      return .insert(newMiddle.first!, at: prefix)
    }
    if newMiddle.isEmpty, oldMiddle.count == 1 {
      return .remove(oldMiddle.first!, at: prefix)
    }
    if oldMiddle.count == newMiddle.count, oldMiddle.count >= 2 {
      let last = oldMiddle.count - 1
      if newMiddle.first! === oldMiddle.last!,
        zip(oldMiddle.dropLast(), newMiddle.dropFirst()).allSatisfy({ $0 === $1 })
      {
        return .move(from: prefix + last, to: prefix)
      }
      if newMiddle.last! === oldMiddle.first!,
        zip(oldMiddle.dropFirst(), newMiddle.dropLast()).allSatisfy({ $0 === $1 })
      {
        return .move(from: prefix, to: prefix + last)
      }
    }
    return nil
  }
}
