/// SwiftData's name for an object's identity: ``ObjectID``.
///
/// ```swift
/// let id: PersistentIdentifier = box.persistentModelID!
/// ```
public typealias PersistentIdentifier = ObjectID

extension ManagedObject {
  /// The object's identifier, under SwiftData's name: the same as ``objectID``, nil until the
  /// object is inserted into a context.
  ///
  /// ```swift
  /// context.insert(box)
  /// box.persistentModelID == box.objectID  // true
  /// ```
  ///
  /// - Complexity: O(1).
  public final var persistentModelID: PersistentIdentifier? { objectID }
}
