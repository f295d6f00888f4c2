import Foundation

/// What to fetch: objects of one model class matching a predicate, sorted, limited.
///
/// ```swift
/// let roots = try context.fetch(FetchDescriptor<Box>(
///   predicate: #Predicate { $0.parent == nil },
///   sortBy: [SortDescriptor(\.created)]))
/// ```
///
/// Equality on a unique or indexed attribute, and on a to-one relationship (`parent == box`,
/// `parent == nil`), alone or joined with `&&`, is answered from an index; other predicates
/// are evaluated on every object of the class.
public struct FetchDescriptor<T: ManagedObject> {
  /// The objects to include; all when nil.
  public var predicate: Predicate<T>?
  /// The order of the results. Without sort descriptors, results come in ``ObjectID`` order
  /// (creation order). Ties keep ``ObjectID`` order.
  public var sortBy: [SortDescriptor<T>]
  /// The most results to return.
  public var fetchLimit: Int?
  /// How many of the sorted results to skip.
  public var fetchOffset: Int?
  /// Relationships whose objects the results will be read through (SwiftData's hint for
  /// loading them with the results).
  ///
  /// ```swift
  /// var descriptor = FetchDescriptor<Box>()
  /// descriptor.relationshipKeyPathsForPrefetching = [\.children]
  /// ```
  ///
  /// Accepted for SwiftData's sake and a hint only: the built-in stores hold every object in
  /// memory, loaded when the context is made, so it changes nothing. O(1): it is not read.
  public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []
  /// Whether the results include the context's unsaved changes (SwiftData's property).
  ///
  /// ```swift
  /// context.insert(Box(title: "new"))
  /// try context.fetchCount(FetchDescriptor<Box>())  // counts the unsaved box
  /// ```
  ///
  /// A fetch always answers from the context's objects, pending changes included: unsaved
  /// inserts are found, unsaved deletes are not, and predicates see unsaved values. `false`
  /// is accepted for SwiftData's sake and changes nothing. O(1): it is not read.
  public var includePendingChanges = true

  /// Creates a fetch descriptor.
  public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
    self.predicate = predicate
    self.sortBy = sortBy
  }
}
