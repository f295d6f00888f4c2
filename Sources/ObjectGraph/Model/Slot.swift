/// The framework-owned storage of one property of one object, indexed by property number.
@usableFromInline
enum Slot {
  /// An attribute's value.
  case value(PersistentValue)
  /// A to-one relationship's object.
  case toOne(ManagedObject?)
  /// A to-many relationship's objects, in order.
  case toMany([ManagedObject])
  /// An attribute whose default value is made on first use (see ``DeferredDefault``).
  case deferred(DeferredDefault)

  @usableFromInline
  var object: ManagedObject? {
    if case .toOne(let object) = self { return object }
    return nil
  }

  @usableFromInline
  var objects: [ManagedObject] {
    switch self {
    case .toMany(let objects): objects
    case .toOne(let object): object.map { [$0] } ?? []
    case .value, .deferred: []
    }
  }

  @usableFromInline
  var value: PersistentValue {
    if case .value(let value) = self { return value }
    return .null
  }
}
