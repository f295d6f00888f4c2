import Foundation

/// Options for an ``Attribute``.
public struct AttributeOption: Hashable, Sendable {
  @usableFromInline
  enum Kind: UInt8, Sendable {
    case unique
    case indexed
  }

  @usableFromInline let kind: Kind

  @inlinable
  init(_ kind: Kind) { self.kind = kind }

  // Computed, not stored: `@Attribute(.unique)` evaluates the option for every object made
  // or loaded, and a stored static costs a lazy-initialization check and a retain each time.

  /// No two objects of the entity may hold the same value; a clash fails the save with
  /// ``ObjectGraphError/Code/uniqueConstraint``. Implies ``indexed``.
  @inlinable
  public static var unique: AttributeOption { AttributeOption(.unique) }
  /// Fetches by equality on this attribute are answered from an index kept up to date as
  /// values change, not by scanning every object. On an attribute whose values have an order
  /// (numbers, dates, strings, UUIDs, and their optionals), an ordered index also answers
  /// comparisons (`$0.created >= start && $0.created < end`: a `fetchCount` of it costs
  /// O(log *n*)) and fetches sorted first by the attribute with a `fetchLimit` (the top 20, a
  /// page at any offset), which read O(log *n* + *k*) objects instead of sorting them all.
  /// Every change of the attribute then costs O(log *n*) more. A UUID attribute's ordered
  /// index is made the first time a fetch asks for its order.
  @inlinable
  public static var indexed: AttributeOption { AttributeOption(.indexed) }
}

/// Declares a persistent attribute of a ``ManagedObject`` subclass.
///
/// ```swift
/// final class Box: ManagedObject {
///   @Attribute(.unique) var id = UUID()
///   @Attribute var title = ""
///   @Attribute var tags: [String] = []   // Codable: stored as JSON
/// }
/// ```
///
/// The value lives in storage the framework owns; reading registers with Observation and
/// setting is tracked by the object's context. The default value is evaluated only when you
/// create an object, never when the framework loads a stored one.
@propertyWrapper
public struct Attribute<Value> {
  @usableFromInline let index: Int32

  /// Declares an attribute with a default value and options.
  @inlinable
  public init(wrappedValue: @autoclosure @escaping () -> Value, _ options: AttributeOption...) {
    index = Self.register(wrappedValue, options)
  }

  /// Declares an attribute with a default value and one option (`@Attribute(.unique)`);
  /// spares the array a variadic list allocates for every object.
  @inlinable
  public init(wrappedValue: @autoclosure @escaping () -> Value, _ option: AttributeOption) {
    index = Self.register(wrappedValue, CollectionOfOne(option))
  }

  /// Declares an attribute with a default value (`@Attribute var title = ""`).
  @inlinable
  public init(wrappedValue: @autoclosure @escaping () -> Value) {
    index = Self.register(wrappedValue, EmptyCollection())
  }

  /// Declares an attribute with a default value, options, and the name it had in an earlier
  /// version of the model (SwiftData's `originalName:`), which the schema records.
  @inlinable
  public init(
    wrappedValue: @autoclosure @escaping () -> Value, _ options: AttributeOption...,
    originalName: String
  ) {
    index = Self.register(wrappedValue, options)
    ModelBuildState.noteOriginalName(originalName)
  }

  /// Declares an attribute without a default value, as SwiftData models do
  /// (`@Attribute var title: String`), with no options.
  ///
  /// The app sets the value before the object is first saved, usually in its initializer
  /// (after `super.init()`: see the README's "Porting from SwiftData"); a save that finds a
  /// non-optional attribute never set fails with ``ObjectGraphError/Code/missingValue``
  /// naming the object and the property, and reading it before it is set stops the program
  /// with a message naming the type. An optional attribute starts as `nil`.
  @inlinable
  public init() {
    index = Self.registerUnset(EmptyCollection())
  }

  /// Declares an attribute without a default value, with one option
  /// (`@Attribute(.unique) var code: String`; see ``init()``).
  @inlinable
  public init(_ option: AttributeOption) {
    index = Self.registerUnset(CollectionOfOne(option))
  }

  /// Declares an attribute without a default value, with options (see ``init()``).
  @inlinable
  public init(_ options: AttributeOption...) {
    index = Self.registerUnset(options)
  }

  /// Declares an attribute without a default value, with options and the name it had in an
  /// earlier version of the model (see ``init()`` and
  /// ``init(wrappedValue:_:originalName:)``).
  @inlinable
  public init(_ options: AttributeOption..., originalName: String) {
    index = Self.registerUnset(options)
    ModelBuildState.noteOriginalName(originalName)
  }

  /// Pushes the slot of an attribute declared without a default: `.null`, which a save
  /// refuses for a non-optional attribute until the app sets a value.
  @inlinable
  static func registerUnset(_ options: some Collection<AttributeOption>) -> Int32 {
    let frame = ModelBuildState.currentFrame()
    switch frame.pointee.mode {
    case .materialize:
      return frame.pointee.nextPreparedIndex()  // the loader has filled the slots
    case .create:
      return frame.pointee.append(.value(.null))
    case .describe:
      return describeUnset(Array(options))
    }
  }

  /// Pushes the prototype's slot of an attribute declared without a default.
  @usableFromInline
  static func describeUnset(_ options: [AttributeOption]) -> Int32 {
    let codec = AttributeCodec.make(for: Value.self)
    var blueprint = blueprint(options: options, codec: codec, hasDefault: false)
    let placeholder = codec.flatMap { AttributeCodec.placeholder(for: Value.self, codec: $0) }
    blueprint.lacksPlaceholder = codec != nil && placeholder == nil
    ModelBuildState.current.blueprints.append(.attribute(blueprint))
    return ModelBuildState.currentFrame().pointee.append(.value(placeholder ?? .null))
  }

  /// How the attribute was declared, for the schema.
  static func blueprint(options: [AttributeOption], codec: AttributeCodec?, hasDefault: Bool)
    -> AttributeBlueprint
  {
    AttributeBlueprint(
      valueType: Value.self, options: options, codec: codec,
      decodingProblem: codec?.type == .codable
        ? AttributeCodec.decodingProblem(as: Value.self) : nil,
      codableType: codec?.type == .codable ? AttributeCodec.shape(of: Value.self) : nil,
      hasDefault: hasDefault)
  }

  /// Pushes the attribute's slot for the object being initialized. Inlined into the model's
  /// module, so the default converts with the value's concrete type.
  @inlinable
  static func register(
    _ makeDefault: @escaping () -> Value, _ options: some Collection<AttributeOption>
  ) -> Int32 {
    let frame = ModelBuildState.currentFrame()
    switch frame.pointee.mode {
    case .materialize:
      return frame.pointee.nextPreparedIndex()  // the loader has filled the slots
    case .create:
      if Value.self == UUID.self, let makeUUID = makeDefault as? () -> UUID {
        // Specialized for `UUID` in the model's module, the cast is free.
        return frame.pointee.append(.deferred(.uuid(makeUUID)))
      }
      let value = ModelBuildState.evaluateDefault(makeDefault, in: frame)
      return frame.pointee.append(.value(AttributeCodec.encode(value)))
    case .describe:
      return describe(makeDefault, Array(options))
    }
  }

  /// Pushes the prototype's slot and records how the attribute was declared.
  @usableFromInline
  static func describe(_ makeDefault: @escaping () -> Value, _ options: [AttributeOption])
    -> Int32
  {
    let codec = AttributeCodec.make(for: Value.self)
    ModelBuildState.current.blueprints.append(
      .attribute(blueprint(options: options, codec: codec, hasDefault: true)))
    // A type that cannot be persisted is reported by the schema, not here.
    let frame = ModelBuildState.currentFrame()
    guard codec != nil else { return frame.pointee.append(.value(.null)) }
    let value = ModelBuildState.evaluateDefault(makeDefault, in: frame)
    return frame.pointee.append(.value(AttributeCodec.encode(value)))
  }

  @available(*, unavailable, message: "@Attribute is only available on ManagedObject subclasses")
  public var wrappedValue: Value {
    get { fatalError() }
    set { fatalError() }
  }

  /// Reads or writes the attribute of `object`.
  @inlinable
  public static subscript<Object: ManagedObject>(
    _enclosingInstance object: Object,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
    storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
  ) -> Value {
    @inline(__always) get {
      let index = Int(object[keyPath: storageKeyPath].index)
      object.willRead(index)
      return AttributeCodec.decode(object.slots[index], as: Value.self)
    }
    @inline(__always) set {
      let index = Int(object[keyPath: storageKeyPath].index)
      object.setAttribute(index, to: AttributeCodec.encode(newValue))
    }
  }
}

/// Marks a stored property of a model class that is not persisted, as SwiftData's
/// `@Transient` does: it keeps its value in the object only, is never saved, loaded or
/// observed by a context, and starts from its initial value in every object (a loaded one
/// included).
///
/// ```swift
/// final class Trip: ManagedObject {
///   @Attribute var name = ""
///   @Transient var isExpanded = false
/// }
/// ```
///
/// A plain stored property is not persisted either; the marker says so where a reader of a
/// SwiftData model expects it.
@propertyWrapper
public struct Transient<Value> {
  public var wrappedValue: Value

  public init(wrappedValue: Value) {
    self.wrappedValue = wrappedValue
  }
}
