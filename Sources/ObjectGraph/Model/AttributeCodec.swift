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

  /// The stored form of a value. Inlined into the model's module, where `Value` is known, so
  /// the common types convert without dynamic casts.
  @inlinable
  static func encode<Value>(_ value: Value) -> PersistentValue {
    if Value.self == String.self { return .string(value as! String) }
    if Value.self == Int.self { return .int(Int64(value as! Int)) }
    if Value.self == Double.self { return .double(value as! Double) }
    if Value.self == Bool.self { return .bool(value as! Bool) }
    if Value.self == Date.self { return .date(value as! Date) }
    if Value.self == UUID.self { return .uuid(value as! UUID) }
    return encodeDynamically(value)
  }

  @usableFromInline
  static func encodeDynamically<Value>(_ value: Value) -> PersistentValue {
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

  /// A value from its stored form; inlined like ``encode(_:)``.
  @inlinable
  static func decode<Value>(_ slot: Slot, as type: Value.Type) -> Value {
    switch slot {
    case .value(.string(let value)) where Value.self == String.self: return value as! Value
    case .value(.int(let value)) where Value.self == Int.self: return Int(value) as! Value
    case .value(.double(let value)) where Value.self == Double.self: return value as! Value
    case .value(.bool(let value)) where Value.self == Bool.self: return value as! Value
    case .value(.date(let value)) where Value.self == Date.self: return value as! Value
    case .value(.uuid(let value)) where Value.self == UUID.self: return value as! Value
    default: return decodeDynamically(slot.value, as: type)
    }
  }

  @usableFromInline
  static func decodeDynamically<Value>(_ stored: PersistentValue, as _: Value.Type) -> Value {
    if let native = Value.self as? any AttributeValue.Type {
      if let value = native.init(persistentValue: stored) as? Value { return value }
      if case .null = stored { notSetYet(Value.self) }
      fatalError("ObjectGraph: stored value \(stored) does not fit attribute type \(Value.self)")
    }
    if case .null = stored {
      guard let optional = Value.self as? any OptionalAttribute.Type,
        let value = optional.none as? Value
      else { notSetYet(Value.self) }
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

  /// A value of `Value` for the slot of a prototype (the instance that describes a class)
  /// whose attribute is declared without a default: reading it while key paths are resolved
  /// must return some value. `nil` for an optional; the type's zero for the built-in types;
  /// the first case of a `CaseIterable` or a value decoded from an empty JSON object, array,
  /// string or number for a `Codable` one. Nil when none fits, which the container reports.
  static func placeholder<Value>(for _: Value.Type, codec: AttributeCodec) -> PersistentValue? {
    if codec.isOptional { return .null }
    if codec.type != .codable {
      let zero = codec.type.zero
      guard let native = Value.self as? any AttributeValue.Type,
        native.init(persistentValue: zero) != nil
      else { return nil }
      return zero
    }
    if let cases = Value.self as? any CaseIterable.Type,
      let first = firstElement(of: cases.allCases) as? Value
    {
      return encode(first)
    }
    guard let decodable = Value.self as? any Decodable.Type else { return nil }
    for json in ["{}", "[]", "\"\"", "0", "false"] {
      if let value = try? JSONDecoder().decode(decodable, from: Data(json.utf8)) as? Value {
        return encode(value)
      }
    }
    return nil
  }

  /// The first element of a collection, opened from its existential.
  private static func firstElement<Elements: Collection>(of elements: Elements) -> Any? {
    elements.first.map { $0 as Any }
  }

  /// Stops the program: a non-optional attribute declared without a default was read before
  /// the app set it (only a new object can be in that state).
  private static func notSetYet(_ type: Any.Type) -> Never {
    fatalError(
      "ObjectGraph: an attribute of type \(type) was read before it was set: a non-optional "
        + "attribute declared without a default value must be set first")
  }

  /// A check of stored bytes against a `Codable` type: why they do not decode as `Value`, or
  /// nil when they do.
  @usableFromInline
  static func decodingProblem<Value>(as _: Value.Type) -> (Data) -> String? {
    { data in
      guard let decodable = Value.self as? any Decodable.Type else {
        return "\(Value.self) is not Decodable"
      }
      do {
        _ = try JSONDecoder().decode(decodable, from: data)
        return nil
      } catch {
        return "\(Value.self): \(error)"
      }
    }
  }

  /// The name and shape of a `Codable` type, as the schema records it.
  @usableFromInline
  static func shape<Value>(of _: Value.Type) -> String? {
    (Value.self as? any Decodable.Type).map(CodableShape.of)
  }

  @usableFromInline
  static var encoder: JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return encoder
  }
}

extension AttributeType {
  /// The stored form of the type's zero (`""`, `0`, `false`, the reference date, the
  /// all-zero UUID, empty data, `about:blank`).
  var zero: PersistentValue {
    switch self {
    case .bool: .bool(false)
    case .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64: .int(0)
    case .double, .float: .double(0)
    case .string: .string("")
    case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
    case .data: .data(Data())
    case .uuid: .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
    case .url: .url(URL(string: "about:blank")!)
    case .codable: .null
    }
  }
}
