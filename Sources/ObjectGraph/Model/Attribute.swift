import Foundation

/// Options for an ``Attribute``.
public struct AttributeOption: Hashable, Sendable {
  let rawValue: String

  /// No two objects of the entity may hold the same value; a clash fails the save with
  /// ``ObjectGraphError/Code/uniqueConstraint``. Implies ``indexed``.
  public static let unique = AttributeOption(rawValue: "unique")
  /// Fetches by equality on this attribute are answered from an index kept up to date as
  /// values change, not by scanning every object.
  public static let indexed = AttributeOption(rawValue: "indexed")
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
  public init(wrappedValue: @autoclosure @escaping () -> Value, _ options: AttributeOption...) {
    let state = ModelBuildState.current
    let codec = state.mode == .describe ? AttributeCodec.make(for: Value.self) : nil
    let slot: Slot
    if state.mode == .materialize || (state.mode == .describe && codec == nil) {
      // Loading sets every slot; a type that cannot be persisted is reported by the schema.
      slot = .value(.null)
    } else if Value.self == UUID.self, state.mode == .create {
      slot = .deferred(DeferredDefault { AttributeCodec.encode(wrappedValue()) })
    } else {
      slot = .value(AttributeCodec.encode(state.evaluateDefault(wrappedValue)))
    }
    index = state.append(
      slot,
      blueprint: .attribute(
        AttributeBlueprint(valueType: Value.self, options: options, codec: codec)))
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
    get {
      let index = Int(object[keyPath: storageKeyPath].index)
      object.willRead(index)
      return AttributeCodec.decode(object.slots[index], as: Value.self)
    }
    set {
      let index = Int(object[keyPath: storageKeyPath].index)
      object.setAttribute(index, to: AttributeCodec.encode(newValue))
    }
  }
}
