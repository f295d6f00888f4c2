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
///   let context = try ObjectContext(container)
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
/// either side) stops the program naming the object and the relationship; their
/// attributes can still change. Nothing here is thread-safe: the
/// objects of a context stay on the context's actor after its release, as before it.
///
/// - Complexity: the release costs O(*n* + *r*) in the context's objects and relationship
///   entries, and keeps the values of the objects the survivors reach (memory as for the
///   objects themselves). Reading a relationship of *k* objects costs O(*k*), making the
///   objects no instance is in use for.
final class ReleasedGraph {
  /// One object a survivor can reach. Its values and relationships are runs of the graph's
  /// flat arrays: no allocation per object.
  private struct Member {
    let model: EntityModel
    /// Where its slots start in ``values`` (``EntityModel/propertyCount`` of them).
    let valueStart: Int
    /// Its relationships that held objects: entries `linkStart ..< linkEnd` of the links.
    let linkStart: Int32
    let linkEnd: Int32
    /// Whether ``values`` holds its slots to make it from (not while an instance is in use).
    var hasValues = false
    /// The instance in use, if any, for a member with links (the instance holds the graph).
    weak var instance: ManagedObject?
    /// The instance, held, for a member without links: it does not hold the graph, so
    /// holding it forms no cycle, and it never needs making again.
    var heldInstance: ManagedObject?

    init(model: EntityModel, valueStart: Int, links: Range<Int>) {
      self.model = model
      self.valueStart = valueStart
      linkStart = Int32(links.lowerBound)
      linkEnd = Int32(links.upperBound)
    }

    var hasLinks: Bool { linkStart < linkEnd }
  }

  private var members: [UInt64: Member] = [:]
  /// Every member's slots, one run each: attributes (stored strings decoded, since their
  /// storage goes with the object's memory), relationships empty.
  private var values: [Slot] = []
  /// Per link (a relationship of a member that held objects): its property and where its
  /// objects' numbers end in ``linkNumbers`` (they start where the link before ends).
  private var linkProperties: [Int32] = []
  private var linkEnds: [Int] = []
  private var linkNumbers: [UInt64] = []

  private init() {}

  // MARK: Releasing a context's objects

  /// Lets go of a released context's objects (`registered`, emptied): each object nobody
  /// else holds is freed, in number order; the survivors keep their relationships through a
  /// graph of the objects they reach, made only when there are survivors.
  ///
  /// Three passes: the relationships of every object are taken out of their slots, noting
  /// the related objects' addresses (after which an object's only other holders are outside
  /// the context); the objects held only by the context are found
  /// (`isKnownUniquelyReferenced`); then, if any object survives, the objects it reaches
  /// keep their values in a graph, and the survivors' relationships refer to it. The
  /// related objects are not read in the first pass (only their addresses, which their
  /// lists hold): a context of 100,000 objects freed with no survivor reads each once, as
  /// it frees it.
  static func release(_ registered: inout ObjectNumberMap<ManagedObject>) {
    let links = takeRelationships(of: registered)
    var survivors: [ObjectAddress] = []
    registered.forEachInPlace { object in
      if !isKnownUniquelyReferenced(&object) { survivors.append(ObjectAddress(object)) }
    }
    if survivors.isEmpty {
      registered.removeAll { _ in }
      return
    }
    let firstEntries = links.firstEntries()
    let reached = links.reached(from: survivors, firstEntries)
    // Every object reached is alive until the last pass frees the others: its number is
    // read now.
    var numbers: [ObjectAddress: UInt64] = [:]
    var valueCount = 0
    for address in reached {
      guard let number = address.object.storedObjectID?.rawValue else { continue }
      numbers[address] = number
      valueCount += address.object.slotCount
    }
    let graph = ReleasedGraph()
    graph.members.reserveCapacity(numbers.count)
    graph.values.reserveCapacity(valueCount)
    let survivorSet = Set(survivors)
    registered.removeAll { object in
      let address = ObjectAddress(object)
      guard let number = numbers[address] else { return }
      let linkStart = graph.linkProperties.count
      links.forEachLink(of: address, firstEntries, numbers) { property, targets in
        graph.linkProperties.append(Int32(property))
        graph.linkNumbers.append(contentsOf: targets)
        graph.linkEnds.append(graph.linkNumbers.count)
      }
      var member = Member(
        model: object.model, valueStart: graph.values.count,
        links: linkStart..<graph.linkProperties.count)
      if survivorSet.contains(address) {
        object.takeOwnSlots()  // so that it keeps no other object's memory
        // Its values are kept when it is freed (`retire`); until then, room.
        graph.values.append(contentsOf: repeatElement(.toOne(nil), count: object.slotCount))
        graph.adopt(object, member)
        if member.hasLinks { member.instance = object } else { member.heldInstance = object }
      } else {
        graph.values.append(contentsOf: (0..<object.slotCount).lazy.map { object.recordedSlot($0) })
        member.hasValues = true
      }
      graph.members[number] = member
    }
  }

  /// Empties the relationship slots of every object, returning what they held.
  ///
  /// Each slot's value is moved out, so that reading it retains nothing; letting go of it
  /// releases what the slot held. The notes have room for a relationship an object from
  /// the start (an object of the seed workload has its parent and, one in ten, children).
  private static func takeRelationships(of registered: ObjectNumberMap<ManagedObject>)
    -> RelationshipTargets
  {
    var links = RelationshipTargets(reservingEntries: registered.count)
    registered.forEachValue { object in
      object.detachFromContext(clearingRelationships: false)
      for index in object.model.relationshipIndices {
        let slot = object.slots + index
        switch slot.pointee {
        case .toOne(.some), .toMany:
          break
        default:
          continue
        }
        let held = slot.move()
        slot.initialize(to: held.emptied)
        switch held {
        case .toOne(let target?):
          links.append(object, index, ObjectAddress(target))
        case .toMany(let targets) where !targets.isEmpty:
          targets.withUnsafeBufferPointer { targets in
            // The addresses, read as words: no object is retained or read.
            targets.withMemoryRebound(to: ObjectAddress.self) { links.append(object, index, $0) }
          }
        default:
          break
        }
      }
    }
    return links
  }

  /// Makes an instance's relationships refer to the graph.
  private func adopt(_ object: ManagedObject, _ member: Member) {
    object.isReleased = true
    for link in Int(member.linkStart)..<Int(member.linkEnd) {
      let property = Int(linkProperties[link])
      let numbers = Array(linkNumbers[(link == 0 ? 0 : linkEnds[link - 1])..<linkEnds[link]])
      let isToMany = object.model.relationship(property)!.isToMany
      object.slots[property] = .released(
        ReleasedLink(graph: self, numbers: numbers, isToMany: isToMany))
    }
  }

  // MARK: Reading

  /// The object numbered `number`: the instance in use, or one made from its values.
  func object(_ number: UInt64) -> ManagedObject? {
    guard let member = members[number] else { return nil }
    if let instance = member.instance ?? member.heldInstance { return instance }
    guard member.hasValues else { return nil }
    // Copied out first: the model's initializer runs while the object is made, and must
    // find the graph's arrays free to change.
    let slots = Array(values[member.valueStart..<member.valueStart + member.model.propertyCount])
    let object = slots.withUnsafeBufferPointer {
      ModelBuildState.current.make(member.model, from: $0)
    }
    object.storedObjectID = ObjectID(rawValue: number)
    adopt(object, member)
    if member.hasLinks {
      members[number]!.instance = object
    } else {
      members[number]!.heldInstance = object
    }
    members[number]!.hasValues = false
    return object
  }

  /// Keeps the values of an instance that is being freed, so that it can be made again.
  func retire(_ object: ManagedObject) {
    guard let number = object.storedObjectID?.rawValue, let member = members[number] else {
      return
    }
    for index in 0..<object.slotCount {
      values[member.valueStart + index] = object.recordedSlot(index)
    }
    members[number]!.hasValues = true
  }
}

extension ManagedObject {
  /// Slot `index` as a graph of values apart from the instances keeps it (a released
  /// context's, or a draft's): an attribute's value (a stored string decoded, since its
  /// storage goes with the object's memory), a relationship empty.
  func recordedSlot(_ index: Int) -> Slot {
    switch slots[index] {
    case .value: slots[index]
    case .deferred(let pending): .value(pending.make())
    case .toOne, .toMany, .released: slots[index].emptied
    case .draft, .draftList: model.relationship(index)!.isToMany ? .toMany([]) : .toOne(nil)
    }
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

/// An object's address, compared and hashed without retaining or reading the object.
private struct ObjectAddress: Hashable {
  let pointer: UnsafeRawPointer

  init(_ object: ManagedObject) {
    pointer = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
  }

  /// The object, unretained: only while something else keeps it alive.
  var object: ManagedObject { Unmanaged<ManagedObject>.fromOpaque(pointer).takeUnretainedValue() }
}

/// The relationships a released context's objects held, as the related objects' addresses,
/// in flat arrays: an object's entries are one run, so recording them costs no allocation
/// per object.
private struct RelationshipTargets {
  /// Per entry: the owner, the property, and where its targets end.
  private var owners: [ObjectAddress] = []
  private var properties: [Int32] = []
  private var ends: [Int] = []
  private var targets: [ObjectAddress] = []

  /// Notes with room for `count` entries (and as many targets).
  init(reservingEntries count: Int) {
    owners.reserveCapacity(count)
    properties.reserveCapacity(count)
    ends.reserveCapacity(count)
    targets.reserveCapacity(count)
  }

  /// Records that `owner`'s relationship `property` holds `related`.
  mutating func append(_ owner: ManagedObject, _ property: Int, _ related: ObjectAddress) {
    owners.append(ObjectAddress(owner))
    properties.append(Int32(property))
    targets.append(related)
    ends.append(targets.count)
  }

  /// Records that `owner`'s relationship `property` holds `related`, in order.
  mutating func append(
    _ owner: ManagedObject, _ property: Int, _ related: UnsafeBufferPointer<ObjectAddress>
  ) {
    owners.append(ObjectAddress(owner))
    properties.append(Int32(property))
    targets.append(contentsOf: related)
    ends.append(targets.count)
  }

  /// The first entry of each owner.
  func firstEntries() -> [ObjectAddress: Int] {
    var first: [ObjectAddress: Int] = [:]
    for (entry, owner) in owners.enumerated() where entry == 0 || owners[entry - 1] != owner {
      first[owner] = entry
    }
    return first
  }

  /// The targets of relationship entry `entry`.
  private func targets(of entry: Int) -> ArraySlice<ObjectAddress> {
    targets[(entry == 0 ? 0 : ends[entry - 1])..<ends[entry]]
  }

  /// Calls `body` with each relationship of `owner` that held objects, its targets as
  /// their `numbers`.
  func forEachLink(
    of owner: ObjectAddress, _ firstEntries: [ObjectAddress: Int],
    _ numbers: [ObjectAddress: UInt64], _ body: (Int, [UInt64]) -> Void
  ) {
    guard var entry = firstEntries[owner] else { return }
    while entry < owners.count, owners[entry] == owner {
      body(Int(properties[entry]), targets(of: entry).compactMap { numbers[$0] })
      entry += 1
    }
  }

  /// The objects reachable from `starts` (them included), following relationships.
  func reached(from starts: [ObjectAddress], _ firstEntries: [ObjectAddress: Int])
    -> Set<ObjectAddress>
  {
    var reached = Set(starts)
    var stack = starts
    while let owner = stack.popLast() {
      guard var entry = firstEntries[owner] else { continue }
      while entry < owners.count, owners[entry] == owner {
        for target in targets(of: entry) where reached.insert(target).inserted {
          stack.append(target)
        }
        entry += 1
      }
    }
    return reached
  }
}
