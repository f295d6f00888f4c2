import Foundation

/// The shape of a `Codable` attribute's type, as the schema records it: the type's name and
/// the keys and value types its `init(from:)` asks for, e.g.
/// `Settings {labels: [String], volume: Int, theme?: Theme {name: String}}`.
///
/// The shape is found by decoding the type once from a decoder that answers every request
/// with a placeholder and notes what was asked (keys sorted, optional ones marked `?`, an
/// array by the shape of one element). A changed type then reads as a changed schema when a
/// store is opened, instead of as bytes that no longer decode. What cannot be found that way
/// (an enum with associated values, a type whose `init(from:)` rejects placeholders, a
/// dictionary's values, a type nested deeper than eight levels) is recorded by name alone.
enum CodableShape {
  /// The shape of `type`.
  ///
  /// - Complexity: O(*k*) in the properties `type`'s decoding asks for; done once per model
  ///   class.
  static func of(_ type: any Decodable.Type) -> String {
    let name = displayName(type)
    let recorder = ShapeDecoder(depth: 0)
    do {
      _ = try type.init(from: recorder)
    } catch {
      return name
    }
    // An optional's shape is its wrapped type's (the attribute records that it is optional).
    if case .single(let wrapped) = recorder.shape.form, name.hasPrefix("Optional<") {
      return wrapped
    }
    let shape = recorder.shape.description
    return shape.isEmpty ? name : "\(name) \(shape)"
  }

  /// The type's name without its module.
  static func displayName(_ type: Any.Type) -> String {
    String(describing: type)
  }

  /// What a decoding asked for.
  fileprivate final class Recorded {
    enum Form {
      case none
      case keyed([String: String])
      case unkeyed(String)
      case single(String)
    }
    var form = Form.none

    var description: String {
      switch form {
      case .none: return ""
      case .keyed(let fields):
        let listed = fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return "{\(listed.joined(separator: ", "))}"
      case .unkeyed(let element): return "[\(element)]"
      case .single(let value): return "= \(value)"
      }
    }
  }

  /// The most nested levels explored.
  fileprivate static let maximumDepth = 8

  /// The shape of a value of `type` met at `depth`, and a placeholder of it.
  fileprivate static func shape<T: Decodable>(of type: T.Type, depth: Int) throws -> (
    String, T
  ) {
    if let placeholder = primitivePlaceholder(type) { return (displayName(type), placeholder) }
    guard depth < maximumDepth else {
      throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "too deep"))
    }
    let decoder = ShapeDecoder(depth: depth + 1)
    let value = try T(from: decoder)
    let inner = decoder.shape.description
    let name = displayName(type)
    if case .unkeyed = decoder.shape.form, name.hasPrefix("Array<") { return (inner, value) }
    return (inner.isEmpty ? name : "\(name) \(inner)", value)
  }

  /// A placeholder of a type the shape names as it is (numbers, strings, Foundation's
  /// values), or nil for a type to explore.
  fileprivate static func primitivePlaceholder<T>(_ type: T.Type) -> T? {
    let placeholders: [Any] = [
      false, "", 0, 0.0, Float(0), Int8(0), Int16(0), Int32(0), Int64(0), UInt(0), UInt8(0),
      UInt16(0), UInt32(0), UInt64(0), Date(timeIntervalSinceReferenceDate: 0), Data(),
      UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
      URL(fileURLWithPath: "/"), Decimal(0),
    ]
    return placeholders.lazy.compactMap { $0 as? T }.first
  }
}

/// A decoder that records what is asked of it and answers with placeholders.
private final class ShapeDecoder: Decoder {
  let depth: Int
  let shape = CodableShape.Recorded()
  var codingPath: [any CodingKey] = []
  var userInfo: [CodingUserInfoKey: Any] = [:]

  init(depth: Int) { self.depth = depth }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    shape.form = .keyed([:])
    return KeyedDecodingContainer(KeyedShape<Key>(decoder: self))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    shape.form = .unkeyed("")
    return UnkeyedShape(decoder: self)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    SingleShape(decoder: self)
  }

  func note(_ key: String, _ shape: String) {
    if case .keyed(var fields) = self.shape.form {
      fields[key] = shape
      self.shape.form = .keyed(fields)
    }
  }
}

private struct KeyedShape<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: ShapeDecoder
  var codingPath: [any CodingKey] { [] }
  var allKeys: [Key] { [] }

  func contains(_ key: Key) -> Bool { true }
  func decodeNil(forKey key: Key) throws -> Bool { false }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    let (shape, value) = try CodableShape.shape(of: type, depth: decoder.depth)
    decoder.note(key.stringValue, shape)
    return value
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    try optional(type, key)
  }

  // The protocol's own overloads for these types do not call the generic one.
  func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
  func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
    try optional(type, key)
  }
  func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
    try optional(type, key)
  }

  private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
    let (shape, value) = try CodableShape.shape(of: type, depth: decoder.depth)
    decoder.note(key.stringValue + "?", shape)
    return value
  }

  func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key)
    throws -> KeyedDecodingContainer<NestedKey>
  {
    let nested = ShapeDecoder(depth: decoder.depth + 1)
    defer { decoder.note(key.stringValue, nested.shape.description) }
    return try nested.container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    let nested = ShapeDecoder(depth: decoder.depth + 1)
    decoder.note(key.stringValue, "[…]")
    return try nested.unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder { ShapeDecoder(depth: decoder.depth + 1) }
  func superDecoder(forKey key: Key) throws -> any Decoder {
    ShapeDecoder(depth: decoder.depth + 1)
  }
}

/// Answers one element, so an array records the shape of its elements.
private struct UnkeyedShape: UnkeyedDecodingContainer {
  let decoder: ShapeDecoder
  var codingPath: [any CodingKey] { [] }
  var count: Int? { 1 }
  var currentIndex = 0
  var isAtEnd: Bool { currentIndex >= 1 }

  mutating func decodeNil() throws -> Bool { false }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let (shape, value) = try CodableShape.shape(of: type, depth: decoder.depth)
    decoder.shape.form = .unkeyed(shape)
    currentIndex += 1
    return value
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    currentIndex += 1
    return try ShapeDecoder(depth: decoder.depth + 1).container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    currentIndex += 1
    return try ShapeDecoder(depth: decoder.depth + 1).unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder { ShapeDecoder(depth: decoder.depth + 1) }
}

private struct SingleShape: SingleValueDecodingContainer {
  let decoder: ShapeDecoder
  var codingPath: [any CodingKey] { [] }

  func decodeNil() -> Bool { false }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let (shape, value) = try CodableShape.shape(of: type, depth: decoder.depth)
    decoder.shape.form = .single(shape)
    return value
  }
}
