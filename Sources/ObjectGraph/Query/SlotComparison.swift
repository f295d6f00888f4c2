import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Comparisons of an attribute's slot with a constant, as Swift compares the attribute's
/// values: the stored form is read in place, without decoding the value, where that gives the
/// same answer.
enum SlotComparison {
  /// How a slot's value stands against `constant` (of the attribute's Swift type, or nil):
  /// ``Relation/absent`` for a nil value (a nil constant makes every other value
  /// ``Relation/unordered``). Nil when `constant` does not have the attribute's type.
  ///
  /// - Parameter ordered: Whether the caller needs the order, not only equality.
  static func make(for type: AttributeType, constant: Any?, ordered: Bool)
    -> ((UnsafeMutablePointer<Slot>) -> Relation)?
  {
    guard let constant else {
      return { slot in
        if case .value(.null) = slot.pointee { return .absent }
        return .unordered
      }
    }
    switch type {
    case .string:
      guard let string = constant as? String else { return nil }
      return self.string(string, ordered: ordered)
    case .int, .int8, .int16, .int32, .int64:
      guard let integer = constant as? any BinaryInteger else { return nil }
      let target = Int64(truncatingIfNeeded: integer)
      return { slot in
        guard case .value(.int(let value)) = slot.pointee else { return .absent }
        return relation(value, target)
      }
    case .uint, .uint8, .uint16, .uint32, .uint64:
      guard let integer = constant as? any BinaryInteger else { return nil }
      let target = UInt64(truncatingIfNeeded: integer)
      return { slot in
        guard case .value(.int(let value)) = slot.pointee else { return .absent }
        return relation(UInt64(bitPattern: value), target)
      }
    case .double, .float:
      // `Float`s are stored as the `Double`s they convert to exactly, which compare as they do.
      guard let target = (constant as? Double) ?? (constant as? Float).map(Double.init) else {
        return nil
      }
      return { slot in
        guard case .value(.double(let value)) = slot.pointee else { return .absent }
        return relation(value, target)
      }
    case .date:
      guard let target = constant as? Date else { return nil }
      return { slot in
        guard case .value(.date(let value)) = slot.pointee else { return .absent }
        return relation(value, target)
      }
    case .bool:
      guard let target = constant as? Bool else { return nil }
      return { slot in
        guard case .value(.bool(let value)) = slot.pointee else { return .absent }
        return value == target ? .equal : .unordered
      }
    case .uuid:
      guard let target = constant as? UUID else { return nil }
      return { slot in
        // A default not made yet is made now, as reading the property would.
        if case .deferred(let pending) = slot.pointee { slot.pointee = .value(pending.make()) }
        guard case .value(.uuid(let value)) = slot.pointee else { return .absent }
        return ordered ? relation(value, target) : value == target ? .equal : .unordered
      }
    case .url:
      guard let target = constant as? URL, !ordered else { return nil }
      return { slot in
        guard case .value(.url(let value)) = slot.pointee else { return .absent }
        return value == target ? .equal : .unordered
      }
    case .data:
      guard let target = constant as? Data, !ordered else { return nil }
      return { slot in
        guard case .value(.data(let value)) = slot.pointee else { return .absent }
        return value == target ? .equal : .unordered
      }
    case .codable:
      return nil
    }
  }

  /// Comparisons with a string. Swift compares strings by canonical equivalence, so stored
  /// bytes are compared as bytes only when both strings are ASCII (a non-ASCII string can
  /// equal an ASCII one: `"\u{212A}" == "K"`); otherwise the stored string is decoded.
  private static func string(_ target: String, ordered: Bool)
    -> (UnsafeMutablePointer<Slot>) -> Relation
  {
    let utf8 = UTF8Bytes(target)
    return { slot in
      switch slot.pointee {
      case .value(.string(let value)):
        return ordered ? relation(value, target) : value == target ? .equal : .unordered
      case .deferred(.storedString(let stored)):
        if utf8.isASCII {
          let bytes = stored.bytes
          // Equal bytes are equal strings; otherwise the bytes decide when they are ASCII.
          if bytes.count == utf8.count && memcmp(bytes.start, utf8.start, utf8.count) == 0 {
            return .equal
          }
          if isASCII(bytes.start, bytes.count) {
            if !ordered { return .unordered }
            let order = memcmp(bytes.start, utf8.start, min(bytes.count, utf8.count))
            if order != 0 { return order < 0 ? .less : .greater }
            return bytes.count < utf8.count ? .less : .greater
          }
        }
        let value = stored.value
        return ordered ? relation(value, target) : value == target ? .equal : .unordered
      default:
        return .absent
      }
    }
  }

  @inline(__always)
  static func relation<Value: Comparable>(_ value: Value, _ target: Value) -> Relation {
    if value < target { return .less }
    if target < value { return .greater }
    return value == target ? .equal : .unordered
  }
}

/// A string's UTF-8 bytes, kept for comparisons with stored ones.
final class UTF8Bytes {
  let start: UnsafeMutablePointer<UInt8>
  let count: Int
  let isASCII: Bool
  /// Whether the bytes hold a carriage return or a line feed: `"\r\n"` is one `Character`,
  /// so a byte search for such a string can match half of one.
  let hasLineBreak: Bool

  init(_ string: String) {
    var string = string
    let bytes = string.withUTF8 { Array($0) }
    count = bytes.count
    start = .allocate(capacity: max(count, 1))
    start.initialize(from: bytes, count: count)
    isASCII = bytes.allSatisfy { $0 < 0x80 }
    hasLineBreak = bytes.contains(0x0D) || bytes.contains(0x0A)
  }

  deinit { start.deallocate() }
}

extension StoredString {
  /// Where the stored bytes are (valid while the storage lives: see the type's notes).
  @inline(__always)
  var bytes: (start: UnsafePointer<UInt8>, count: Int) {
    let base = strings._withUnsafeGuaranteedRef { $0.bytes }
    return (UnsafePointer((base + Int(offset)).assumingMemoryBound(to: UInt8.self)), Int(count))
  }
}

extension UnsafeMutablePointer<Slot> {
  /// The stored string the slot defers, if it holds one, read without copying the slot.
  @inline(__always)
  var storedString: StoredString? {
    guard case .deferred(.storedString(let stored)) = pointee else { return nil }
    return stored
  }

  /// The identity of the object a to-one slot holds (nil for none, or for another kind of
  /// slot), read without retaining the object.
  @inline(__always)
  var relatedIdentity: ObjectIdentifier? {
    guard case .toOne(let object?) = pointee else { return nil }
    return ObjectIdentifier(object)
  }
}

/// Whether `count` bytes at `start` are all ASCII.
@inline(__always)
func isASCII(_ start: UnsafePointer<UInt8>, _ count: Int) -> Bool {
  var index = 0
  let raw = UnsafeRawPointer(start)
  while index + 8 <= count {
    if raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
      return false
    }
    index += 8
  }
  while index < count {
    if start[index] >= 0x80 { return false }
    index += 1
  }
  return true
}
