import Foundation

/// A type that ObjectGraph stores natively as an attribute.
///
/// `Bool`, every integer type, `Double`, `Float`, `String`, `Date`, `Data`, `UUID`, `URL` and
/// optionals of these conform. Any other `Codable` type may be used as an attribute too: it is
/// stored as its JSON encoding (type ``AttributeType/codable``).
public protocol AttributeValue {
  /// The stored type.
  static var attributeType: AttributeType { get }
  /// Creates a value from its stored form, or nil if the stored form does not fit.
  init?(persistentValue: PersistentValue)
  /// The stored form.
  var persistentValue: PersistentValue { get }
}

extension AttributeValue {
  @usableFromInline static var isOptionalAttribute: Bool {
    Self.self is any OptionalAttribute.Type
  }
}

/// Lets generic code recognize and make `Optional` values of any wrapped type.
@usableFromInline protocol OptionalAttribute {
  var isNone: Bool { get }
  var wrappedAny: Any? { get }
  static var none: Self { get }
}

extension Optional: OptionalAttribute {
  @usableFromInline var isNone: Bool { self == nil }
  @usableFromInline var wrappedAny: Any? { self.map { $0 as Any } }
}

extension Optional: AttributeValue where Wrapped: AttributeValue {
  public static var attributeType: AttributeType { Wrapped.attributeType }
  public init?(persistentValue: PersistentValue) {
    if case .null = persistentValue {
      self = .none
    } else if let wrapped = Wrapped(persistentValue: persistentValue) {
      self = .some(wrapped)
    } else {
      return nil
    }
  }
  public var persistentValue: PersistentValue { self?.persistentValue ?? .null }
}

extension Bool: AttributeValue {
  public static var attributeType: AttributeType { .bool }
  public init?(persistentValue: PersistentValue) {
    guard case .bool(let value) = persistentValue else { return nil }
    self = value
  }
  public var persistentValue: PersistentValue { .bool(self) }
}

extension String: AttributeValue {
  public static var attributeType: AttributeType { .string }
  public init?(persistentValue: PersistentValue) {
    guard case .string(let value) = persistentValue else { return nil }
    self = value
  }
  public var persistentValue: PersistentValue { .string(self) }
}

extension Double: AttributeValue {
  public static var attributeType: AttributeType { .double }
  public init?(persistentValue: PersistentValue) {
    guard case .double(let value) = persistentValue else { return nil }
    self = value
  }
  public var persistentValue: PersistentValue { .double(self) }
}

extension Float: AttributeValue {
  public static var attributeType: AttributeType { .float }
  public init?(persistentValue: PersistentValue) {
    guard case .double(let value) = persistentValue else { return nil }
    self = Float(value)
  }
  public var persistentValue: PersistentValue { .double(Double(self)) }
}

extension Date: AttributeValue {
  public static var attributeType: AttributeType { .date }
  public init?(persistentValue: PersistentValue) {
    guard case .date(let value) = persistentValue else { return nil }
    self = value
  }
  public var persistentValue: PersistentValue { .date(self) }
}

extension Data: AttributeValue {
  public static var attributeType: AttributeType { .data }
  public init?(persistentValue: PersistentValue) {
    guard case .data(let value) = persistentValue else { return nil }
    self = value
  }
  public var persistentValue: PersistentValue { .data(self) }
}

extension UUID: AttributeValue {
  public static var attributeType: AttributeType { .uuid }
  public init?(persistentValue: PersistentValue) {
    guard case .uuid(let value) = persistentValue else { return nil }
    self = value
  }
  public var persistentValue: PersistentValue { .uuid(self) }
}

extension URL: AttributeValue {
  public static var attributeType: AttributeType { .url }
  public init?(persistentValue: PersistentValue) {
    guard case .url(let value) = persistentValue else { return nil }
    self = value
  }
  public var persistentValue: PersistentValue { .url(self) }
}

/// The integer types, stored as `Int64` (unsigned ones by bit pattern).
public protocol IntegerAttributeValue: AttributeValue, FixedWidthInteger {}

extension IntegerAttributeValue {
  public init?(persistentValue: PersistentValue) {
    guard case .int(let value) = persistentValue else { return nil }
    if Self.isSigned {
      guard let exact = Self(exactly: value) else { return nil }
      self = exact
    } else {
      guard let exact = Self(exactly: UInt64(bitPattern: value)) else { return nil }
      self = exact
    }
  }
  public var persistentValue: PersistentValue {
    Self.isSigned ? .int(Int64(self)) : .int(Int64(bitPattern: UInt64(self)))
  }
}

extension Int: IntegerAttributeValue { public static var attributeType: AttributeType { .int } }
extension Int8: IntegerAttributeValue { public static var attributeType: AttributeType { .int8 } }
extension Int16: IntegerAttributeValue {
  public static var attributeType: AttributeType { .int16 }
}
extension Int32: IntegerAttributeValue {
  public static var attributeType: AttributeType { .int32 }
}
extension Int64: IntegerAttributeValue {
  public static var attributeType: AttributeType { .int64 }
}
extension UInt: IntegerAttributeValue { public static var attributeType: AttributeType { .uint } }
extension UInt8: IntegerAttributeValue {
  public static var attributeType: AttributeType { .uint8 }
}
extension UInt16: IntegerAttributeValue {
  public static var attributeType: AttributeType { .uint16 }
}
extension UInt32: IntegerAttributeValue {
  public static var attributeType: AttributeType { .uint32 }
}
extension UInt64: IntegerAttributeValue {
  public static var attributeType: AttributeType { .uint64 }
}
