/// One entity's live objects in a context (inserted or saved, not deleted) and the indexes
/// over them.
final class EntityTable {
  let model: EntityModel
  /// The entity's position in the container's ``Schema``.
  let entityIndex: Int
  /// The live objects, in no particular order; each knows its position (`tableIndex`), so
  /// adding and removing cost O(1) with no hashing.
  ///
  /// Held unretained: every object in a table is registered in its context, whose identity
  /// map holds it, and is taken out of the table before it is unregistered. Tearing down a
  /// context of 100,000 objects then touches each once, not once more for this list.
  @exclusivity(unchecked) private var members: [Unmanaged<ManagedObject>] = []
  /// Indexes of unique and indexed attributes, by property number (nil for the others; an
  /// array, so finding a property's index costs no hashing). Empty until first needed (see
  /// ``attributeIndexesAreBuilt``).
  @exclusivity(unchecked) private var storedAttributeIndexes: [ValueIndex<PersistentValue>?]
  /// Ordered indexes of the unique and indexed attributes whose values have an order (see
  /// ``OrderedKey``), by property number, kept and built with the attribute indexes: nil for
  /// the others, and for a UUID attribute until a fetch first asks for its order
  /// (``orderedIndex(_:)``). A UUID is an identifier more often than a sort key, and its
  /// random values make every insertion land in a random place: kept from the start, the
  /// unique ids of 101,100 new boxes would cost a tenth of saving them.
  @exclusivity(unchecked) private var storedOrderedIndexes: [OrderedIndex?]
  /// The type of each unique or indexed attribute with ordered values, by property number.
  private let orderedTypes: [AttributeType?]
  /// Indexes of to-one relationships, by property number. For a to-one relationship whose
  /// inverse is to-many, only objects with no target are indexed: the objects with a given
  /// target are that target's inverse list. Always up to date: with an inverse list, only
  /// the few objects with no target are in it.
  @exclusivity(unchecked) private var storedToOneIndexes: [ValueIndex<ObjectIdentifier?>?]
  /// Whether the attribute indexes hold every live object. A table starts empty with its
  /// indexes built and keeps them up to date; a table that loads its objects (see
  /// ``deferAttributeIndexes()``) builds them the first time a fetch or a save needs them,
  /// all at once. Opening 100,000 objects to browse them then costs no index work.
  @exclusivity(unchecked) private(set) var attributeIndexesAreBuilt = true
  /// The build of the attribute indexes running on another thread, if any.
  @exclusivity(unchecked) private var pendingBuild: BackgroundBuild<AttributeIndexes>?
  /// The fewest objects whose attribute indexes are built on another thread when loaded.
  static let backgroundBuildThreshold = 4_096
  /// The inverse (to-many) property of each to-one relationship indexed for nil only.
  private let inverseLists: [Int?]
  /// Properties with an index, for quick iteration.
  private let indexedProperties: [Int]

  /// The key path a fetch asked about last and the property it reads (see
  /// ``propertyIndex(for:)``).
  private var lastKeyPath: (keyPath: AnyKeyPath, index: Int?)?

  init(model: EntityModel, entityIndex: Int) {
    self.model = model
    self.entityIndex = entityIndex
    let count = model.properties.count
    storedAttributeIndexes = Array(repeating: nil, count: count)
    storedToOneIndexes = Array(repeating: nil, count: count)
    storedOrderedIndexes = Array(repeating: nil, count: count)
    var orderedTypes = [AttributeType?](repeating: nil, count: count)
    var inverseLists = [Int?](repeating: nil, count: count)
    var indexed: [Int] = []
    for property in model.properties where model.isIndexed[property.index] {
      switch property.kind {
      case .attribute(let attribute):
        storedAttributeIndexes[property.index] = ValueIndex()
        let type = attribute.description.type
        if OrderedKey.orders(type) {
          orderedTypes[property.index] = type
          if Self.isOrderedFromTheStart(type) {
            storedOrderedIndexes[property.index] = OrderedIndex(type: type)
          }
        }
      case .relationship(let relationship):
        storedToOneIndexes[property.index] = ValueIndex()
        if let inverse = relationship.inverse, relationship.inverseModel?.isToMany == true {
          inverseLists[property.index] = inverse
        }
      }
      indexed.append(property.index)
    }
    indexedProperties = indexed
    self.inverseLists = inverseLists
    self.orderedTypes = orderedTypes
  }

  /// Whether the ordered index of an attribute of `type` is kept from the start, rather than
  /// made when a fetch first asks for its order (see ``storedOrderedIndexes``).
  private static func isOrderedFromTheStart(_ type: AttributeType) -> Bool { type != .uuid }

  var count: Int { members.count }

  /// The live objects, in no particular order.
  var objects: [ManagedObject] { members.map { $0.takeUnretainedValue() } }

  /// Calls `body` with each live object, borrowed (no retain), in no particular order;
  /// `body` must not add objects to the table or remove any.
  func forEachObject(_ body: (ManagedObject) throws -> Void) rethrows {
    for member in members { try member._withUnsafeGuaranteedRef(body) }
  }

  func contains(_ object: ManagedObject) -> Bool {
    let position = object.tableIndex
    return position >= 0 && position < members.count
      && members[position].toOpaque() == Unmanaged.passUnretained(object).toOpaque()
  }

  /// The index of attribute `property`, if it is unique or indexed (built if the attribute
  /// indexes were not yet).
  func attributeIndex(_ property: Int) -> ValueIndex<PersistentValue>? {
    guard storedAttributeIndexes[property] != nil else { return nil }
    buildAttributeIndexes()
    return storedAttributeIndexes[property]
  }

  /// The ordered index of attribute `property`, if it is unique or indexed and its values
  /// have an order: built if the attribute indexes were not yet, and made now (from every
  /// live object, then kept) if it is made on demand and was not yet.
  ///
  /// - Complexity: O(1) once made; O(*n* log *n*) to make it.
  func orderedIndex(_ property: Int) -> OrderedIndex? {
    guard let type = orderedTypes[property] else { return nil }
    buildAttributeIndexes()
    if storedOrderedIndexes[property] == nil {
      var index = OrderedIndex(type: type)!
      index.add(
        members, for: members.map { $0._withUnsafeGuaranteedRef { $0.slots[property].value } })
      storedOrderedIndexes[property] = index
    }
    return storedOrderedIndexes[property]
  }

  /// The ordered index of attribute `property` if it is kept already (made on demand ones
  /// are not made).
  func existingOrderedIndex(_ property: Int) -> OrderedIndex? {
    guard orderedTypes[property] != nil else { return nil }
    buildAttributeIndexes()
    return storedOrderedIndexes[property]
  }

  /// Whether to-one relationship `property` is indexed.
  func hasToOneIndex(_ property: Int) -> Bool { storedToOneIndexes[property] != nil }

  /// Stops keeping the attribute indexes until they are next needed: the objects about to be
  /// added (a store's whole contents) are indexed then, in one pass.
  func deferAttributeIndexes() {
    guard members.isEmpty else { return }
    attributeIndexesAreBuilt = false
  }

  /// The attributes the table indexes (unique or indexed), by property number.
  var indexedAttributes: [Int] {
    indexedProperties.filter { storedAttributeIndexes[$0] != nil }
  }

  /// Starts building deferred attribute indexes of many objects on another thread, so a
  /// fetch or save that needs them finds them ready: opening a store then leaves them off
  /// its path. Until the build is taken (``buildAttributeIndexes()``), every change to the
  /// table or to an indexed attribute of its objects waits for it first.
  ///
  /// - Parameter values: The members' indexed attribute values as they are now, noted by
  ///   the loader that made them, which the build then reads instead of the objects.
  func startBuildingAttributeIndexes(from values: IndexedAttributeValues? = nil) {
    guard !attributeIndexesAreBuilt, pendingBuild == nil,
      members.count >= Self.backgroundBuildThreshold,
      indexedProperties.contains(where: { storedAttributeIndexes[$0] != nil })
    else { return }
    precondition(
      values == nil || values!.memberCount == members.count,
      "ObjectGraph: attribute values noted for other objects than the table's")
    let indexes = AttributeIndexes(values: storedAttributeIndexes, ordered: storedOrderedIndexes)
    let (members, properties) = (members, indexedProperties)
    pendingBuild = BackgroundBuild {
      Self.attributeIndexes(
        members: members, indexes: indexes, properties: properties, values: values)
    }
  }

  /// Builds the attribute indexes from the live objects, unless built already (taking a
  /// build started on another thread, once it is done).
  ///
  /// - Complexity: O(*n*) in the live objects, once per table.
  func buildAttributeIndexes() {
    guard !attributeIndexesAreBuilt else { return }
    attributeIndexesAreBuilt = true
    let built: AttributeIndexes
    if let pendingBuild {
      built = pendingBuild.value
      self.pendingBuild = nil
    } else {
      built = Self.attributeIndexes(
        members: members,
        indexes: AttributeIndexes(values: storedAttributeIndexes, ordered: storedOrderedIndexes),
        properties: indexedProperties)
    }
    storedAttributeIndexes = built.values
    storedOrderedIndexes = built.ordered
  }

  /// Waits for an attribute index build running on another thread, if any: called before
  /// the table or an indexed attribute of one of its objects changes.
  @inline(__always)
  func finishPendingBuild() {
    if pendingBuild != nil { buildAttributeIndexes() }
  }

  /// Whether saving this table's objects can break a rule: one of them has a bounded list,
  /// or a unique attribute's index holds a value twice.
  var mayBreakRules: Bool {
    model.validatedIndices.contains { index in
      guard model.relationship(index) == nil else { return true }  // a bounded list
      return attributeIndex(index)?.sharedKeyCount ?? 0 > 0
    }
  }

  /// The number of the property a key path reads (see ``EntityModel/propertyIndex(for:)``),
  /// remembered by the key path's identity: a key path literal is one object per place in
  /// the source, so a fetch repeated there finds it without hashing it or taking a lock.
  func propertyIndex(for keyPath: AnyKeyPath) -> Int? {
    if let last = lastKeyPath, last.keyPath === keyPath { return last.index }
    let index = model.propertyIndex(for: keyPath)
    lastKeyPath = (keyPath, index)
    return index
  }

  /// Lets go of every object: the table and its indexes end empty. An index build not
  /// started yet is dropped, not run for indexes about to be emptied (a context released
  /// just after its load would build them for nothing); one running is waited for, since it
  /// reads the objects.
  func removeAll() {
    pendingBuild?.discard()
    pendingBuild = nil
    members = []
    storedAttributeIndexes = storedAttributeIndexes.map { $0.map { _ in ValueIndex() } }
    storedToOneIndexes = storedToOneIndexes.map { $0.map { _ in ValueIndex() } }
    storedOrderedIndexes = orderedTypes.map { type in
      type.flatMap { Self.isOrderedFromTheStart($0) ? OrderedIndex(type: $0) : nil }
    }
    attributeIndexesAreBuilt = true
  }

  /// Adds a live object and indexes it (in the attribute indexes once they are built).
  func add(_ object: ManagedObject) {
    finishPendingBuild()
    object.tableIndex = members.count
    members.append(Unmanaged.passUnretained(object))
    for property in indexedProperties {
      let slot = object.slots + property
      // Answered in place, since a copy of the slot costs calls to copy and destroy it (and a
      // retain and release of a related object): a to-one relationship with a to-many
      // inverse indexes only the objects that hold none, and attribute indexes deferred
      // for a load are built later from every object at once.
      switch slot.pointee {
      case .toOne(.some) where !indexesToOne(property, holdingATarget: true): continue
      case .value where !attributeIndexesAreBuilt: continue
      default: index(object, property, slot.pointee)
      }
    }
  }

  // MARK: Loading

  /// An entry of a to-one relationship's index that a loaded object needs: the object holds
  /// `target` in relationship `property` (see ``adoptLoaded(_:entries:)``).
  struct LoadedEntry {
    var property: Int
    var object: Unmanaged<ManagedObject>
    var target: ObjectIdentifier?
  }

  /// The to-one relationships the table indexes, and whether each indexes only the objects
  /// that hold no target (see ``indexesToOne(_:holdingATarget:)``): what a loader needs to make
  /// ``LoadedEntry``s for its objects on several threads at once, without asking the table.
  var indexedToOneRelationships: [(property: Int, indexesOnlyNone: Bool)] {
    indexedProperties.compactMap { property in
      storedToOneIndexes[property] == nil
        ? nil : (property, !indexesToOne(property, holdingATarget: true))
    }
  }

  /// Takes the objects a store loaded, in order, as the table's members (each object's
  /// ``ManagedObject/tableIndex`` already its place in `objects`), and their to-one index
  /// `entries`: ``add(_:)`` for every object, without touching any. A loader sets the places
  /// and makes the entries on several threads at once, while each object is in its cache.
  ///
  /// - Precondition: The table is empty, its attribute indexes deferred
  ///   (``deferAttributeIndexes()``): they are built from the members later.
  func adoptLoaded(_ objects: [Unmanaged<ManagedObject>], entries: [LoadedEntry]) {
    precondition(
      members.isEmpty && !attributeIndexesAreBuilt && pendingBuild == nil,
      "ObjectGraph: loaded objects join an empty table whose attribute indexes wait")
    members = objects
    for entry in entries {
      storedToOneIndexes[entry.property]?.add(
        entry.object.takeUnretainedValue(), for: entry.target)
    }
  }

  /// Whether to-one relationship `property`'s index has an entry for an object holding a
  /// target or none: a to-one relationship with a to-many inverse indexes only the objects
  /// that hold none, since each target's inverse list holds the others.
  @inline(__always)
  private func indexesToOne(_ property: Int, holdingATarget: Bool) -> Bool {
    !holdingATarget || inverseLists[property] == nil
  }

  /// Removes an object and its index entries.
  func remove(_ object: ManagedObject) {
    guard contains(object) else { return }
    finishPendingBuild()
    let position = object.tableIndex
    let last = members.removeLast()
    if last.toOpaque() != Unmanaged.passUnretained(object).toOpaque() {
      members[position] = last
      last._withUnsafeGuaranteedRef { $0.tableIndex = position }
    }
    object.tableIndex = -1
    for property in indexedProperties { unindex(object, property, object.slots[property]) }
  }

  /// Moves a live object's index entry for one property from its old to its new value.
  func update(_ object: ManagedObject, _ property: Int, from old: Slot, to new: Slot) {
    guard storedAttributeIndexes[property] != nil || storedToOneIndexes[property] != nil,
      contains(object)
    else { return }
    unindex(object, property, old)
    index(object, property, new)
  }

  /// The live objects whose to-one relationship `property` holds `target`.
  ///
  /// - Complexity: O(*m*) in those objects.
  func objects(relatedTo target: ManagedObject?, through property: Int) -> [ManagedObject]? {
    guard let index = storedToOneIndexes[property] else { return nil }
    guard let target else { return index.objects(for: nil) }
    if let inverse = inverseLists[property] {
      return target.slots[inverse].objects.filter {
        $0.slots[property].object === target && contains($0)
      }
    }
    return index.objects(for: ObjectIdentifier(target))
  }

  private func index(_ object: ManagedObject, _ property: Int, _ slot: Slot) {
    switch slot {
    case .value(let value):
      guard attributeIndexesAreBuilt else { return }
      storedAttributeIndexes[property]?.add(object, for: value)
      storedOrderedIndexes[property]?.add(object, for: value)
    case .toOne(let target):
      guard indexesToOne(property, holdingATarget: target != nil) else { return }
      storedToOneIndexes[property]?.add(object, for: target.map(ObjectIdentifier.init))
    // Registered objects hold no deferred defaults, and no stored strings in indexed
    // attributes (a loader decodes those at once); only objects of released contexts hold
    // released links, and drafts are in no context.
    case .toMany, .deferred, .released, .draft, .draftList: break
    }
  }

  private func unindex(_ object: ManagedObject, _ property: Int, _ slot: Slot) {
    switch slot {
    case .value(let value):
      guard attributeIndexesAreBuilt else { return }
      storedAttributeIndexes[property]?.remove(object, for: value)
      storedOrderedIndexes[property]?.remove(object, for: value)
    case .toOne(let target):
      guard indexesToOne(property, holdingATarget: target != nil) else { return }
      storedToOneIndexes[property]?.remove(object, for: target.map(ObjectIdentifier.init))
    // Registered objects hold no deferred defaults, and no stored strings in indexed
    // attributes (a loader decodes those at once); only objects of released contexts hold
    // released links, and drafts are in no context.
    case .toMany, .deferred, .released, .draft, .draftList: break
    }
  }
}

extension EntityTable {
  /// A table's attribute indexes, by property number: equality and ordered.
  struct AttributeIndexes {
    var values: [ValueIndex<PersistentValue>?]
    var ordered: [OrderedIndex?]
  }

  /// `indexes` (empty) with every object of `members` added to the index of each indexed
  /// attribute. Run on another thread while the objects are browsed (see
  /// ``startBuildingAttributeIndexes(from:)``): it reads the members' indexed attribute
  /// slots (or `values`, noted as they are) and their identifiers (an ordered index's tie
  /// key), and the table lets none of them change, nor takes the indexes, before the build's
  /// value is taken (nor lets one of them go: the objects are the table's, unretained).
  fileprivate static func attributeIndexes(
    members: [Unmanaged<ManagedObject>], indexes: AttributeIndexes,
    properties: [Int], values: IndexedAttributeValues? = nil
  ) -> AttributeIndexes {
    var indexes = indexes
    for property in properties where indexes.values[property] != nil {
      if let values, let column = values.column(for: property) {
        withExtendedLifetime(values) {
          indexes.values[property]!.add(members, for: column)
          indexes.ordered[property]?.add(members, for: column)
        }
        continue
      }
      let keys = members.map { member in
        member._withUnsafeGuaranteedRef { $0.slots[property].value }
      }
      indexes.values[property]!.add(members, for: keys)
      indexes.ordered[property]?.add(members, for: keys)
    }
    return indexes
  }
}
