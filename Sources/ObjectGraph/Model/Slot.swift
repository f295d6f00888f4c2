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
  /// A relationship of an object whose context was released while the app held it: the
  /// related objects' numbers in the graph the context left behind (see ``ReleasedGraph``).
  case released(ReleasedLink)

  @inlinable
  var object: ManagedObject? {
    switch self {
    case .toOne(let object): object
    case .released(let link): link.object
    case .toMany, .value, .deferred: nil
    }
  }

  @inlinable
  var objects: [ManagedObject] {
    switch self {
    case .toMany(let objects): objects
    case .toOne(let object): object.map { [$0] } ?? []
    case .released(let link): link.objects
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
    case .toOne, .toMany, .released: .null
    }
  }
}
