/// Versions: the store's contents count the saves of the container's contexts
/// (``ObjectContainer/storeVersion``); a context's objects are at the version it last merged
/// or saved (``storeVersion``), each object at the version of the last save that changed it
/// (``storeVersion(of:)``), and every save says the version it is based on
/// (``Changeset/baseVersion``). A context saves only from the latest version: one that is
/// behind merges the saves it missed first, checking them object by object and property by
/// property against its own changes (a conflict, or its ``mergePolicy``) and rebasing its
/// list edits, then makes its changeset again.
extension ObjectContext {
  /// The version of the store's contents this context's objects are at: the saves of the
  /// container's contexts it has merged or made. It equals the container's
  /// ``ObjectContainer/storeVersion`` once it has merged every save.
  ///
  /// ```swift
  /// let background = try container.newContext()
  /// try container.mainContext.save()                   // another context's save
  /// background.storeVersion < container.storeVersion     // true until it merges
  /// background.processPendingChanges()                 // merges
  /// background.storeVersion == container.storeVersion    // true
  /// ```
  ///
  /// - Complexity: O(1).
  public var storeVersion: UInt64 {
    beginUse()
    defer { endUse() }
    return mergedVersion
  }

  /// The store version of the last save that changed `object` (inserted it, or changed a
  /// property of it, on either side of a relationship) as this context knows it: its own
  /// save or one it merged; for an object unchanged since this context loaded it, the
  /// version it loaded at. Nil for an object not saved yet, deleted, or of another context.
  ///
  /// - Complexity: O(1).
  public func storeVersion(of object: ManagedObject) -> UInt64? {
    beginUse()
    defer { endUse() }
    guard object.isTracked(by: self), object.lifecycle == .persisted else { return nil }
    return object.savedVersion == 0 ? loadedVersion : object.savedVersion
  }
}
