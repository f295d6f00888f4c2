import Observation

/// The base class of every model class.
///
/// Subclass it, declare persistent properties with ``Attribute`` and ``Relationship``, and
/// insert instances into an ``ObjectContext``:
///
/// ```swift
/// final class Box: ManagedObject {
///   @Attribute(.unique) var id = UUID()
///   @Attribute var title = ""
///   @Relationship(inverse: \Box.children) var parent: Box?
///   @Relationship(deleteRule: .cascade) var children: [Box]
///
///   convenience init(title: String, parent: Box? = nil) {
///     self.init()
///     self.title = title
///     self.parent = parent
///   }
/// }
/// ```
///
/// Every model object is `Observable` (reading a property inside `withObservationTracking` or
/// a SwiftUI view registers it) and `Hashable` by identity. A subclass must keep the
/// `required init()`; its stored properties that are not attributes or relationships are not
/// persisted and must not create model objects in their initial values.
open class ManagedObject: Observable, Hashable {
  // The stored properties are declared so that they pack without padding: words first,
  // then the optional id (9 bytes) with the one-byte fields after it, then 4-byte fields.
  // An object of six properties takes 140 bytes, a 144-byte heap block (it took 176).

  /// The property values, indexed by the schema's property number: `slotCount` slots owned
  /// by the object, in a slab shared with the objects loaded or created with it, or in an
  /// allocation of its own. A pointer read without an exclusivity check (and no
  /// copy-on-write check); it changes only when the object leaves its slab
  /// (``takeOwnSlots()``).
  @usableFromInline @exclusivity(unchecked) final private(set) var slots: UnsafeMutablePointer<Slot>
  /// The memory the slots are in when the object was loaded or created with others (their
  /// slots are laid out one after another, in one allocation: see ``SlotSlab``); nil when
  /// the object owns its slots' allocation.
  @exclusivity(unchecked) private final var slab: SlotSlab?
  /// The class's model (a placeholder for the prototype that describes the class).
  final let model: EntityModel
  /// The context that tracks this object, unretained; it clears this reference before it
  /// goes away. Kept `Unmanaged` so asking whether there is one costs no retain.
  @exclusivity(unchecked) final var trackingReference: Unmanaged<ObjectContext>?
  /// What changed since the last save, for a saved object; nil when unchanged.
  @exclusivity(unchecked) final var changes: ObjectChanges?
  /// The Observation registrar the object shares with up to ``ObservationBox/capacity``
  /// objects of its context, given on the first read (boxed: the registrar's type is
  /// resilient, so an optional of it costs a value-witness call per check).
  @exclusivity(unchecked) final var observation: ObservationBox?
  /// The delivery batch that ``deliveredFlags`` describe (see ``DeliveredChanges``).
  @exclusivity(unchecked) final var deliveredBatch: UInt64 = 0
  /// The store version of the last save its context saw change the object (its own or a
  /// merged one); 0 when none has since the context loaded it (see
  /// ``ObjectContext/storeVersion(of:)``). In the heap block's slack: a box's block is no
  /// bigger for it.
  @exclusivity(unchecked) final var savedVersion: UInt64 = 0
  @exclusivity(unchecked) final var storedObjectID: ObjectID?
  /// Whether this is the instance that describes the class (see ``ModelRegistry``).
  final let isPrototype: Bool
  /// The object's seat in its shared registrar: its observation keys are those of this
  /// seat (see ``EntityModel/observationKeys``), so no two objects sharing a registrar
  /// share a key, and changing one notifies no observer of another.
  @exclusivity(unchecked) final var observationSeat: UInt8 = 0
  @exclusivity(unchecked) final var lifecycle: Lifecycle = .detached
  /// What happened to the object since its context's last delivery (see
  /// ``PendingChanges``).
  @exclusivity(unchecked) final var pendingFlags: UInt8 = 0
  /// What happened to the object in the batch numbered `deliveredBatch` (see
  /// ``DeliveredChanges``).
  @exclusivity(unchecked) final var deliveredFlags: UInt8 = 0
  /// Whether the object's context was released while the app held it: its relationships
  /// are read through the graph the context left behind and cannot change (see
  /// ``ReleasedGraph``).
  @exclusivity(unchecked) final var isReleased = false
  /// Whether the object, in no context, is related to another object in none: its
  /// relationships are kept in a graph apart from the instances (see ``DraftGraph``).
  @exclusivity(unchecked) final var isDraft = false
  private final let storedSlotCount: Int32
  @exclusivity(unchecked) private final var storedTableIndex: Int32 = -1
  /// The object's positions in its context's inserted, updated and deleted sets (see
  /// ``ObjectSet``), -1 when in none.
  @exclusivity(unchecked) final var insertedPosition: Int32 = -1
  @exclusivity(unchecked) final var updatedPosition: Int32 = -1
  @exclusivity(unchecked) final var deletedPosition: Int32 = -1
  /// The object's place in its context's list of touched objects (see ``PendingChanges``).
  @exclusivity(unchecked) final var pendingPosition: Int32 = -1
  /// Where the object last stood in an ordered list that holds it, -1 if nowhere known: a
  /// hint that finds it in O(1) when the list has not shifted it since, by a short search
  /// when it has (see ``ManagedObject/position(of:in:)``).
  @exclusivity(unchecked) final var listPositionHint: Int32 = -1

  /// The number of slots (the model's properties).
  final var slotCount: Int { Int(storedSlotCount) }

  /// The object's position in its context's ``EntityTable``, -1 when in none.
  final var tableIndex: Int {
    get { Int(storedTableIndex) }
    set { storedTableIndex = Int32(truncatingIfNeeded: newValue) }
  }

  /// The context that tracks this object.
  final var trackingContext: ObjectContext? {
    get { trackingReference?.takeUnretainedValue() }
    set { trackingReference = newValue.map { Unmanaged.passUnretained($0) } }
  }

  /// Whether `context` tracks the object, compared without retaining either context (the
  /// main context has a side table, where every retain takes the runtime's slow path).
  @inline(__always)
  final func isTracked(by context: ObjectContext) -> Bool {
    trackingReference?.toOpaque() == Unmanaged.passUnretained(context).toOpaque()
  }

  /// Runs `body` with the tracking context, borrowed (not retained), if there is one.
  @inline(__always)
  final func withTrackingContext(_ body: (ObjectContext) -> Void) {
    trackingReference?._withUnsafeGuaranteedRef(body)
  }

  /// Whether a context tracks the object or anyone observes it: writes must then be told.
  @inline(__always)
  final var isTrackedOrObserved: Bool { trackingReference != nil || observation != nil }

  /// Where an object stands with its context.
  enum Lifecycle: UInt8 {
    /// In no context.
    case detached
    /// Inserted into a context, not yet saved.
    case inserted
    /// Saved in the context's store.
    case persisted
    /// Deleted in its context, not yet saved.
    case deleted
  }

  /// Creates an object in no context. Insert it, or relate it to an inserted object.
  public required init() {
    let frame = ModelBuildState.withCurrent { $0.takeFrame(for: Self.self) }
    slots = frame.slots
    storedSlotCount = Int32(frame.count)
    slab = frame.slab
    isPrototype = frame.mode == .describe
    if let model = frame.model {
      self.model = model
    } else if isPrototype {
      model = EntityModel.describing
    } else {
      model = ModelRegistry.model(for: Self.self)
      ModelBuildState.withCurrent { $0.lastModel = model }
    }
  }

  deinit {
    if isReleased { retireFromReleasedGraph() }
    if isDraft, retireFromDraftGraph() { return }  // its graph took its slots
    // One slot at a time: moving a value out destroys it with code specialized for `Slot`,
    // where `deinitialize(count:)` goes through the runtime's generic value witnesses.
    for index in 0..<slotCount { _ = (slots + index).move() }
    if slab == nil { slots.deallocate() }  // else the slab frees it with its last object
  }

  // MARK: Identity

  /// The object's identity, assigned when it is inserted into a context; nil before.
  public final var objectID: ObjectID? { storedObjectID }

  /// The context the object is inserted in, if any.
  public final var context: ObjectContext? { trackingContext }

  /// Whether the object is deleted in its context and not yet saved.
  public final var isDeleted: Bool { lifecycle == .deleted }

  /// Whether the object was inserted into its context and not yet saved.
  public final var isInserted: Bool { lifecycle == .inserted }

  /// Whether the object has unsaved changes: inserted, updated or deleted.
  public final var hasChanges: Bool {
    lifecycle == .inserted || lifecycle == .deleted || changes != nil
  }

  public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

  public final func hash(into hasher: inout Hasher) {
    hasher.combine(ObjectIdentifier(self))
  }

  // MARK: Model

  /// The entity name: the class's name.
  public final var entityName: String { model.name }

  // MARK: Slot access

  /// Reads a relationship slot's objects, registering the access with Observation.
  ///
  /// Inlined, the list is read in place: copying the slot out first retained and released
  /// it once more on every read.
  @inlinable
  final func readObjects(_ index: Int) -> [ManagedObject] {
    willRead(index)
    return slots[index].objects
  }

  /// Reads a to-one relationship slot's object, registering the access with Observation.
  @inlinable
  final func readObject(_ index: Int) -> ManagedObject? {
    willRead(index)
    return slots[index].object
  }

  /// Reads a required to-one relationship (declared `T`, not `T?`), which must hold an
  /// object: reading it before it is set, or after its object was deleted or taken away
  /// through the inverse, stops the program naming the object and the relationship.
  @usableFromInline
  final func readRequiredObject(_ index: Int) -> ManagedObject {
    guard let object = readObject(index) else {
      let name = model.properties[index].name
      let id = storedObjectID.map(\.description) ?? "(new)"
      fatalError(
        "ObjectGraph: \(model.name) \(id).\(name) holds no object: a required relationship "
          + "(declared without `?`) was read before it was set, or after its object was deleted "
          + "or moved elsewhere through its inverse")
    }
    return object
  }

  /// Registers a read of a property with Observation and makes a deferred value; after it,
  /// `slots[index]` holds the property's value.
  @usableFromInline
  final func willRead(_ index: Int) {
    if isPrototype {
      ModelBuildState.current.probedIndex = index
      return
    }
    // Both used unretained: the object keeps its box, its model the keys. Retaining them
    // around the call cost four atomic operations a read.
    if observation == nil, !makeObservation() {
      resolveDeferredValue(index)  // its context's objects are not observed
      return
    }
    let box = Unmanaged.passUnretained(observation.unsafelyUnwrapped)
    let key = Unmanaged.passUnretained(observationKey(index))
    box._withUnsafeGuaranteedRef { box in
      key._withUnsafeGuaranteedRef { box.registrar.access(self, keyPath: $0) }
    }
    resolveDeferredValue(index)
  }

  /// Seats the object in its context's current shared registrar (or one of its own when
  /// it is in no context or its model has too many properties to share); returns false,
  /// seating it nowhere, when its context's objects are not observed
  /// (``ObjectContext/isObservable``).
  private final func makeObservation() -> Bool {
    if let context = trackingReference,
      !context._withUnsafeGuaranteedRef({ $0.isObservable })
    {
      return false
    }
    if model.sharesObservation, let context = trackingReference {
      // Unretained, like every use of the tracking reference: the context outlives it.
      context._withUnsafeGuaranteedRef { $0.seatForObservation(self) }
    } else {
      observation = ObservationBox()
      observationSeat = 0
    }
    return true
  }

  /// The Observation key of property `index` of this object.
  @inline(__always)
  final func observationKey(_ index: Int) -> KeyPath<ManagedObject, Int> {
    model.observationKeys[Int(observationSeat) &* model.propertyCount &+ index]
  }

  /// Writes a slot, telling the context (change tracking, indexes) and observers.
  ///
  /// Every write of a slot after initialization goes through here; relationship bookkeeping
  /// composes these writes. `edit` describes an ordered to-many change by index, when known.
  @inline(__always)
  final func writeSlot(_ index: Int, _ newValue: Slot, edit: ListEditRecord? = nil) {
    if isReleased { refuseReleasedWrite(index) }
    // An object in no context that nobody has read: nothing to track or tell.
    guard isTrackedOrObserved else {
      if isDraft { return writeDraftSlot(index, newValue, edit: edit, listEdits: nil) }
      slots[index] = newValue
      return
    }
    writeTrackedSlot(index, newValue, edit: edit)
  }

  /// ``writeSlot(_:_:edit:)`` for a list changed by several index edits at once.
  final func writeSlot(_ index: Int, _ newValue: Slot, edits: [ListEditRecord]) {
    if isReleased { refuseReleasedWrite(index) }
    guard isTrackedOrObserved else {
      if isDraft { return writeDraftSlot(index, newValue, edit: nil, listEdits: edits) }
      slots[index] = newValue
      return
    }
    writeTrackedSlot(index, newValue, edit: edits.first, listEdits: edits)
    guard edits.count > 1 else { return }
    withTrackingContext { $0.recordFurtherEdits(edits.dropFirst(), of: self, property: index) }
  }

  /// ``writeSlot(_:_:edit:)`` for a relationship of a draft: its graph keeps the related
  /// objects' numbers (from the list's index edits, when given), and the slot the objects of
  /// a list the draft holds (see ``DraftGraph``).
  @inline(never)
  private final func writeDraftSlot(
    _ index: Int, _ newValue: Slot, edit: ListEditRecord?, listEdits: [ListEditRecord]?
  ) {
    guard let membership = slots[index].draftMembership else {
      slots[index] = newValue  // an attribute, nobody observing it
      return
    }
    let key = observation == nil ? nil : observationKey(index)
    if let key { observation!.registrar.willSet(self, keyPath: key) }
    let (graph, number) = (membership.graph, membership.number)
    if let listEdits {
      graph.store(newValue, number, index, edits: listEdits)
    } else if let edit {
      graph.store(newValue, number, index, edits: CollectionOfOne(edit))
    } else {
      graph.store(newValue, number, index, edits: EmptyCollection())
    }
    // A list made again from the graph (``DraftGraph/instance(_:)``) is held again.
    if case .toMany(let objects) = newValue, model.relationship(index)!.isHeldByDrafts {
      slots[index] = .draftList(objects, membership)
    }
    if let key { observation!.registrar.didSet(self, keyPath: key) }
  }

  /// ``writeSlot(_:_:edit:)`` for an object a context tracks or someone observes.
  /// A list's write is told to the relationship observers of the context, with `listEdits`
  /// when it made several edits.
  @inline(never)
  private final func writeTrackedSlot(
    _ index: Int, _ newValue: Slot, edit: ListEditRecord?, listEdits: [ListEditRecord]? = nil
  ) {
    if isDraft, slots[index].draftMembership != nil {
      return writeDraftSlot(index, newValue, edit: edit, listEdits: listEdits)
    }
    if case .toMany(let list) = newValue {
      withTrackingContext { context in
        guard context.observers.observesLists else { return }
        let count = list.count
        if let listEdits {
          context.observers.noteListWrite(of: self, property: index, listEdits, count: count)
        } else if let edit {
          context.observers.noteListWrite(
            of: self, property: index, CollectionOfOne(edit), count: count)
        } else {
          context.observers.noteListWrite(of: self, property: index, [], count: count)
        }
      }
    }
    if lifecycle == .inserted, observation == nil, !model.isIndexed[index],
      trackingReference != nil
    {
      // A new object's unindexed property: no committed value to keep, no index to move,
      // no one observing it; only the next delivery must hear of the change.
      withTrackingContext { $0.noteChange(of: self, property: index) }
      slots[index] = newValue
      return
    }
    let observation = self.observation
    let key = observation == nil ? nil : observationKey(index)
    if let key { observation!.registrar.willSet(self, keyPath: key) }
    let oldValue = slots[index]
    withTrackingContext { $0.objectWillChange(self, property: index, from: oldValue, edit: edit) }
    slots[index] = newValue
    withTrackingContext { $0.objectDidChange(self, property: index, from: oldValue, to: newValue) }
    if let key { observation!.registrar.didSet(self, keyPath: key) }
  }

  /// Whether the object's slots are an allocation of its own, not a share of the memory of
  /// the objects loaded or created with it.
  final var ownsSlots: Bool { slab == nil }

  /// Moves the object's slots out of the memory it shares with the objects loaded or created
  /// with it into an allocation of its own, letting go of that memory: an object that
  /// outlives its context must not keep its whole load's values (see ``ReleasedGraph``).
  /// Stored strings left as bytes are decoded first (their bytes go with that memory).
  ///
  /// - Complexity: O(*p*) in the object's properties.
  final func takeOwnSlots() {
    guard slab != nil else { return }
    for index in 0..<slotCount {
      // A default (`UUID()`) stays deferred: it needs no memory of the slab, and making it
      // costs a read of the system's random source.
      if case .deferred(let pending) = slots[index], let stored = pending.storedValue {
        slots[index] = .value(stored)
      }
    }
    let own = UnsafeMutablePointer<Slot>.allocate(capacity: slotCount)
    own.moveInitialize(from: slots, count: slotCount)
    slots = own
    slab = nil
  }

  /// Stops the program when a relationship of an object whose context was released would
  /// change (see ``ReleasedGraph``); its attributes can change.
  @inline(never)
  private final func refuseReleasedWrite(_ index: Int) {
    guard model.relationship(index) != nil else { return }
    fatalError(MisuseMessage.changingReleased(self, index))
  }

  /// Gives the object's values back to the graph its released context left behind, which
  /// may make it again (see ``ReleasedGraph``).
  @inline(never)
  private final func retireFromReleasedGraph() {
    for index in model.relationshipIndices {
      if case .released(let link) = slots[index] { return link.graph.retire(self) }
    }
  }

  /// Tells observers of one property that it changed, without tracking (rollback, load).
  final func notifyObservers(of index: Int, _ body: () -> Void) {
    guard let observation else { return body() }
    let key = observationKey(index)
    observation.registrar.willSet(self, keyPath: key)
    body()
    observation.registrar.didSet(self, keyPath: key)
  }

  @usableFromInline
  final func setAttribute(_ index: Int, to value: PersistentValue) {
    guard isTrackedOrObserved else {
      slots[index] = .value(value)  // untracked: an equal value needs no care
      return
    }
    // A stored string equal to `value` is no change (a default is made only when read).
    if case .deferred(let pending) = slots[index], let stored = pending.storedValue {
      slots[index] = .value(stored)
    }
    if case .value(let old) = slots[index], old == value { return }
    writeTrackedSlot(index, .value(value), edit: nil)
  }
}

extension ManagedObject: CustomStringConvertible {
  public var description: String {
    let id = storedObjectID.map(\.description) ?? "new"
    return "\(type(of: self))(\(id))"
  }
}

extension ManagedObject {
  /// A property used only as an Observation key: `\ManagedObject.[observationKey: n]` names
  /// property `n % 256` of the object in seat `n / 256` of a shared registrar, so observers
  /// can be told about a property without the user's key paths.
  @usableFromInline
  final subscript(observationKey index: Int) -> Int { index }
}

/// Holds an `ObservationRegistrar` shared by up to ``capacity`` objects of one context.
///
/// A registrar costs three allocations to make and a lock to tear down; reading a property
/// of each of 100,000 loaded objects would otherwise make 100,000 of them. Objects sharing
/// one use keys of their own seats, so observers are told exactly what they observe.
@usableFromInline
final class ObservationBox {
  /// The number of objects that share one registrar.
  static let capacity = 64
  /// The largest property count whose keys fit a seat (`seat * 256 + property`).
  static let seatWidth = 256

  let registrar = ObservationRegistrar()
}

/// Hands out seats in shared registrars, ``ObservationBox/capacity`` to a box, in the order
/// objects come: a context's for objects read for the first time, a load's piece's for the
/// objects it makes.
struct ObservationSeats {
  private var box: ObservationBox?
  private var taken = ObservationBox.capacity

  /// Gives `object` the next seat, in a new box when the current one is full.
  mutating func seat(_ object: ManagedObject) {
    if taken == ObservationBox.capacity {
      box = ObservationBox()
      taken = 0
    }
    object.observation = box
    object.observationSeat = UInt8(truncatingIfNeeded: taken)
    taken += 1
  }
}

/// Model objects are `Identifiable`, as SwiftData's are: by identity (the standard
/// library's `id` for classes, an `ObjectIdentifier`), so `ForEach(boxes)` needs no `id:`. A
/// model that declares its own `id` attribute (`@Attribute(.unique) var id = UUID()`) reads
/// that attribute as `box.id`; its `Identifiable` identity stays the object's.
extension ManagedObject: Identifiable {}
