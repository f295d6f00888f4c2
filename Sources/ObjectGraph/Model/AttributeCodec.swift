import Foundation

/// How an attribute's Swift value becomes a ``PersistentValue`` and back.
///
/// Native types (``AttributeValue``) convert directly; any other `Codable` type is stored as
/// its JSON encoding with sorted keys, so equal values give equal bytes.
@usableFromInline
struct AttributeCodec {
  var type: AttributeType
  var isOptional: Bool

  /// The codec for a value type, or nil if the type cannot be persisted.
  @usableFromInline
  static func make<Value>(for _: Value.Type) -> AttributeCodec? {
    if let native = Value.self as? any AttributeValue.Type {
      return AttributeCodec(type: native.attributeType, isOptional: native.isOptionalAttribute)
    }
    if Value.self is any Codable.Type {
      return AttributeCodec(type: .codable, isOptional: Value.self is any OptionalAttribute.Type)
    }
    return nil
  }

  @usableFromInline
  static func encode<Value>(_ value: Value) -> PersistentValue {
    if let native = value as? any AttributeValue { return native.persistentValue }
    if let optional = value as? any OptionalAttribute, optional.isNone { return .null }
    if let encodable = value as? any Encodable {
      do {
        return .data(try encoder.encode(encodable))
      } catch {
        fatalError("ObjectGraph: cannot encode \(Value.self) attribute value: \(error)")
      }
    }
    fatalError("ObjectGraph: \(Value.self) is not a persistable attribute type")
  }

  @usableFromInline
  static func decode<Value>(_ stored: PersistentValue, as _: Value.Type) -> Value {
    if let native = Value.self as? any AttributeValue.Type {
      if let value = native.init(persistentValue: stored) as? Value { return value }
      fatalError("ObjectGraph: stored value \(stored) does not fit attribute type \(Value.self)")
    }
    if case .null = stored, let optional = Value.self as? any OptionalAttribute.Type,
      let value = optional.none as? Value
    {
      return value
    }
    if case .data(let data) = stored, let decodable = Value.self as? any Decodable.Type {
      do {
        if let value = try JSONDecoder().decode(decodable, from: data) as? Value { return value }
      } catch {
        fatalError("ObjectGraph: cannot decode \(Value.self) attribute value: \(error)")
      }
    }
    fatalError("ObjectGraph: stored value \(stored) does not fit attribute type \(Value.self)")
  }

  @usableFromInline
  static var encoder: JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return encoder
  }
}
