/// What changed on one saved object since the last save: the committed value of each
/// changed property (for rollback and ``ObjectContext/committedValues(of:)``) and, for
/// ordered to-many relationships, the index edits made since (for the store).
final class ObjectChanges {
  /// The value each changed property held at the last save.
  var committed = PropertyMap<Slot>()
  /// Index edits per to-many property, in the order they were made.
  var edits = PropertyMap<[ListEditRecord]>()
  /// To-many properties replaced in a way that is not a sequence of recorded edits.
  var replaced: [Int] = []

  /// Records a change of `property` from `old`.
  func record(_ property: Int, from old: Slot, edit: ListEditRecord?, isToMany: Bool) {
    if committed[property] == nil { committed[property] = old }
    guard isToMany else { return }
    if let edit, !replaced.contains(property) {
      var list = edits[property] ?? []
      edits[property] = nil  // keeps `list` the only reference, so appending copies nothing
      list.append(edit)
      edits[property] = list
    } else {
      if !replaced.contains(property) { replaced.append(property) }
      edits[property] = nil
    }
  }
}
