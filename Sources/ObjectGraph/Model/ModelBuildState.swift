import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Per-thread state that connects a model object's property wrappers to the object they
/// belong to while the object is being initialized.
///
/// Swift initializes a subclass's stored properties (the wrappers) before `ManagedObject.init`
/// runs, and a wrapper's `init` cannot see its enclosing instance. So each wrapper appends its
/// slot (its initial value) here, and learns its property number from the slot's position;
/// `ManagedObject.init` then takes the slots. The same frame lets the framework:
/// - **materialize** a stored object without evaluating the model's default values
///   (`= UUID()`, `= Date()`), which would be overwritten at once, and
/// - **describe** a model class: wrappers record what they were declared with (type,
///   options, delete rule, inverse) so the schema is built from the classes themselves.
@usableFromInline
final class ModelBuildState {
  @usableFromInline
  enum Mode {
    /// A user creates an object: evaluate defaults.
    case create
    /// The framework loads a stored object: skip defaults; the loader sets every slot.
    case materialize
    /// The framework builds a prototype to describe the class.
    case describe
  }

  /// The fields every wrapper `init` touches, behind a pointer: reading a class's stored
  /// property costs a dynamic exclusivity check, reading through a `let` pointer does not.
  /// A wrapper's `init` gets the pointer with one call (``currentFrame()``) and works
  /// through it, with no closure and no reference to the state to retain.
  @usableFromInline
  struct Hot {
    @usableFromInline var mode: Mode = .create
    var slots = SlotStack()
    var frameStart = 0
    /// In materialize mode: the slots the loader filled for the object being initialized,
    /// and the number of the next wrapper to initialize.
    var prepared: UnsafeMutablePointer<Slot>?
    var preparedCount = 0
    /// The model of the object being materialized, retained for it by the loader.
    var preparedModel: Unmanaged<EntityModel>?
    @usableFromInline var nextPrepared: Int32 = 0
    /// The model handed to the object being created or described, if known (a materialized
    /// object takes ``preparedModel``).
    var model: EntityModel?

    /// The property number of the next wrapper of an object being materialized.
    @inlinable
    mutating func nextPreparedIndex() -> Int32 {
      let index = nextPrepared
      nextPrepared = index + 1
      return index
    }

    /// Appends a wrapper's slot and returns its property number. Wrappers add their
    /// blueprint to ``ModelBuildState/blueprints`` themselves, in describe mode only.
    @usableFromInline
    mutating func append(_ slot: consuming Slot) -> Int32 {
      slots.push(slot)
      return Int32(slots.count - 1 - frameStart)
    }
  }

  private let hot: UnsafeMutablePointer<Hot> = {
    let pointer = UnsafeMutablePointer<Hot>.allocate(capacity: 1)
    pointer.initialize(to: Hot())
    return pointer
  }()

  @usableFromInline
  var mode: Mode {
    get { hot.pointee.mode }
    set { hot.pointee.mode = newValue }
  }

  /// Slots of the objects being initialized on this thread; the current object's start at
  /// `frameStart` (an object created by a default value gets a frame above its owner's).
  var slots: SlotStack {
    get { hot.pointee.slots }
    _modify { yield &hot.pointee.slots }
  }

  var frameStart: Int {
    get { hot.pointee.frameStart }
    set { hot.pointee.frameStart = newValue }
  }

  deinit {
    hot.pointee.slots.deallocate()
    hot.deinitialize(count: 1)
    hot.deallocate()
  }
  var blueprints: [PropertyBlueprint] = []
  /// The model handed to the object being created or described, if known.
  var model: EntityModel? {
    get { hot.pointee.model }
    set { hot.pointee.model = newValue }
  }
  /// The memory holding the slots of the object being materialized.
  var preparedSlab: SlotSlab?
  /// The slab the slots of objects created on this thread are carved from until it is full.
  /// Weak: only its objects keep it, so a thread that created objects keeps no slab once
  /// they are gone.
  private weak var creationSlab: SlotSlab?
  /// The model of the last class whose objects were created here, to skip the registry.
  var lastModel: EntityModel?
  /// The property number a prototype's wrapper answered last (see
  /// ``EntityModel/propertyIndex(probing:)``).
  var probedIndex: Int?

  /// The current thread's state.
  @usableFromInline
  static var current: ModelBuildState { unretainedCurrent.takeUnretainedValue() }

  /// The fields of the current thread's state that wrappers use, found with one call.
  @usableFromInline
  static func currentFrame() -> UnsafeMutablePointer<Hot> {
    unretainedCurrent._withUnsafeGuaranteedRef { $0.hot }
  }

  /// The current thread's state, not retained: the thread keeps it until it ends.
  @usableFromInline
  static var unretainedCurrent: Unmanaged<ModelBuildState> {
    let keyPlusOne = publishedKeyPlusOne.load(ordering: .acquiring)
    if keyPlusOne != 0,
      let pointer = pthread_getspecific(pthread_key_t(truncatingIfNeeded: keyPlusOne &- 1))
    {
      return Unmanaged<ModelBuildState>.fromOpaque(pointer)
    }
    return makeCurrent()
  }

  /// Makes the current thread's state (and the thread-local key, the first time).
  private static func makeCurrent() -> Unmanaged<ModelBuildState> {
    let state = Unmanaged.passRetained(ModelBuildState())
    pthread_setspecific(key, state.toOpaque())
    return state
  }

  /// Runs `body` with the current thread's state, borrowed: no retain and release, which
  /// every wrapper of every object created or loaded would otherwise pay.
  @inlinable @inline(__always)
  static func withCurrent<Result>(_ body: (ModelBuildState) throws -> Result) rethrows -> Result {
    try unretainedCurrent._withUnsafeGuaranteedRef(body)
  }

  /// The thread-local key, made on first use, which publishes it in ``publishedKeyPlusOne``.
  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { pointer in
      #if canImport(Darwin)
        Unmanaged<ModelBuildState>.fromOpaque(pointer).release()
      #else
        if let pointer { Unmanaged<ModelBuildState>.fromOpaque(pointer).release() }
      #endif
    }
    publishedKeyPlusOne.store(UInt(key) + 1, ordering: .releasing)
    return key
  }()

  /// ``key`` plus one once it is made, `0` before. An atomic is initialized statically, so
  /// reading it costs no lazy-global check (`swift_once`), which the seven lookups of every
  /// object created or loaded each paid when they read ``key``.
  private static let publishedKeyPlusOne = Atomic<UInt>(0)

  /// Hands the loader's slots (in `slab`) to the object about to be materialized: its
  /// wrappers only count themselves (``nextPreparedIndex()``), and its `ManagedObject.init`
  /// takes them, and `model`, which the loader retained for it (loaders on several threads
  /// retain a model for all their objects at once, so that no two threads write its
  /// reference count object after object).
  func prepare(
    _ slots: UnsafeMutablePointer<Slot>, count: Int, in slab: SlotSlab,
    retainedModel model: Unmanaged<EntityModel>
  ) {
    mode = .materialize
    hot.pointee.preparedModel = model
    preparedSlab = slab
    hot.pointee.prepared = slots
    hot.pointee.preparedCount = count
    hot.pointee.nextPrepared = 0
  }

  /// Makes an object of `model`'s class holding `values` as its slots, as the loader makes
  /// a stored object: its initializer's defaults are not evaluated. The object owns the
  /// memory of its slots.
  func make(_ model: EntityModel, from values: UnsafeBufferPointer<Slot>) -> ManagedObject {
    let slots = UnsafeMutablePointer<Slot>.allocate(capacity: values.count)
    slots.initialize(from: values.baseAddress!, count: values.count)
    return run(.materialize, model: nil) {
      hot.pointee.preparedModel = Unmanaged.passRetained(model)
      preparedSlab = nil
      hot.pointee.prepared = slots
      hot.pointee.preparedCount = values.count
      hot.pointee.nextPrepared = 0
      return model.type.init()
    }
  }

  /// Evaluates a wrapper's default value in a frame of its own, so that model objects
  /// created by the default (a nested `Box()`) do not take this object's slots.
  @usableFromInline
  static func evaluateDefault<Value>(
    _ makeDefault: () -> Value, in frame: UnsafeMutablePointer<Hot>
  )
    -> Value
  {
    let savedMode = frame.pointee.mode
    let savedStart = frame.pointee.frameStart
    let savedModel = frame.pointee.model.take()
    frame.pointee.mode = .create
    frame.pointee.frameStart = frame.pointee.slots.count
    defer {
      frame.pointee.mode = savedMode
      frame.pointee.frameStart = savedStart
      frame.pointee.model = savedModel
    }
    return makeDefault()
  }

  /// Runs `body` in a given mode with a frame of its own, restoring the frame afterwards.
  func run<Result>(_ mode: Mode, model: EntityModel?, _ body: () throws -> Result) rethrows
    -> Result
  {
    let savedMode = self.mode
    let savedStart = frameStart
    let savedBlueprints = blueprints
    let savedModel = self.model
    self.mode = mode
    frameStart = slots.count
    blueprints = []
    self.model = model
    defer {
      self.mode = savedMode
      frameStart = savedStart
      blueprints = savedBlueprints
      self.model = savedModel
    }
    return try body()
  }

  /// Records, while a class is described, the name the property described last (an
  /// attribute or a relationship) had in an earlier version of the model; does nothing for
  /// an object created or loaded.
  @inlinable
  static func noteOriginalName(_ name: String) {
    guard currentFrame().pointee.mode == .describe else { return }
    current.noteOriginalName(name)
  }

  /// Records the name the property described last had in an earlier version of the model.
  @usableFromInline
  func noteOriginalName(_ name: String) {
    switch blueprints.last {
    case .attribute(var attribute)?:
      attribute.originalName = name
      blueprints[blueprints.count - 1] = .attribute(attribute)
    case .relationship(var relationship)?:
      relationship.originalName = name
      blueprints[blueprints.count - 1] = .relationship(relationship)
    case nil:
      break
    }
  }

  /// Takes the frame for the object whose `ManagedObject.init` is running.
  func takeFrame(for type: ManagedObject.Type) -> (
    slots: UnsafeMutablePointer<Slot>, count: Int, slab: SlotSlab?, model: EntityModel?,
    mode: Mode
  ) {
    if mode == .materialize, let prepared = hot.pointee.prepared {
      if Int(hot.pointee.nextPrepared) != hot.pointee.preparedCount {
        fatalError(
          MisuseMessage.loading(
            hot.pointee.preparedModel?.takeUnretainedValue().type ?? type, madeBy: type,
            declared: Int(hot.pointee.nextPrepared), described: hot.pointee.preparedCount))
      }
      hot.pointee.prepared = nil
      let frameModel = hot.pointee.preparedModel.take()?.takeRetainedValue()
      let slab = preparedSlab.take()
      mode = .create  // objects created later in this initializer's body are user objects
      return (prepared, hot.pointee.preparedCount, slab, frameModel, .materialize)
    }
    let storage: UnsafeMutablePointer<Slot>
    let count: Int
    var slab: SlotSlab?
    if mode == .describe {
      (storage, count) = slots.popFrame(from: frameStart)
    } else {
      let carved = carveSlots(slots.count - frameStart)
      (storage, slab) = (carved.slots, carved.slab)
      count = slots.popFrame(from: frameStart, into: storage)
    }
    var frameModel = model
    if frameModel == nil, mode != .describe, let lastModel, lastModel.type == type {
      frameModel = lastModel
    }
    model = nil
    let frameMode = mode
    // Objects created later in this initializer's body are plain user objects.
    if mode == .materialize { mode = .create }
    return (storage, count, slab, frameModel, frameMode)
  }

  /// Room for the `count` slots of an object created on this thread, in the slab they are
  /// carved from (see ``SlotSlab``), which the object keeps.
  private func carveSlots(_ count: Int) -> (slots: UnsafeMutablePointer<Slot>, slab: SlotSlab) {
    let needed = max(count, 1)  // an object of no properties still gets slots of its own
    if let slab = creationSlab, let slots = slab.carve(needed) { return (slots, slab) }
    let slab = SlotSlab(roomFor: max(needed, SlotSlab.creationCapacity))
    creationSlab = slab
    return (slab.carve(needed)!, slab)
  }
}

/// What a wrapper was declared with, recorded while a class is described.
@usableFromInline
enum PropertyBlueprint {
  case attribute(AttributeBlueprint)
  case relationship(RelationshipBlueprint)
}

@usableFromInline
struct AttributeBlueprint {
  var valueType: Any.Type
  var options: [AttributeOption]
  /// Nil when the value type cannot be persisted.
  var codec: AttributeCodec?
  /// For a `Codable` type, why stored bytes do not decode as it (nil when they do).
  var decodingProblem: ((Data) -> String?)?
  /// For a `Codable` type, its name and shape (``CodableShape``).
  var codableType: String?
  /// Whether the declaration gives a default value (`= ""`); one without
  /// (`@Attribute var title: String`) must be set before a save.
  var hasDefault = true
  /// Whether, declared without a default, the type has no value the describing instance
  /// can hold (a `Codable` type that decodes from no empty JSON): the container refuses it.
  var lacksPlaceholder = false
  /// The name in an earlier version of the model (`originalName:`).
  var originalName: String?
}

@usableFromInline
struct RelationshipBlueprint {
  var destination: ManagedObject.Type
  var isToMany: Bool
  var deleteRule: DeleteRule
  var minimumCount: Int?
  var maximumCount: Int?
  /// The declared inverse: the class it belongs to, and a probe that reads it on an instance.
  var inverseRoot: ManagedObject.Type?
  var inverseProbe: ((ManagedObject) -> Void)?
  /// How the declared type holds the objects.
  var shape: RelationshipShape
  /// The name in an earlier version of the model (`originalName:`).
  var originalName: String?
}
