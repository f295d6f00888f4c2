import Foundation

/// How a stored value stands against the value a predicate compares it with.
enum Relation {
  case less, equal, greater
  /// Neither: values that are not equal and not ordered (`Double.nan`, two different URLs).
  case unordered
  /// The read found no value (a nil attribute or a nil related object) and the compared value
  /// is not nil.
  case absent
}

/// A comparison a predicate makes: `==`, `!=`, `<`, `<=`, `>`, `>=`.
enum ComparisonTest {
  case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual

  init(_ op: PredicateExpressions.ComparisonOperator) {
    switch op {
    case .lessThan: self = .less
    case .lessThanOrEqual: self = .lessOrEqual
    case .greaterThan: self = .greater
    case .greaterThanOrEqual: self = .greaterOrEqual
    }
  }

  /// The comparison with its operands swapped (`x < $0.n` is `$0.n > x`).
  var swapped: ComparisonTest {
    switch self {
    case .equal, .notEqual: self
    case .less: .greater
    case .lessOrEqual: .greaterOrEqual
    case .greater: .less
    case .greaterOrEqual: .lessOrEqual
    }
  }

  /// Whether it needs an order, not only equality.
  var isOrdering: Bool { self != .equal && self != .notEqual }

  /// Whether a value in `relation` to the compared one passes, as the Swift operator says.
  @inline(__always)
  func accepts(_ relation: Relation) -> Bool {
    switch self {
    case .equal: relation == .equal
    case .notEqual: relation != .equal
    case .less: relation == .less
    case .lessOrEqual: relation == .less || relation == .equal
    case .greater: relation == .greater
    case .greaterOrEqual: relation == .greater || relation == .equal
    }
  }
}

/// A value a translated predicate reads from the object it tests, through the object's slots:
/// `$0.title`, `$0.parent?.title`, `$0.children.count`, `$0.parent`, `$0` itself.
struct StoredRead {
  /// What is read on the object reached.
  enum Target {
    /// Attribute `property`.
    case attribute(Int, AttributeDescription)
    /// To-one relationship `property`'s object, or (nil) the object reached itself.
    case object(Int?)
    /// To-many relationship `property`'s objects.
    case objects(Int)
    /// The number of to-many relationship `property`'s objects.
    case count(Int)
    /// Whether to-many relationship `property` holds no object.
    case isEmpty(Int)
  }

  /// The to-one relationships followed from the tested object, in order; a nil one makes
  /// the read nil (optional chaining).
  var hops: [Int] = []
  var target: Target
  /// The model of the object reached, whose properties ``target`` names.
  var model: EntityModel
  /// The value that `??` gives when the read is nil.
  var coalesced: PersistentValue?

  /// The model of the objects an object-valued read (``Target/object(_:)``,
  /// ``Target/objects(_:)``) yields.
  var objectModel: EntityModel? {
    switch target {
    case .object(nil): model
    case .object(let property?), .objects(let property):
      model.relationship(property)?.destination
    default: nil
    }
  }

  /// The read of `keyPath` on the object this read yields, if it reads a property exactly.
  func appending(_ keyPath: AnyKeyPath) -> StoredRead? {
    guard coalesced == nil else { return nil }
    switch target {
    case .object(let property):
      guard let destination = objectModel,
        let resolved = destination.resolvedProperty(for: keyPath)
      else { return nil }
      let hops = property.map { self.hops + [$0] } ?? self.hops
      switch resolved {
      case .attribute(let index, let description):
        return StoredRead(hops: hops, target: .attribute(index, description), model: destination)
      case .toOne(let index, _):
        return StoredRead(hops: hops, target: .object(index), model: destination)
      case .toMany(let index, _):
        return StoredRead(hops: hops, target: .objects(index), model: destination)
      }
    case .objects, .attribute, .count, .isEmpty:
      return nil
    }
  }

  /// The read of `count` or `isEmpty` on a to-many read's objects, if `keyPath` reads one
  /// of them: found by reading it on arrays of 0, 2 and 3 objects, since a key path written
  /// in the app (`\[Box].count`) does not compare equal to one made here for any class.
  func appendingAggregate<Objects, Value>(_ keyPath: KeyPath<Objects, Value>) -> StoredRead? {
    guard coalesced == nil, case .objects(let property) = target,
      let prototype = objectModel?.prototype,
      let samples = [0, 2, 3].map({ Array(repeating: prototype, count: $0) as? Objects })
        as? [Objects]
    else { return nil }
    let values = samples.map { $0[keyPath: keyPath] }
    if let counts = values as? [Int], counts == [0, 2, 3] {
      return StoredRead(hops: hops, target: .count(property), model: model)
    }
    if let flags = values as? [Bool], flags == [true, false, false] {
      return StoredRead(hops: hops, target: .isEmpty(property), model: model)
    }
    return nil
  }

  /// The read followed by the object it yields: a read of `$0.parent` then one of the
  /// parent's `title` (`$0.parent?.title`), for optional chaining.
  func chained(with inner: StoredRead) -> StoredRead? {
    guard coalesced == nil, case .object(let property) = target else { return nil }
    return StoredRead(
      hops: hops + (property.map { [$0] } ?? []) + inner.hops, target: inner.target,
      model: inner.model, coalesced: inner.coalesced)
  }

  /// The object the hops reach from `object`, nil where one of them holds none.
  @inline(__always)
  func reached(from object: ManagedObject) -> ManagedObject? {
    var current = object
    for hop in hops {
      guard let next = current.slots[hop].object else { return nil }
      current = next
    }
    return current
  }

  /// A test that compares the read value with `constant` (a captured value, nil for `nil`),
  /// or nil when the value's type is not one compared here.
  func test(_ comparison: ComparisonTest, _ constant: Any?) -> ObjectTest? {
    guard let relation = relation(to: constant, ordered: comparison.isOrdering) else {
      return nil
    }
    return { comparison.accepts(relation($0)) }
  }

  /// How the read value of an object stands against `constant`.
  func relation(to constant: Any?, ordered: Bool) -> ((ManagedObject) -> Relation)? {
    let read: (ManagedObject) -> Relation
    switch target {
    case .attribute(let property, let description):
      guard
        let compare = SlotComparison.make(
          for: description.type, constant: constant, ordered: ordered)
      else { return nil }
      // A nil value (an absent attribute, or a nil related object on the way) equals nil,
      // or is replaced by the `??` default.
      var absent: Relation = constant == nil ? .equal : .absent
      if let coalesced {
        var slot = Slot.value(coalesced)
        absent = compare(&slot)
        if absent == .absent { return nil }
      }
      if hops.isEmpty {
        return { object in
          let relation = compare(object.slots + property)
          return relation == .absent ? absent : relation
        }
      }
      read = { object in
        guard let reached = self.reached(from: object) else { return absent }
        let relation = compare(reached.slots + property)
        return relation == .absent ? absent : relation
      }
    case .object(let property):
      guard coalesced == nil else { return nil }
      let target: ManagedObject?
      switch constant {
      case nil: target = nil
      case let object as ManagedObject: target = object
      default: return nil
      }
      if hops.isEmpty, let property {
        // `$0.parent == nil`, on every object of a scan: read in place, retaining nothing.
        let identity = target.map { ObjectIdentifier($0) }
        return { object in
          (object.slots + property).relatedIdentity == identity ? .equal : .unordered
        }
      }
      read = { object in
        var related = self.reached(from: object)
        if let property { related = related?.slots[property].object }
        return related === target ? .equal : .unordered
      }
    case .count(let property):
      guard coalesced == nil else { return nil }
      let target: Int?
      switch constant {
      case nil: target = nil
      case let count as Int: target = count
      default: return nil
      }
      read = { object in
        guard let reached = self.reached(from: object) else {
          return target == nil ? .equal : .absent
        }
        guard let target else { return .unordered }
        guard case .toMany(let objects) = reached.slots[property] else { return .absent }
        return objects.count < target ? .less : objects.count == target ? .equal : .greater
      }
    case .isEmpty(let property):
      guard coalesced == nil else { return nil }
      let target: Bool?
      switch constant {
      case nil: target = nil
      case let isEmpty as Bool: target = isEmpty
      default: return nil
      }
      read = { object in
        guard let reached = self.reached(from: object) else {
          return target == nil ? .equal : .absent
        }
        guard let target else { return .unordered }
        return reached.slots[property].objects.isEmpty == target ? .equal : .unordered
      }
    case .objects:
      return nil
    }
    return read
  }

  /// The related objects of a to-many read, empty where a hop holds none.
  func objects(of object: ManagedObject) -> [ManagedObject]? {
    guard case .objects(let property) = target else { return nil }
    return reached(from: object)?.slots[property].objects
  }
}
