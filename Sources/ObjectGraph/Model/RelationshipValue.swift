/// The declared type of a relationship: `T?` (to-one) or `[T]` (ordered to-many) for a
/// ``ManagedObject`` subclass `T`. You do not conform to this protocol yourself.
public protocol RelationshipValue {
  /// The class of the related objects.
  associatedtype Destination: ManagedObject
  /// The empty value: nil or `[]`.
  init()
  /// The class of the related objects.
  static var destinationType: ManagedObject.Type { get }
  /// Whether the relationship is to-many.
  static var isToMany: Bool { get }
}

extension Optional: RelationshipValue where Wrapped: ManagedObject {
  public typealias Destination = Wrapped
  public init() { self = nil }
  public static var destinationType: ManagedObject.Type { Wrapped.self }
  public static var isToMany: Bool { false }
}

extension Array: RelationshipValue where Element: ManagedObject {
  public typealias Destination = Element
  public static var destinationType: ManagedObject.Type { Element.self }
  public static var isToMany: Bool { true }
}
