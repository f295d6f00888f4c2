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
  /// A relationship of an object never inserted into a context that is related to another
  /// such object: the related objects' numbers in their graph (see ``DraftGraph``).
  case draft(DraftMembership, property: Int32)
  /// A list of an object never inserted into a context whose inverse is a to-one: the
  /// objects, held, and their numbers in the graph (see ``DraftGraph``).
  case draftList([ManagedObject], DraftMembership)

  @inlinable
  var object: ManagedObject? {
    switch self {
    case .toOne(let object): object
    case .released(let link): link.object
    case .draft, .draftList: draftObject
    case .toMany, .value, .deferred: nil
    }
  }

  @inlinable
  var objects: [ManagedObject] {
    switch self {
    case .toMany(let objects): objects
    case .toOne(let object): object.map { [$0] } ?? []
    case .released(let link): link.objects
    case .draft, .draftList: draftObjects
    case .value, .deferred: []
    }
  }

  /// ``object`` of a draft's slot, out of line: the accessors stay small enough to inline.
  @usableFromInline @inline(never)
  var draftObject: ManagedObject? {
    guard case .draft(let membership, let property) = self else { return nil }
    return membership.object(property)
  }

  /// ``objects`` of a draft's slot, out of line: the accessors stay small enough to inline.
  @usableFromInline @inline(never)
  var draftObjects: [ManagedObject] {
    switch self {
    case .draft(let membership, let property): membership.objects(property)
    case .draftList(let objects, _): objects
    case .value, .deferred, .toOne, .toMany, .released: []
    }
  }

  /// The draft graph place of a relationship of a draft (see ``DraftGraph``).
  var draftMembership: DraftMembership? {
    switch self {
    case .draft(let membership, _), .draftList(_, let membership): membership
    case .value, .deferred, .toOne, .toMany, .released: nil
    }
  }

  /// The attribute's value: a stored string decoded (each time), `.null` for a default
  /// not made yet and for relationships.
  @usableFromInline
  var value: PersistentValue {
    switch self {
    case .value(let value): value
    case .deferred(let pending): pending.storedValue ?? .null
    case .toOne, .toMany, .released, .draft, .draftList: .null
    }
  }
}
