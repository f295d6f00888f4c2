/// How a context treats a save of another context that changed what this context changed
/// and has not saved yet: Core Data's merge policies, by the names its Swift API gives them.
///
/// A context merges every save of the container's other contexts (see
/// ``ObjectContext/processPendingChanges()``). A save *conflicts* with this context when it
/// changed a property this context changed too, changed an object this context deleted, or
/// deleted an object this context changed. Under ``error`` (the default) such a save waits
/// unmerged and this context's ``ObjectContext/save()`` throws
/// ``ObjectGraphError/Code/conflict``; the other policies resolve it as the save is merged:
///
/// ```swift
/// let context = try container.newContext()
/// context.mergePolicy = .mergeByPropertyObjectTrump   // our edits win where both edited
/// ```
///
/// Every policy but ``error`` resolves:
///
/// - an attribute changed on both sides, as the policy says;
/// - an ordered list edited on both sides (one whose inverse, if any, is a to-one): both
///   sides' inserts and removals are kept, each side's moves too, a move of an element the
///   other side removed is dropped, and an element both moved goes where this context put it
///   under the object-trump policies (``mergeByPropertyObjectTrump``, ``overwrite``: the
///   later save wins) and where the store has it under ``mergeByPropertyStoreTrump``;
///   ``rollback`` takes the stored list when this context only reordered it;
/// - a to-one set to different objects on both sides: this context's object under the
///   object-trump policies, the stored one under the store-trump policies; the losing
///   object lets go of it on the inverse side;
/// - the same change made on both sides (a list left alike by both, an object both
///   deleted): it is kept once;
/// - a delete against changes of attributes: the delete wins (an object deleted on one side
///   stays deleted, and the other side's changes to its attributes are dropped).
///
/// A many-to-many list edited on both sides, a delete against changes of relationships, or
/// (under ``rollback``) a change of a list's members or of another relationship of an object
/// in conflict, is still a conflict: a relationship change comes with the changes it made
/// on the inverse side, which a policy cannot keep or drop one at a time.
/// ``ObjectContext/save()`` then throws ``ObjectGraphError/Code/conflict`` naming each one,
/// and ``ObjectContext/rollback()`` takes the stored values.
public enum MergePolicy: Sendable, Hashable {
  /// A conflicting save waits unmerged, and this context's next save throws
  /// ``ObjectGraphError/Code/conflict`` naming each object and property with the stored
  /// value and ours; nothing is written. The default.
  case error
  /// Property by property: each side's changes are kept where they do not overlap; where
  /// both changed an attribute, the stored value wins and this context's change is dropped.
  case mergeByPropertyStoreTrump
  /// Property by property: each side's changes are kept where they do not overlap; where
  /// both changed an attribute, this context's value wins, and its next save writes it.
  case mergeByPropertyObjectTrump
  /// Object by object, the store wins: every change this context made to an object in
  /// conflict is dropped, and the object takes the stored values.
  case rollback
  /// Object by object, this context wins: an object in conflict keeps every value this
  /// context holds, those only the other save changed included, and the next save writes
  /// them over the stored ones.
  case overwrite
}
