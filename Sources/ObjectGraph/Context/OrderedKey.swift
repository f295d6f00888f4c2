import Foundation

/// An attribute value as an ``OrderedIndex`` orders it: exactly as `SortDescriptor` and
/// ``TranslatedSort`` order the attribute's Swift values, nil first.
///
/// Integers of every width compare as their stored `Int64`, unsigned ones as the `UInt64`
/// of its bit pattern; `Float`s as the `Double`s they convert to exactly; dates as their
/// `timeIntervalSinceReferenceDate` (which is how `Date` compares); strings with `String`'s
/// `<` (canonical equivalence: `"\u{212A}"` and `"K"` are one key); UUIDs with `UUID`'s `<`.
/// A NaN has no key: `<` is no order on it.
enum OrderedKey: Comparable {
  case null
  case signed(Int64)
  case unsigned(UInt64)
  case double(Double)
  case string(String)
  case uuid(UUID)

  /// Whether an attribute of `type` has keys.
  static func orders(_ type: AttributeType) -> Bool {
    switch type {
    case .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64,
      .double, .float, .date, .string, .uuid:
      true
    case .bool, .data, .url, .codable:
      false
    }
  }

  /// The key of a stored value of an attribute of `type`; nil for a NaN (or a value of
  /// another type).
  init?(stored value: PersistentValue, of type: AttributeType) {
    switch (value, type) {
    case (.null, _): self = .null
    case (.int(let value), .int), (.int(let value), .int8), (.int(let value), .int16),
      (.int(let value), .int32), (.int(let value), .int64):
      self = .signed(value)
    case (.int(let value), _): self = .unsigned(UInt64(bitPattern: value))
    case (.double(let value), _):
      guard !value.isNaN else { return nil }
      self = .double(value)
    case (.date(let value), _):
      guard !value.timeIntervalSinceReferenceDate.isNaN else { return nil }
      self = .double(value.timeIntervalSinceReferenceDate)
    case (.string(let value), _): self = .string(value)
    case (.uuid(let value), _): self = .uuid(value)
    default: return nil
    }
  }

  /// The key of a value a predicate compares an attribute of `type` with (of the
  /// attribute's Swift type, every level of `Optional` removed), converted as
  /// ``SlotComparison`` converts it; nil for nil, a NaN, or a value of another type.
  init?(compared constant: Any?, with type: AttributeType) {
    guard let constant else { return nil }
    switch type {
    case .int, .int8, .int16, .int32, .int64:
      guard let integer = constant as? any BinaryInteger else { return nil }
      self = .signed(Int64(truncatingIfNeeded: integer))
    case .uint, .uint8, .uint16, .uint32, .uint64:
      guard let integer = constant as? any BinaryInteger else { return nil }
      self = .unsigned(UInt64(truncatingIfNeeded: integer))
    case .double, .float:
      guard let value = (constant as? Double) ?? (constant as? Float).map(Double.init),
        !value.isNaN
      else { return nil }
      self = .double(value)
    case .date:
      guard let date = constant as? Date, !date.timeIntervalSinceReferenceDate.isNaN else {
        return nil
      }
      self = .double(date.timeIntervalSinceReferenceDate)
    case .string:
      guard let string = constant as? String else { return nil }
      self = .string(string)
    case .uuid:
      guard let uuid = constant as? UUID else { return nil }
      self = .uuid(uuid)
    case .bool, .data, .url, .codable:
      return nil
    }
  }

  static func < (lhs: OrderedKey, rhs: OrderedKey) -> Bool {
    switch (lhs, rhs) {
    case (.signed(let a), .signed(let b)): a < b
    case (.unsigned(let a), .unsigned(let b)): a < b
    case (.double(let a), .double(let b)): a < b
    case (.string(let a), .string(let b)): a < b
    case (.uuid(let a), .uuid(let b)): a < b
    // nil first; keys of different kinds (never in one index) by kind.
    default: lhs.kindOrder < rhs.kindOrder
    }
  }

  private var kindOrder: Int {
    switch self {
    case .null: 0
    case .signed: 1
    case .unsigned: 2
    case .double: 3
    case .string: 4
    case .uuid: 5
    }
  }
}
