/// Declares a relationship of a ``ManagedObject`` subclass: to-one (`T?`, or `T` when a save
/// requires an object) or ordered to-many (`[T]`, or `[T]?` as CloudKit-synced SwiftData
/// models declare it; either always keeps the order you give it).
///
/// ```swift
/// final class Box: ManagedObject {
///   @Relationship(inverse: \Box.children) var parent: Box?
///   @Relationship(deleteRule: .cascade) var children: [Box]
///   @Relationship var tags: [Tag]
/// }
/// box.children.move(fromOffsets: [0], toOffset: 2)   // one tracked move
/// box.$children.insert(task, at: 0)                   // index operations on the projection
/// ```
///
/// Declaring the inverse on one side is enough; setting either side updates the other at
/// once, before any save, on objects in a context or not yet inserted.
@propertyWrapper
public struct Relationship<Value: RelationshipValue> {
  @usableFromInline let index: Int32

  /// Declares a relationship with no options (delete rule nullify, no declared inverse).
  @inlinable
  public init() {
    self.init(deleteRule: .nullify, minimumModelCount: nil, maximumModelCount: nil)
  }

  /// Declares a relationship with a delete rule and optional count bounds.
  ///
  /// - Parameters:
  ///   - deleteRule: What deleting this object does to the related objects.
  ///   - minimumModelCount: The fewest objects a to-many relationship may hold at save.
  ///   - maximumModelCount: The most objects a to-many relationship may hold at save.
  @inlinable
  public init(
    deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = nil,
    maximumModelCount: Int? = nil
  ) {
    let frame = ModelBuildState.currentFrame()
    if frame.pointee.mode == .materialize {
      index = frame.pointee.nextPreparedIndex()  // the loader fills the slot
    } else {
      index = Self.register(
        in: frame, deleteRule: deleteRule, minimum: minimumModelCount,
        maximum: maximumModelCount, inverseRoot: nil, inverseProbe: nil)
    }
  }

  /// Declares a relationship with its inverse, a delete rule and optional count bounds.
  ///
  /// - Parameters:
  ///   - deleteRule: What deleting this object does to the related objects.
  ///   - inverse: The relationship on the destination class that mirrors this one.
  ///   - minimumModelCount: The fewest objects a to-many relationship may hold at save.
  ///   - maximumModelCount: The most objects a to-many relationship may hold at save.
  ///
  /// The key path is taken as an autoclosure, evaluated only when the class is described:
  /// making a key path object for every object created or loaded cost a lookup and a retain.
  @inlinable
  public init<Destination: ManagedObject, Inverse: RelationshipValue>(
    deleteRule: DeleteRule = .nullify, inverse: @autoclosure () -> KeyPath<Destination, Inverse>,
    minimumModelCount: Int? = nil, maximumModelCount: Int? = nil
  ) {
    // Inlined into the model's module, so loading an object costs one frame lookup here.
    let frame = ModelBuildState.currentFrame()
    if frame.pointee.mode == .materialize {
      index = frame.pointee.nextPreparedIndex()  // the loader fills the slot
      return
    }
    // The probe is a closure (an allocation): made only when the class is described.
    var probe: ((ManagedObject) -> Void)?
    if frame.pointee.mode == .describe {
      let inverse = inverse()
      probe = { object in
        if let object = object as? Destination { _ = object[keyPath: inverse] }
      }
    }
    index = Self.register(
      in: frame, deleteRule: deleteRule, minimum: minimumModelCount,
      maximum: maximumModelCount, inverseRoot: Destination.self, inverseProbe: probe)
  }

  /// Declares a relationship with an initial value, as SwiftData models write them
  /// (`@Relationship(deleteRule: .cascade) var children: [Item] = []`, `var parent: Box? =
  /// nil`), a delete rule and optional count bounds.
  ///
  /// A relationship always starts empty: the initial value is accepted so that SwiftData's
  /// declarations compile as written, and is never evaluated (relating objects needs the
  /// object made first: relate them in the initializer, after `super.init()`).
  @inlinable
  public init(
    wrappedValue: @autoclosure () -> Value, deleteRule: DeleteRule = .nullify,
    minimumModelCount: Int? = nil, maximumModelCount: Int? = nil
  ) {
    self.init(
      deleteRule: deleteRule, minimumModelCount: minimumModelCount,
      maximumModelCount: maximumModelCount)
  }

  /// Declares a relationship with an initial value (`[]` or `nil`, never evaluated: see
  /// ``init(wrappedValue:deleteRule:minimumModelCount:maximumModelCount:)``), its inverse, a
  /// delete rule and optional count bounds.
  @inlinable
  public init<Destination: ManagedObject, Inverse: RelationshipValue>(
    wrappedValue: @autoclosure () -> Value, deleteRule: DeleteRule = .nullify,
    inverse: @autoclosure () -> KeyPath<Destination, Inverse>,
    minimumModelCount: Int? = nil, maximumModelCount: Int? = nil
  ) {
    self.init(
      deleteRule: deleteRule, inverse: inverse(), minimumModelCount: minimumModelCount,
      maximumModelCount: maximumModelCount)
  }

  /// Declares a relationship with the name it had in an earlier version of the model
  /// (SwiftData's `originalName:`, recorded in the schema for migrations), a delete rule and
  /// optional count bounds.
  @inlinable
  public init(
    deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = nil,
    maximumModelCount: Int? = nil, originalName: String
  ) {
    self.init(
      deleteRule: deleteRule, minimumModelCount: minimumModelCount,
      maximumModelCount: maximumModelCount)
    ModelBuildState.noteOriginalName(originalName)
  }

  /// Declares a relationship with an initial value (`[]` or `nil`, never evaluated) and the
  /// name it had in an earlier version of the model.
  @inlinable
  public init(
    wrappedValue: @autoclosure () -> Value, deleteRule: DeleteRule = .nullify,
    minimumModelCount: Int? = nil, maximumModelCount: Int? = nil, originalName: String
  ) {
    self.init(
      deleteRule: deleteRule, minimumModelCount: minimumModelCount,
      maximumModelCount: maximumModelCount, originalName: originalName)
  }

  /// Declares a relationship with its inverse, written in SwiftData's order (`originalName:`
  /// before `inverse:`), and the name it had in an earlier version of the model.
  @inlinable
  public init<Destination: ManagedObject, Inverse: RelationshipValue>(
    deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = nil,
    maximumModelCount: Int? = nil, originalName: String,
    inverse: @autoclosure () -> KeyPath<Destination, Inverse>
  ) {
    self.init(
      deleteRule: deleteRule, inverse: inverse(), minimumModelCount: minimumModelCount,
      maximumModelCount: maximumModelCount)
    ModelBuildState.noteOriginalName(originalName)
  }

  /// Declares a relationship with an initial value (`[]` or `nil`, never evaluated), its
  /// inverse and the name it had in an earlier version of the model.
  @inlinable
  public init<Destination: ManagedObject, Inverse: RelationshipValue>(
    wrappedValue: @autoclosure () -> Value, deleteRule: DeleteRule = .nullify,
    minimumModelCount: Int? = nil, maximumModelCount: Int? = nil, originalName: String,
    inverse: @autoclosure () -> KeyPath<Destination, Inverse>
  ) {
    self.init(
      deleteRule: deleteRule, minimumModelCount: minimumModelCount,
      maximumModelCount: maximumModelCount, originalName: originalName, inverse: inverse())
  }

  /// Pushes the relationship's empty slot for an object being created or described, and
  /// records its declaration when described.
  @usableFromInline
  static func register(
    in frame: UnsafeMutablePointer<ModelBuildState.Hot>, deleteRule: DeleteRule,
    minimum: Int?, maximum: Int?, inverseRoot: ManagedObject.Type?,
    inverseProbe: ((ManagedObject) -> Void)?
  ) -> Int32 {
    if frame.pointee.mode == .describe {
      ModelBuildState.current.blueprints.append(
        .relationship(
          RelationshipBlueprint(
            destination: Value.destinationType, isToMany: Value.isToMany, deleteRule: deleteRule,
            minimumCount: minimum, maximumCount: maximum, inverseRoot: inverseRoot,
            inverseProbe: inverseProbe, shape: Value.relationshipShape)))
    }
    return frame.pointee.append(Value.isToMany ? .toMany([]) : .toOne(nil))
  }

  @available(*, unavailable, message: "@Relationship is only available on ManagedObject subclasses")
  public var wrappedValue: Value {
    get { fatalError() }
    set { fatalError() }
  }

  @available(*, unavailable, message: "@Relationship is only available on ManagedObject subclasses")
  public var projectedValue: RelatedObjects<Value> {
    get { fatalError() }
    set { fatalError() }
  }

  /// Reads or writes the relationship of `object`.
  @inlinable
  public static subscript<Object: ManagedObject>(
    _enclosingInstance object: Object,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
    storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
  ) -> Value {
    @inline(__always) get {
      let index = Int(object[keyPath: storageKeyPath].index)
      // `T?`, `T`, `[T]` and `[T]?` have the layout of `ManagedObject?` (a `T` is never nil:
      // checked first) and `[ManagedObject]` (an array is never nil, so `[T]?` reads it as
      // `.some`); every object was checked to be a `T` when stored.
      if Value.isToMany {
        return unsafeBitCast(object.readObjects(index), to: Value.self)
      }
      if Value.relationshipShape == .requiredToOne {
        return unsafeBitCast(object.readRequiredObject(index), to: Value.self)
      }
      return unsafeBitCast(object.readObject(index), to: Value.self)
    }
    @inline(__always) set {
      let index = Int(object[keyPath: storageKeyPath].index)
      if Value.isToMany {
        object.setToMany(index, to: Self.objects(in: newValue))
      } else {
        object.setToOne(index, to: unsafeBitCast(newValue, to: ManagedObject?.self))
      }
    }
    // A mutation in place (`box.children.append(child)`): the list is lent so that the
    // array's mutating methods make index edits (see ``ListModification``), O(1) besides the
    // array's own work, instead of a copy of the list and a whole-list comparison.
    _modify {
      let index = Int(object[keyPath: storageKeyPath].index)
      if Value.isToMany {
        // Not a read for Observation: the mutation's edits tell observers what changed.
        var value = unsafeBitCast(object.slots[index].objects, to: Value.self)
        let modification = ListModification.begin(index, of: object, lending: &value)
        // Also when the access ends by an error: the lent array is taken as it is, as a
        // stored array would be.
        defer { modification.finish(Self.objects(in: value)) }
        yield &value
      } else {
        var value =
          Value.relationshipShape == .requiredToOne
          ? unsafeBitCast(object.readRequiredObject(index), to: Value.self)
          : unsafeBitCast(object.readObject(index), to: Value.self)
        yield &value
        object.setToOne(index, to: unsafeBitCast(value, to: ManagedObject?.self))
      }
    }
  }

  /// The objects of a to-many value: `[T]` as it is, `[T]?` unwrapped (nil is empty).
  @inlinable @inline(__always)
  static func objects(in value: Value) -> [ManagedObject] {
    Value.relationshipShape == .optionalToMany
      ? unsafeBitCast(value, to: [ManagedObject]?.self) ?? []
      : unsafeBitCast(value, to: [ManagedObject].self)
  }

  /// The relationship's projection (`object.$children`), with index operations.
  @inlinable
  public static subscript<Object: ManagedObject>(
    _enclosingInstance object: Object,
    projected projectedKeyPath: ReferenceWritableKeyPath<Object, RelatedObjects<Value>>,
    storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
  ) -> RelatedObjects<Value> {
    @inline(__always) get {
      RelatedObjects(owner: object, index: Int(object[keyPath: storageKeyPath].index))
    }
    set {}
  }
}
