/// The framework-owned storage of one property of one object, indexed by property number.
@usableFromInline
enum Slot {
  /// An attribute's value.
  case value(PersistentValue)
  /// A to-one relationship's object.
  case toOne(ManagedObject?)
  /// A to-many relationship's objects, in order.
  case toMany([ManagedObject])
  /// An attribute whose value is made on first use: a default, or a stored string not yet
  /// decoded (see ``DeferredValue``).
  case deferred(DeferredValue)

  @inlinable
  var object: ManagedObject? {
    if case .toOne(let object) = self { return object }
    return nil
  }

  @inlinable
  var objects: [ManagedObject] {
    switch self {
    case .toMany(let objects): objects
    case .toOne(let object): object.map { [$0] } ?? []
    case .value, .deferred: []
    }
  }

  /// The attribute's value: a stored string decoded (each time), `.null` for a default
  /// not made yet and for relationships.
  @usableFromInline
  var value: PersistentValue {
    switch self {
    case .value(let value): value
    case .deferred(let pending): pending.storedValue ?? .null
    case .toOne, .toMany: .null
    }
  }
}
