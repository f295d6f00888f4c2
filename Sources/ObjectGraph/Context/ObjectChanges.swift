/// What changed on one saved object since the last save: the committed value of each
/// changed property (for rollback and ``ObjectContext/committedValues(of:)``) and, for
/// ordered to-many relationships, the index edits made since (for the store).
///
/// A list changed only by recorded edits keeps no copy of its committed objects: they are
/// the current list with the edits undone, made when asked for (rollback, a save that
/// cannot send the edits). Keeping the old array would make the first edit after each save
/// copy the whole list (it would no longer be the only reference), so a saved move in a list
/// of 100,000 objects would cost 100,000 retains.
///
/// Its two maps are read and changed only by their object's context, one call at a time,
/// so their accesses are not checked at run time (`@exclusivity(unchecked)`): the checks
/// were two thirds of the cost of recording a change (a migration stage writing an
/// attribute of 101,100 boxes spent a tenth of its time in them).
final class ObjectChanges {
  /// The value each changed property held at the last save, but for lists changed only by
  /// edits (``edits``).
  @exclusivity(unchecked) private(set) var committed = PropertyMap<Slot>()
  /// Index edits per to-many property, in the order they were made.
  @exclusivity(unchecked) private(set) var edits = PropertyMap<[ListEditRecord]>()

  /// No change yet.
  init() {}

  /// The first change of an object since the last save, as ``record(_:from:edit:isToMany:)``
  /// records it in empty maps, without their lookups: a migration stage setting an
  /// attribute of each of 101,100 boxes spent 3 of its 17.5 ms in them.
  init(first property: Int, from old: Slot, edit: ListEditRecord?, isToMany: Bool) {
    if let edit, isToMany {
      edits = PropertyMap(property, [edit])
    } else {
      committed = PropertyMap(property, old)
    }
  }

  /// The changed properties: those with a committed value, then those with only edits.
  var changedProperties: [Int] {
    committed.keys + edits.keys.filter { committed[$0] == nil }
  }

  /// Adds the changed properties to `properties` (allocating nothing, as
  /// ``changedProperties`` would).
  func insertChangedProperties(into properties: inout ChangedProperties) {
    for (property, _) in committed { properties.insert(property) }
    for (property, _) in edits { properties.insert(property) }
  }

  /// Whether `property` changed since the last save.
  func hasChanged(_ property: Int) -> Bool {
    committed[property] != nil || edits[property] != nil
  }

  /// The edits of a list changed only by edits since the last save, in order.
  func recordedEdits(of property: Int) -> [ListEditRecord]? {
    committed[property] == nil ? edits[property] : nil
  }

  /// The value `property` held at the last save, given its value now.
  ///
  /// - Complexity: O(1), or O(*n* + *k*) for a list changed by *k* edits.
  func committedValue(of property: Int, current: Slot) -> Slot {
    if let value = committed[property] { return value }
    guard let edits = edits[property] else { return current }
    var list = current.objects
    ListEditRecord.undo(edits, on: &list)
    return .toMany(list)
  }

  /// Whether no property has changed.
  var isEmpty: Bool { committed.isEmpty && edits.isEmpty }

  /// Forgets the change of `property`: its value now is its committed one (a merge gave it
  /// the value another context saved).
  func forget(_ property: Int) {
    committed[property] = nil
    edits[property] = nil
  }

  /// Makes `value` the committed value of changed `property` (another context saved it;
  /// this context's value stays, to be saved over it: a list then as a whole value).
  func rebase(_ property: Int, committed value: Slot) {
    edits[property] = nil
    committed[property] = value
  }

  /// Records a change of `property` from `old`: an index edit of a to-many list (`edit`),
  /// or a new value.
  func record(_ property: Int, from old: Slot, edit: ListEditRecord?, isToMany: Bool) {
    if let edit, isToMany, committed[property] == nil {
      var list = edits[property] ?? []
      edits[property] = nil  // keeps `list` the only reference, so appending copies nothing
      // A remove then an insert of the same object is how a move is written with
      // `remove(at:)` and `insert(_:at:)`: kept as the one move it is.
      if case .insert(let object, let to) = edit, case .remove(let removed, let from)? = list.last,
        removed === object
      {
        list.removeLast()
        if from != to { list.append(.move(from: from, to: to)) }
      } else {
        list.append(edit)
      }
      edits[property] = list
      return
    }
    // A new value: its committed value is kept (made from the edits so far, if any).
    if committed[property] == nil {
      committed[property] = committedValue(of: property, current: old)
    }
    edits[property] = nil
  }
}
