/// The relationships of objects never inserted into a context, kept apart from the instances
/// so that objects related to each other are freed when the app lets go of them.
///
/// Related objects hold each other both ways (a parent its children, each child its
/// parent), which Swift's reference counting never frees. In a context that is fine: the
/// context holds its objects anyway, and empties their relationships when it goes. Objects
/// related before any is inserted have no context to do that:
///
/// ```swift
/// do {
///   let root = Box(title: "Root")
///   for index in 0..<3 { _ = Box(title: "\(index)", parent: root) }
/// }                      // the four boxes are freed here
/// ```
///
/// So when two objects in no context are related, both become *drafts* of one graph: their
/// relationships become member numbers here, each instance keeps its attributes, and the
/// graph refers to its instances unretained. An instance holds the objects of a list whose
/// inverse is a to-one (a parent its children: ``Slot/draftList(_:_:)``), which forms no
/// cycle unless an object is made its own ancestor; every other relationship (a to-one,
/// both sides of a many-to-many, a relationship without inverse) is only numbers
/// (``Slot/draft(_:property:)``) and reads its objects from the graph. An instance freed
/// while the graph lives gives it its attributes back first, and reading a relationship
/// that reaches it makes it again from them, as the loader makes a stored object (without
/// the initializer's defaults, and without the values of properties that are not
/// persisted). Instances hold the graph, the graph holds none of them that holds it, so the
/// graph goes with the last instance that can reach it.
///
/// Inserting a draft, or relating it to an object in a context, makes every draft it reaches
/// an ordinary object again (``release(from:)``) just before the context inserts them all.
///
/// Every relationship write of a draft still goes through
/// ``ManagedObject/writeSlot(_:_:edit:)`` (inverses, observers and the rule that an object
/// appears once in a list are the same code as in a context); the write stores numbers here
/// instead of objects in the slot, applying a list's index edit in O(1) besides the array's
/// shift.
///
/// - Complexity: relating two drafts costs O(1), or O(*m*) to join a graph of *m* members
///   into a larger one (O(*n* log *n*) over any *n* relations). Reading a list held by its
///   owner costs what it costs in a context; reading any other relationship of *k* objects
///   costs O(*k*), making the objects no instance is in use for.
@usableFromInline
final class DraftGraph {
  // The stored properties are read without a dynamic exclusivity check (as an object's
  // slots are): no access to them overlaps another, and the checks were a third of
  // inserting a tree built before it.

  /// One object of the graph.
  private struct Member {
    let model: EntityModel
    /// Where its relationships' links start in ``links`` (one entry a relationship, in the
    /// order of ``EntityModel/relationshipIndices``).
    let linkStart: Int
    /// The instance in use, if any, unretained (an instance holds the graph): it clears
    /// this as it is freed (``retire(_:_:)``), so it never dangles. A weak reference would
    /// give every draft a side table, slowing every retain of it for the rest of its life.
    var instance: Unmanaged<ManagedObject>?
    /// The instance, held: an object without relationships (it does not hold the graph),
    /// or one that left the graph for a context while other members still refer to it.
    var heldInstance: ManagedObject?
    /// Its slots while no instance is in use (relationships empty): the freed instance's
    /// own allocation, which the graph frees.
    var values: UnsafeMutablePointer<Slot>?
    var valueCount = 0
    /// Whether it left the graph for a context (``release(from:)``).
    var hasLeft = false

    init(model: EntityModel, linkStart: Int) {
      self.model = model
      self.linkStart = linkStart
    }
  }

  /// The members a relationship of a member relates it to: a to-one's without an array.
  private enum Link {
    case none
    case one(Int)
    case many([Int])

    var numbers: [Int] {
      switch self {
      case .none: []
      case .one(let number): [number]
      case .many(let numbers): numbers
      }
    }

    var first: Int? {
      switch self {
      case .none: nil
      case .one(let number): number
      case .many(let numbers): numbers.first
      }
    }

    func offset(by offset: Int) -> Link {
      switch self {
      case .none: .none
      case .one(let number): .one(number + offset)
      case .many(let numbers): .many(numbers.map { $0 + offset })
      }
    }
  }

  @exclusivity(unchecked) private var members: [Member] = []
  /// Every member's links, a run of one per relationship each: no allocation per member.
  @exclusivity(unchecked) private var links: [Link] = []
  /// The numbers of members held (``Member/heldInstance``), by identity.
  @exclusivity(unchecked) private var heldNumbers: [ObjectIdentifier: Int] = [:]
  /// Lists of freed instances whose objects are being let go (see ``retire(_:_:)``).
  @exclusivity(unchecked) private var listsToRelease: [[ManagedObject]] = []
  @exclusivity(unchecked) private var isReleasingLists = false
  /// How many members left for a context (``Member/hasLeft``).
  @exclusivity(unchecked) private var leftCount = 0

  private init() {}

  deinit {
    for member in members {
      guard let values = member.values else { continue }
      values.deinitialize(count: member.valueCount)
      values.deallocate()
    }
  }

  /// The index in ``links`` of relationship `property` of member `number` (a model has a
  /// few relationships: a search of them is shorter than a table).
  private func link(_ number: Int, _ property: Int) -> Int {
    let member = members[number]
    return member.linkStart + member.model.relationshipIndices.firstIndex(of: property)!
  }

  // MARK: Joining

  /// Puts two objects in no context in one graph, before a relationship write relates them:
  /// the graph of either (joined, the smaller into the larger, when both have one) or a new
  /// one.
  @inline(never)
  static func join(_ first: ManagedObject, _ second: ManagedObject) {
    let graphs = (first.draftMembership?.graph, second.draftMembership?.graph)
    switch graphs {
    case (nil, nil):
      let graph = DraftGraph()
      _ = graph.number(of: first)
      _ = graph.number(of: second)
    case (let graph?, nil):
      _ = graph.number(of: second)
    case (nil, let graph?):
      _ = graph.number(of: first)
    case (let one?, let other?):
      if one === other { return }
      if one.members.count >= other.members.count {
        one.absorb(other)
      } else {
        other.absorb(one)
      }
    }
  }

  /// Moves every member of `other` into this graph, after this graph's members.
  private func absorb(_ other: DraftGraph) {
    // No reservation: joining many small graphs into one must grow it geometrically.
    let (offset, linkOffset) = (members.count, links.count)
    for (index, member) in other.members.enumerated() {
      members.append(Member(model: member.model, linkStart: member.linkStart + linkOffset))
      members[offset + index].instance = member.instance
      members[offset + index].heldInstance = member.heldInstance
      members[offset + index].values = member.values
      members[offset + index].valueCount = member.valueCount
      members[offset + index].hasLeft = member.hasLeft
      member.instance?.takeUnretainedValue().setDraftMembership(
        DraftMembership(graph: self, number: offset + index))
    }
    for link in other.links { links.append(link.offset(by: offset)) }
    for (identifier, number) in other.heldNumbers { heldNumbers[identifier] = number + offset }
    leftCount += other.leftCount
    other.members = []
    other.links = []
    other.heldNumbers = [:]
  }

  /// The member number of `object`, which joins the graph if it is not in it: an object in
  /// no context, whose relationships become numbers (those it holds already, objects related
  /// before drafts existed or left by a delete, join too).
  private func number(of object: ManagedObject) -> Int {
    if let membership = object.draftMembership {
      if membership.graph === self { return membership.number }
      absorb(membership.graph)
      return object.draftMembership!.number
    }
    let isInContext = object.trackingReference != nil || object.isReleased
    let number: Int
    if let known = heldNumbers[ObjectIdentifier(object)] {
      if !members[known].hasLeft || isInContext { return known }
      // It left for a context and came back (deleted there, and saved): a member again,
      // under the number the members that still name it know, with no relations yet.
      number = known
      members[number].hasLeft = false
      leftCount -= 1
      for property in object.model.relationshipIndices { links[link(number, property)] = .none }
      if object.model.relationshipIndices.isEmpty { return number }
      heldNumbers[ObjectIdentifier(object)] = nil
      members[number].heldInstance = nil
    } else {
      number = members.count
      members.append(Member(model: object.model, linkStart: links.count))
      links.append(contentsOf: repeatElement(.none, count: object.model.relationshipIndices.count))
      // An object without relationships holds no graph, so holding it forms no cycle; one
      // in a context (held by a deleted object's kept relation) stays where it is.
      if object.model.relationshipIndices.isEmpty || isInContext {
        members[number].heldInstance = object
        members[number].hasLeft = isInContext
        if isInContext { leftCount += 1 }
        heldNumbers[ObjectIdentifier(object)] = number
        return number
      }
    }
    members[number].instance = Unmanaged.passUnretained(object)
    let membership = DraftMembership(graph: self, number: number)
    var held: [(property: Int, objects: [ManagedObject])] = []
    for property in object.model.relationshipIndices {
      let objects = object.slots[property].objects
      if !objects.isEmpty { held.append((property, objects)) }
      object.slots[property] = Self.emptySlot(of: object.model, property, membership)
    }
    object.isDraft = true
    for (property, objects) in held {
      let numbers = objects.map { self.number(of: $0) }
      let isToOne = !object.model.relationship(property)!.isToMany
      links[link(number, property)] = isToOne ? .one(numbers[0]) : .many(numbers)
      if case .draftList = object.slots[property] {
        object.slots[property] = .draftList(objects, membership)
      }
    }
    return number
  }

  /// A draft's relationship slot before anything is related through it.
  private static func emptySlot(
    of model: EntityModel, _ property: Int, _ membership: DraftMembership
  ) -> Slot {
    model.relationship(property)!.isHeldByDrafts
      ? .draftList([], membership) : .draft(membership, property: Int32(property))
  }

  // MARK: Reading

  /// The instance of member `number`: the one in use, or one made from its values.
  func instance(_ number: Int) -> ManagedObject {
    if let instance = members[number].instance { return instance.takeUnretainedValue() }
    if let instance = members[number].heldInstance { return instance }
    let model = members[number].model
    // Taken out first: the model's initializer runs while the object is made, and must
    // find the graph's arrays free to change.
    let (values, count) = (members[number].values!, members[number].valueCount)
    members[number].values = nil
    let object = ModelBuildState.current.make(
      model, from: UnsafeBufferPointer(start: values, count: count))
    values.deinitialize(count: count)
    values.deallocate()
    let membership = DraftMembership(graph: self, number: number)
    for property in model.relationshipIndices {
      // A list it held is read from the numbers until it changes (it is not held again).
      object.slots[property] = .draft(membership, property: Int32(property))
    }
    object.isDraft = true
    members[number].instance = Unmanaged.passUnretained(object)
    return object
  }

  /// The objects related to member `number` through `property`, in order.
  func objects(_ number: Int, _ property: Int) -> [ManagedObject] {
    // Read first: making an instance changes the members.
    let numbers = links[link(number, property)].numbers
    return numbers.map { instance($0) }
  }

  /// The object related to member `number` through to-one `property`.
  func object(_ number: Int, _ property: Int) -> ManagedObject? {
    guard let related = links[link(number, property)].first else { return nil }
    return instance(related)
  }

  // MARK: Writing

  /// Stores what a draft's relationship write makes of `property` of member `number`:
  /// a to-one's object, or a list, from its index edits when given (O(1) each besides the
  /// shift) or whole.
  func store(_ value: Slot, _ number: Int, _ property: Int, edits: some Collection<ListEditRecord>)
  {
    switch value {
    case .toOne(let object):
      let related = object.map { self.number(of: $0) }
      links[link(number, property)] = related.map { .one($0) } ?? .none
    case .toMany(let objects):
      if edits.isEmpty {
        let numbers = objects.map { self.number(of: $0) }
        links[link(number, property)] = .many(numbers)
      } else {
        for edit in edits { apply(edit, number, property) }
      }
      assert(
        objects.count > ManagedObject.checkedListLength || isInStep(objects, number, property),
        "draft list out of step")
    case .value, .deferred, .released, .draft, .draftList:
      preconditionFailure("a relationship write stores objects")
    }
  }

  /// Whether the numbers kept for a list are those of `objects`, in order (a debug-build
  /// check of every write of a short list).
  func isInStep(_ objects: [ManagedObject], _ number: Int, _ property: Int) -> Bool {
    let numbers = links[link(number, property)].numbers
    guard numbers.count == objects.count else { return false }
    return zip(numbers, objects).allSatisfy { number, object in
      if let membership = object.draftMembership { return membership.number == number }
      return heldNumbers[ObjectIdentifier(object)] == number
    }
  }

  private func apply(_ edit: ListEditRecord, _ number: Int, _ property: Int) {
    // Numbered first: numbering a new member grows the links.
    var inserted = 0
    if case .insert(let object, _) = edit { inserted = self.number(of: object) }
    let index = link(number, property)
    var numbers = links[index].numbers
    links[index] = .none  // so that the numbers are changed in place
    switch edit {
    case .insert(_, let position): numbers.insert(inserted, at: position)
    case .remove(_, let position): numbers.remove(at: position)
    case .move(let from, let to): numbers.moveElement(from: from, to: to)
    }
    links[index] = .many(numbers)
  }

  /// Keeps the slots of an instance that is being freed, so that it can be made again: the
  /// graph takes over their allocation (the instance must not free them), moved first out of
  /// a slab the instance shares with other objects (``ManagedObject/takeOwnSlots()``: its
  /// stored strings decoded, since their bytes go with that memory).
  ///
  /// The objects of its lists are let go one list at a time, after the lists of the
  /// instances freed before them, not inside this call: freeing a deep tree takes no stack
  /// per level. So the instance's slots are taken whole, its lists emptied in them, never
  /// copied: the instance's `deinit` would let go of the lists of a copied original.
  func retire(_ object: ManagedObject, _ number: Int) {
    object.takeOwnSlots()
    let slots = object.slots
    for property in object.model.relationshipIndices {
      if case .draftList(let objects, _) = slots[property], !objects.isEmpty {
        listsToRelease.append(objects)
      }
      slots[property] = object.model.relationship(property)!.isToMany ? .toMany([]) : .toOne(nil)
    }
    members[number].instance = nil
    members[number].values = slots
    members[number].valueCount = object.slotCount
    if !isReleasingLists {
      isReleasingLists = true
      while let objects = listsToRelease.popLast() { withExtendedLifetime(objects) {} }
      isReleasingLists = false
    }
  }

  // MARK: Leaving

  /// Makes the drafts `object` reaches ordinary objects holding each other, as a context
  /// holds its objects: it is about to insert them (``ObjectContext/insert(_:)``). Members
  /// it does not reach stay drafts, and the graph holds those that left for them (a
  /// relationship without inverse may name one), unless no member is left.
  ///
  /// - Complexity: O(*m* + *r*) in the members reached and their relations.
  @inline(never)
  static func release(from object: ManagedObject) {
    guard let membership = object.draftMembership else { return }
    let graph = membership.graph
    let reached = graph.members(reachedFrom: membership.number)
    // Every instance first (made where none is in use), then their relationships.
    let instances = reached.map { graph.instance($0) }
    for (number, instance) in zip(reached, instances) where instance.isDraft {
      let linkStart = graph.members[number].linkStart
      for (ordinal, property) in instance.model.relationshipIndices.enumerated() {
        if case .draftList(let objects, _) = instance.slots[property] {
          instance.slots[property] = .toMany(objects)  // held, in step with the numbers
          continue
        }
        let link = graph.links[linkStart + ordinal]
        instance.slots[property] =
          instance.model.relationship(property)!.isToMany
          ? .toMany(link.numbers.map { graph.instance($0) })
          : .toOne(link.first.map { graph.instance($0) })
      }
      instance.isDraft = false
    }
    graph.leftCount += reached.count
    // Members not reached may name those that left, through a relationship without
    // inverse: the graph keeps those for them, unless no member is left to read them.
    let keepsThem = graph.leftCount < graph.members.count
    for (number, instance) in zip(reached, instances) {
      graph.members[number].hasLeft = true
      graph.members[number].instance = nil
      graph.members[number].heldInstance = keepsThem ? instance : nil
      if keepsThem { graph.heldNumbers[ObjectIdentifier(instance)] = number }
    }
  }

  /// The members `start` reaches through relationships (it first), but those that left.
  private func members(reachedFrom start: Int) -> [Int] {
    var reached = [start]
    var isReached = [Bool](repeating: false, count: members.count)
    isReached[start] = true
    var next = 0
    func reach(_ related: Int) {
      guard !isReached[related], !members[related].hasLeft else { return }
      isReached[related] = true
      reached.append(related)
    }
    while next < reached.count {
      let number = reached[next]
      next += 1
      let linkStart = members[number].linkStart
      for ordinal in members[number].model.relationshipIndices.indices {
        switch links[linkStart + ordinal] {
        case .none: continue
        case .one(let related): reach(related)
        case .many(let related): related.forEach(reach)
        }
      }
    }
    return reached
  }
}

/// A draft instance's place in its graph (see ``DraftGraph``), kept in each of its
/// relationship slots (no allocation), rewritten when its graph joins another.
@usableFromInline
struct DraftMembership {
  @usableFromInline let graph: DraftGraph
  private let storedNumber: Int32

  init(graph: DraftGraph, number: Int) {
    self.graph = graph
    storedNumber = Int32(number)
  }

  /// The draft's member number.
  var number: Int { Int(storedNumber) }

  /// The objects the draft's relationship `property` relates it to, in order.
  @usableFromInline
  func objects(_ property: Int32) -> [ManagedObject] { graph.objects(number, Int(property)) }

  /// The object the draft's to-one `property` relates it to.
  @usableFromInline
  func object(_ property: Int32) -> ManagedObject? { graph.object(number, Int(property)) }
}

extension RelationshipModel {
  /// Whether a draft holds this relationship's objects (a list whose inverse is a to-one:
  /// a parent holds its children), rather than only their numbers (see ``DraftGraph``).
  var isHeldByDrafts: Bool { isToMany && inverse != nil && inverseModel?.isToMany == false }
}

extension ManagedObject {
  /// The object's place in its draft graph, if it is a draft.
  final var draftMembership: DraftMembership? {
    guard isDraft, let first = model.relationshipIndices.first else { return nil }
    return slots[first].draftMembership
  }

  /// Moves a draft to another place (its graph joined another).
  fileprivate final func setDraftMembership(_ membership: DraftMembership) {
    for property in model.relationshipIndices {
      switch slots[property] {
      case .draft(_, let stored): slots[property] = .draft(membership, property: stored)
      case .draftList(let objects, _): slots[property] = .draftList(objects, membership)
      case .value, .deferred, .toOne, .toMany, .released: continue
      }
    }
  }

  /// Gives a draft's slots to its graph as it is freed, for the next instance of it (see
  /// ``DraftGraph/retire(_:_:)``); returns whether the graph took them over (the instance
  /// must not free them), false when the draft is in no graph.
  @inline(never)
  final func retireFromDraftGraph() -> Bool {
    guard let membership = draftMembership else { return false }
    let graph = membership.graph  // held: the retirement lets go of the membership
    graph.retire(self, membership.number)
    return true
  }
}
