/// The objects a released context leaves behind while the app still holds some of them.
///
/// A context holds all its objects, and related objects hold each other both ways. When
/// the context goes away, the objects nobody else holds are freed. An object the app still
/// holds (a *survivor*: a view's row, an export's account) keeps its values, and its
/// relationships must keep answering as they did, never silently `nil` or empty:
///
/// ```swift
/// var account: Account!
/// do {
///   let context = ObjectContext(container)
///   account = try context.fetch(FetchDescriptor<Account>()).first
/// }                                      // the context is released here
/// account.transactions.count             // as before the release
/// account.transactions[0].account === account  // true
/// ```
///
/// Holding the related objects themselves would keep parent/child cycles that nothing
/// breaks, so a survivor's relationships become object numbers in this graph
/// (``ReleasedLink``, in the relationship's slot), and the graph keeps, for every object a
/// survivor can reach, its *values* rather than its instance. Reading a relationship makes
/// the related objects from those values, or answers the instance in use if there is one:
/// instances hold the graph, the graph holds no instance that holds it (it refers to them
/// weakly), so no cycle forms, and the graph is freed with the last instance that can reach
/// it. An instance freed while the graph lives gives its values back to it first (its
/// attribute changes since the release are kept).
///
/// A released context's objects are read-only in their relationships: changing one (on
/// either side) stops the program naming the object and the relationship, as using a
/// deleted object does; their attributes can still change. Nothing here is thread-safe: the
/// objects of a context stay on the context's actor after its release, as before it.
///
/// - Complexity: the release costs O(*n* + *r*) in the context's objects and relationship
///   entries, and keeps the values of the objects the survivors reach (memory as for the
///   objects themselves). Reading a relationship of *k* objects costs O(*k*), making the
///   objects no instance is in use for.
final class ReleasedGraph {
  /// One object a survivor can reach.
  private struct Member {
    let model: EntityModel
    /// Its relationships that held objects, as the numbers of those objects in order.
    let links: [(property: Int, numbers: [UInt64])]
    /// Its slots (relationships empty) to make it from; nil while an instance is in use.
    var values: [Slot]?
    /// The instance in use, if any, for a member with links (the instance holds the graph).
    weak var instance: ManagedObject?
    /// The instance, held, for a member without links: it does not hold the graph, so
    /// holding it forms no cycle, and it never needs making again.
    var heldInstance: ManagedObject?
  }

  private var members: [UInt64: Member] = [:]

  private init() {}

  // MARK: Releasing a context's objects

  /// Lets go of a released context's objects (`registered`, emptied): each object nobody
  /// else holds is freed, in number order; the survivors keep their relationships through a
  /// graph of the objects they reach, made only when there are survivors.
  ///
  /// Three passes: the relationships of every object are taken out of their slots as
  /// numbers (after which an object's only other holders are outside the context); the
  /// objects held only by the context are found (`isKnownUniquelyReferenced`); then, if
  /// any object survives, the objects it reaches keep their values in a graph, and the
  /// survivors' relationships refer to it.
  static func release(_ registered: inout ObjectNumberMap<ManagedObject>) {
    let links = takeRelationships(of: registered)
    var survivors: [UInt64] = []
    registered.forEachInPlace { object in
      if !isKnownUniquelyReferenced(&object), let number = object.storedObjectID?.rawValue {
        survivors.append(number)
      }
    }
    if survivors.isEmpty {
      registered.removeAll { _ in }
      return
    }
    let firstEntries = links.firstEntries()
    let reached = links.reached(from: survivors, firstEntries)
    let graph = ReleasedGraph()
    let survivorSet = Set(survivors)
    registered.removeAll { object in
      guard let number = object.storedObjectID?.rawValue, reached.contains(number) else {
        return
      }
      let objectLinks = links.of(number, firstEntries)
      var member = Member(model: object.model, links: objectLinks)
      if survivorSet.contains(number) {
        graph.adopt(object, links: objectLinks)
        if objectLinks.isEmpty { member.heldInstance = object } else { member.instance = object }
      } else {
        member.values = recordedValues(of: object)
      }
      graph.members[number] = member
    }
  }

  /// Empties the relationship slots of every object, returning what they held as numbers.
  private static func takeRelationships(of registered: ObjectNumberMap<ManagedObject>)
    -> RelationshipNumbers
  {
    var links = RelationshipNumbers()
    registered.forEachValue { object in
      object.detachFromContext(clearingRelationships: false)
      guard let number = object.storedObjectID?.rawValue else { return }
      for index in object.model.relationshipIndices {
        switch object.slots[index] {
        case .toOne(let target?):
          links.append(number, index, CollectionOfOne(target))
        case .toMany(let targets) where !targets.isEmpty:
          links.append(number, index, targets)
        default:
          continue
        }
        object.slots[index] = object.slots[index].emptied
      }
    }
    return links
  }

  /// Makes a survivor's relationships refer to the graph.
  private func adopt(_ object: ManagedObject, links: [(property: Int, numbers: [UInt64])]) {
    object.isReleased = true
    for (property, numbers) in links {
      let isToMany = object.model.relationship(property)!.isToMany
      object.slots[property] = .released(
        ReleasedLink(graph: self, numbers: numbers, isToMany: isToMany))
    }
  }

  /// The slots to make `object` again from: its attributes (stored strings decoded, since
  /// their storage goes with the object's memory), its relationships empty.
  private static func recordedValues(of object: ManagedObject) -> [Slot] {
    (0..<object.slotCount).map { index in
      switch object.slots[index] {
      case .value: object.slots[index]
      case .deferred(let pending): .value(pending.make())
      case .toOne, .toMany, .released: object.slots[index].emptied
      }
    }
  }

  // MARK: Reading

  /// The object numbered `number`: the instance in use, or one made from its values.
  func object(_ number: UInt64) -> ManagedObject? {
    guard let member = members[number] else { return nil }
    if let instance = member.instance ?? member.heldInstance { return instance }
    guard let values = member.values else { return nil }
    let object = ModelBuildState.current.make(member.model, from: values)
    object.storedObjectID = ObjectID(rawValue: number)
    adopt(object, links: member.links)
    if member.links.isEmpty {
      members[number]!.heldInstance = object
    } else {
      members[number]!.instance = object
    }
    members[number]!.values = nil
    return object
  }

  /// Keeps the values of an instance that is being freed, so that it can be made again.
  func retire(_ object: ManagedObject) {
    guard let number = object.storedObjectID?.rawValue, members[number] != nil else { return }
    members[number]!.values = Self.recordedValues(of: object)
  }
}

/// A relationship of an object whose context was released: the numbers of its objects in
/// the graph the context left behind (see ``ReleasedGraph``), made into objects on each read.
@usableFromInline
final class ReleasedLink {
  let graph: ReleasedGraph
  let numbers: [UInt64]
  let isToMany: Bool

  init(graph: ReleasedGraph, numbers: [UInt64], isToMany: Bool) {
    self.graph = graph
    self.numbers = numbers
    self.isToMany = isToMany
  }

  /// The related objects, in order.
  @usableFromInline
  var objects: [ManagedObject] { numbers.compactMap { graph.object($0) } }

  /// The related object of a to-one.
  @usableFromInline
  var object: ManagedObject? { numbers.first.flatMap { graph.object($0) } }
}

/// The relationships a released context's objects held, as object numbers, in flat arrays:
/// an object's entries are one run, so recording them costs no allocation per object.
private struct RelationshipNumbers {
  /// Per entry: the owner's number, the property, and where its numbers end.
  private var owners: [UInt64] = []
  private var properties: [Int32] = []
  private var ends: [Int] = []
  private var numbers: [UInt64] = []

  /// Records that `owner`'s relationship `property` holds `related` (objects without a
  /// number, which a context's objects never are, are left out).
  mutating func append(_ owner: UInt64, _ property: Int, _ related: some Collection<ManagedObject>)
  {
    owners.append(owner)
    properties.append(Int32(property))
    for object in related {
      if let number = object.storedObjectID?.rawValue { numbers.append(number) }
    }
    ends.append(numbers.count)
  }

  /// The first entry of each owner, by number.
  func firstEntries() -> [UInt64: Int] {
    var first: [UInt64: Int] = [:]
    for (entry, owner) in owners.enumerated() where entry == 0 || owners[entry - 1] != owner {
      first[owner] = entry
    }
    return first
  }

  /// The numbers held by relationship entry `entry`.
  private func numbers(of entry: Int) -> ArraySlice<UInt64> {
    numbers[(entry == 0 ? 0 : ends[entry - 1])..<ends[entry]]
  }

  /// The relationships of the object numbered `owner`.
  func of(_ owner: UInt64, _ firstEntries: [UInt64: Int]) -> [(property: Int, numbers: [UInt64])] {
    guard var entry = firstEntries[owner] else { return [] }
    var result: [(property: Int, numbers: [UInt64])] = []
    while entry < owners.count, owners[entry] == owner {
      result.append((Int(properties[entry]), Array(numbers(of: entry))))
      entry += 1
    }
    return result
  }

  /// The numbers of the objects reachable from `starts` (them included), following
  /// relationships.
  func reached(from starts: [UInt64], _ firstEntries: [UInt64: Int]) -> Set<UInt64> {
    var reached = Set(starts)
    var stack = starts
    while let owner = stack.popLast() {
      guard var entry = firstEntries[owner] else { continue }
      while entry < owners.count, owners[entry] == owner {
        for number in numbers(of: entry) where reached.insert(number).inserted {
          stack.append(number)
        }
        entry += 1
      }
    }
    return reached
  }
}
