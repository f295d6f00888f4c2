/// The declared type of a relationship, for a ``ManagedObject`` subclass `T`: `T?` (to-one),
/// `T` (a required to-one, set before the object is saved), `[T]` (ordered to-many, which
/// always keeps the order you give it) or `[T]?` (the same list, in the shape CloudKit-synced
/// SwiftData models declare). You do not conform to this protocol yourself.
public protocol RelationshipValue {
  /// The class of the related objects (`ManagedObject` for `T` and `T?`, whose class is
  /// ``destinationType``).
  associatedtype Destination: ManagedObject
  /// The empty value: nil or `[]`.
  init()
  /// The class of the related objects.
  static var destinationType: ManagedObject.Type { get }
  /// Whether the relationship is to-many.
  static var isToMany: Bool { get }
  /// How the declared type holds the related objects.
  static var relationshipShape: RelationshipShape { get }
}

/// How a relationship's declared type holds its objects.
@frozen public enum RelationshipShape: Sendable {
  /// `T?`: an object or nil.
  case optionalToOne
  /// `T`: an object, which a save requires.
  case requiredToOne
  /// `[T]`: an ordered list.
  case toMany
  /// `[T]?`: an ordered list, read as `[]` rather than nil when empty; setting nil empties it.
  case optionalToMany
  /// A type no relationship can have (`T??`, `[T]??`): the container refuses it.
  case unsupported
}

extension ManagedObject: RelationshipValue {
  public typealias Destination = ManagedObject
  public class var destinationType: ManagedObject.Type { self }
  @inlinable public static var isToMany: Bool { false }
  @inlinable public static var relationshipShape: RelationshipShape { .requiredToOne }
}

extension Optional: RelationshipValue where Wrapped: RelationshipValue {
  public typealias Destination = Wrapped.Destination
  public init() { self = nil }
  public static var destinationType: ManagedObject.Type { Wrapped.destinationType }
  @inlinable public static var isToMany: Bool { Wrapped.isToMany }
  @inlinable public static var relationshipShape: RelationshipShape {
    switch Wrapped.relationshipShape {
    case .requiredToOne: .optionalToOne
    case .toMany: .optionalToMany
    case .optionalToOne, .optionalToMany, .unsupported: .unsupported
    }
  }
}

extension Array: RelationshipValue where Element: ManagedObject {
  public typealias Destination = Element
  public static var destinationType: ManagedObject.Type { Element.self }
  @inlinable public static var isToMany: Bool { true }
  @inlinable public static var relationshipShape: RelationshipShape { .toMany }
}
