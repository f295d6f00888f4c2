import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Sort descriptors translated into keys read from the objects' slots: each object's keys are
/// read once, into contiguous arrays, and the sort compares those, with no key path read per
/// comparison.
///
/// A descriptor translates when its key path reads an attribute exactly (see
/// ``EntityModel/resolvedProperty(for:)``) of a type whose order is reproduced here (strings,
/// integers, `Double`, `Float`, `Date`, and their optionals) and it has no string comparator
/// (`SortDescriptor(\.title)` compares with `<` on this platform; a `.localizedStandard` one
/// does not translate). The order is `SortDescriptor`'s exactly: `<` of the values (ASCII
/// strings by their bytes, others as `String` compares them), forward or reversed and nil
/// first or last as the descriptor puts it, ties broken by the next descriptor and then by object
/// identifier, as ``ObjectContext/fetch(_:)`` always has.
struct TranslatedSort {
  private struct Column {
    let property: Int
    let kind: SortKeyKind
    /// The descriptor's own comparison, asked how it orders two values and where it puts nil.
    let compare: (ManagedObject, ManagedObject) -> ComparisonResult
  }

  private let columns: [Column]

  init?<T: ManagedObject>(_ descriptors: [SortDescriptor<T>], model: EntityModel) {
    var columns: [Column] = []
    for descriptor in descriptors {
      guard descriptor.stringComparator == nil, let keyPath = descriptor.keyPath,
        case .attribute(let property, let description)? = model.resolvedProperty(for: keyPath)
      else { return nil }
      let kind: SortKeyKind
      switch description.type {
      case .string: kind = .string
      case .int, .int8, .int16, .int32, .int64: kind = .signed
      case .uint, .uint8, .uint16, .uint32, .uint64: kind = .unsigned
      case .double, .float: kind = .double
      case .date: kind = .date
      case .bool, .data, .uuid, .url, .codable: return nil
      }
      columns.append(
        Column(property: property, kind: kind) {
          descriptor.compare(unsafeDowncast($0, to: T.self), unsafeDowncast($1, to: T.self))
        })
    }
    self.columns = columns
  }

  /// The objects from `offset` on, at most `limit` of them, in the descriptors' order; nil
  /// when a key has no order (a `Double.nan`), so the caller sorts as Foundation would.
  ///
  /// - Complexity: O(*n*) to read the keys, then O(*n* log *n*) for a whole sort, O(*n* +
  ///   *k* log *k*) (expected) for the *k* objects a limit selects.
  func sorted(_ objects: [ManagedObject], offset: Int, limit: Int?) -> [ManagedObject]? {
    let count = objects.count
    let start = min(offset, count)
    let end = limit.map { min(start + $0, count) } ?? count
    guard start < end else { return [] }
    var keys: [SortKeys] = []
    keys.reserveCapacity(columns.count)
    for column in columns {
      guard let columnKeys = SortKeys(column.property, column.kind, of: objects) else { return nil }
      keys.append(columnKeys)
    }
    // The direction and the place of nil are the descriptor's comparator's, asked of two
    // objects: on this platform a descriptor's `order`, set after it is made, does not always
    // say how it compares (an optional key keeps the order it was made with).
    var reversed: [Bool] = []
    var nilsFirst: [Bool] = []
    for (column, columnKeys) in zip(columns, keys) {
      guard let (isReversed, nilFirst) = columnKeys.direction(of: column.compare, on: objects)
      else { return nil }
      reversed.append(isReversed)
      nilsFirst.append(nilFirst)
    }
    let ids = objects.map { $0.storedObjectID?.rawValue ?? 0 }
    let less: (Int32, Int32) -> Bool = { left, right in
      let (left, right) = (Int(left), Int(right))
      for column in 0..<keys.count {
        switch keys[column].order(left, right) {
        case .less: return !reversed[column]
        case .greater: return reversed[column]
        case .nilFirst: return nilsFirst[column]
        case .nilLast: return !nilsFirst[column]
        case .same: continue
        }
      }
      return ids[left] < ids[right]
    }
    var order = (0..<Int32(count)).map { $0 }
    order.withUnsafeMutableBufferPointer { order in
      if end - start == count {
        order.sort(by: less)
        return
      }
      // Selection: the objects before `start` are left unsorted, those after `end` unread.
      Selection.select(end, in: order, by: less)
      if start > 0 {
        Selection.select(start, in: UnsafeMutableBufferPointer(rebasing: order[..<end]), by: less)
      }
      var page = UnsafeMutableBufferPointer(rebasing: order[start..<end])
      page.sort(by: less)
    }
    return order[start..<end].map { objects[Int($0)] }
  }
}

/// How two objects' keys compare.
private enum KeyOrder {
  case less, same, greater
  /// The first has no value, the second has one: nil comes first in either order.
  case nilFirst
  case nilLast
}

/// One column of sort keys, one per object.
private enum SortKeys {
  case strings([StringKey])
  case signed([Int64], nils: [Bool]?)
  case unsigned([UInt64], nils: [Bool]?)
  case doubles([Double], nils: [Bool]?)

  /// A stored string, as a sort compares it: ASCII bytes in place, anything else decoded.
  enum StringKey {
    case ascii(UnsafePointer<UInt8>, Int)
    case string(String)
    case none
  }

  /// The keys of `objects`, nil when one of them has no order (NaN).
  init?(_ property: Int, _ kind: SortKeyKind, of objects: [ManagedObject]) {
    var nils: [Bool]?
    func noteNil(_ index: Int) {
      if nils == nil { nils = Array(repeating: false, count: objects.count) }
      nils![index] = true
    }
    switch kind {
    case .string:
      self = .strings(
        objects.map { object in
          switch object.slots[property] {
          case .value(.string(let value)): return .string(value)
          case .deferred(.storedString(let stored)):
            let (start, count) = stored.bytes
            return isASCII(start, count) ? .ascii(start, count) : .string(stored.value)
          default: return .none
          }
        })
    case .signed, .unsigned:
      var values = [Int64](repeating: 0, count: objects.count)
      for (index, object) in objects.enumerated() {
        if case .value(.int(let value)) = object.slots[property] {
          values[index] = value
        } else {
          noteNil(index)
        }
      }
      self =
        kind == .signed
        ? .signed(values, nils: nils) : .unsigned(values.map(UInt64.init(bitPattern:)), nils: nils)
    case .double, .date:
      var values = [Double](repeating: 0, count: objects.count)
      for (index, object) in objects.enumerated() {
        switch object.slots[property] {
        case .value(.double(let value)): values[index] = value
        case .value(.date(let value)): values[index] = value.timeIntervalSinceReferenceDate
        default: noteNil(index)
        }
        if values[index].isNaN { return nil }
      }
      self = .doubles(values, nils: nils)
    }
  }

  /// Whether `compare` orders these keys' values descending, and whether it puts nil first,
  /// from the objects' first two different values and their first nil; nil when `compare`
  /// contradicts the keys' order (then it is not a plain `<`).
  func direction(
    of compare: (ManagedObject, ManagedObject) -> ComparisonResult, on objects: [ManagedObject]
  ) -> (isReversed: Bool, nilFirst: Bool)? {
    var isReversed = false
    var nilFirst = true
    var firstValue: Int?
    var firstNil: Int?
    var sawDifferentValues = false
    let hasNils = hasNils
    for index in objects.indices {
      if isNilKey(index) {
        if firstNil == nil {
          firstNil = index
          if let firstValue {
            guard let nilIsFirst = Self.isAscending(compare(objects[index], objects[firstValue]))
            else { return nil }
            nilFirst = nilIsFirst
          }
        }
      } else if let first = firstValue {
        if !sawDifferentValues, order(first, index) != .same {
          sawDifferentValues = true
          guard let ascending = Self.isAscending(compare(objects[first], objects[index])) else {
            return nil
          }
          isReversed = ascending != (order(first, index) == .less)
        }
      } else {
        firstValue = index
        if let firstNil {
          guard let nilIsFirst = Self.isAscending(compare(objects[firstNil], objects[index]))
          else { return nil }
          nilFirst = nilIsFirst
        }
      }
      if sawDifferentValues && (firstNil != nil || !hasNils) { break }
    }
    return (isReversed, nilFirst)
  }

  private static func isAscending(_ result: ComparisonResult) -> Bool? {
    switch result {
    case .orderedAscending: true
    case .orderedDescending: false
    case .orderedSame: nil
    }
  }

  private var hasNils: Bool {
    switch self {
    case .strings(let keys): keys.contains { if case .none = $0 { true } else { false } }
    case .signed(_, let nils), .unsigned(_, let nils), .doubles(_, let nils): nils != nil
    }
  }

  private func isNilKey(_ index: Int) -> Bool {
    switch self {
    case .strings(let keys): if case .none = keys[index] { true } else { false }
    case .signed(_, let nils), .unsigned(_, let nils), .doubles(_, let nils): nils?[index] ?? false
    }
  }

  @inline(__always)
  func order(_ left: Int, _ right: Int) -> KeyOrder {
    switch self {
    case .strings(let keys): return Self.order(keys[left], keys[right])
    case .signed(let values, let nils): return Self.order(values, nils, left, right)
    case .unsigned(let values, let nils): return Self.order(values, nils, left, right)
    case .doubles(let values, let nils): return Self.order(values, nils, left, right)
    }
  }

  @inline(__always)
  private static func order<Value: Comparable>(
    _ values: [Value], _ nils: [Bool]?, _ left: Int, _ right: Int
  ) -> KeyOrder {
    if let nils, nils[left] || nils[right] {
      return nils[left] == nils[right] ? .same : nils[left] ? .nilFirst : .nilLast
    }
    let (a, b) = (values[left], values[right])
    return a < b ? .less : b < a ? .greater : .same
  }

  private static func order(_ left: StringKey, _ right: StringKey) -> KeyOrder {
    switch (left, right) {
    case (.ascii(let a, let aCount), .ascii(let b, let bCount)):
      let order = memcmp(a, b, min(aCount, bCount))
      if order != 0 { return order < 0 ? .less : .greater }
      return aCount < bCount ? .less : aCount > bCount ? .greater : .same
    case (.none, .none): return .same
    case (.none, _): return .nilFirst
    case (_, .none): return .nilLast
    default:
      let (a, b) = (left.string, right.string)
      return a < b ? .less : b < a ? .greater : .same
    }
  }
}

/// The stored form of a column's keys.
private enum SortKeyKind { case string, signed, unsigned, double, date }

extension SortKeys.StringKey {
  fileprivate var string: String {
    switch self {
    case .ascii(let start, let count):
      String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    case .string(let string): string
    case .none: ""
    }
  }
}

/// Quickselect over a buffer of object numbers.
private enum Selection {
  /// Reorders `elements` so that the first `k` are the `k` least by `less`, in any order.
  ///
  /// - Complexity: O(*n*) expected.
  static func select(
    _ k: Int, in elements: UnsafeMutableBufferPointer<Int32>, by less: (Int32, Int32) -> Bool
  ) {
    var low = 0
    var high = elements.count
    guard k > 0, k < high else { return }
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    while high - low > 16 {
      // A pseudo-random pivot: no input order makes the selection quadratic in practice.
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let pivotIndex = low + Int((state >> 33) % UInt64(high - low))
      elements.swapAt(pivotIndex, high - 1)
      let pivot = elements[high - 1]
      var store = low
      for index in low..<(high - 1) where less(elements[index], pivot) {
        elements.swapAt(index, store)
        store += 1
      }
      elements.swapAt(store, high - 1)
      // Keys are distinct (ties go to the object identifier), so `store` is the pivot's rank.
      if store == k || store + 1 == k { return }
      if store > k { high = store } else { low = store + 1 }
    }
    var rest = UnsafeMutableBufferPointer(rebasing: elements[low..<high])
    rest.sort(by: less)
  }
}
