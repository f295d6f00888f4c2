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

  /// Creates a fetch descriptor.
  public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
    self.predicate = predicate
    self.sortBy = sortBy
  }
}
