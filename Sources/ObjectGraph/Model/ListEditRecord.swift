/// An index operation on an ordered to-many relationship, as recorded by the context between
/// saves; turned into a ``ListEdit`` (with object identifiers) when saved.
enum ListEditRecord {
  case insert(ManagedObject, at: Int)
  /// The object removed, kept so that the edit can be undone.
  case remove(ManagedObject, at: Int)
  case move(from: Int, to: Int)

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
  /// insertion, one removal or one element moved to the other end. This recognizes the
  /// array operations users perform on a relationship property (`append`, `insert(_:at:)`,
  /// `remove(at:)`, `move(fromOffsets:toOffset:)` of one row).
  ///
  /// - Complexity: O(*n*), comparing identities.
  static func singleEdit(from old: [ManagedObject], to new: [ManagedObject]) -> ListEditRecord?? {
    var prefix = 0
    let limit = min(old.count, new.count)
    while prefix < limit, old[prefix] === new[prefix] { prefix += 1 }
    if prefix == old.count, prefix == new.count { return .some(nil) }
    var suffix = 0
    while suffix < limit - prefix, old[old.count - 1 - suffix] === new[new.count - 1 - suffix] {
      suffix += 1
    }
    let oldMiddle = old[prefix..<(old.count - suffix)]
    let newMiddle = new[prefix..<(new.count - suffix)]
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
