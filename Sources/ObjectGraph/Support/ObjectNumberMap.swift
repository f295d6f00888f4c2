/// A map from ``ObjectID`` to values, stored as an array indexed by object number.
///
/// A store hands out object numbers in increasing blocks, so the numbers of its live objects
/// are dense: an array costs one load per lookup and no hashing, where a `Dictionary` costs
/// a SipHash of the key. A number far beyond the live population (a forged file, or a store
/// whose objects were mostly deleted long ago) goes to a dictionary instead, so memory stays
/// within about twice the population plus a fixed margin.
struct ObjectNumberMap<Value> {
  private var dense: [Value?] = []
  private var sparse: [UInt64: Value] = [:]
  /// The number of keys with a value.
  private(set) var count = 0

  /// Numbers below this always fit the array, however few values it holds.
  private static var margin: Int { 65_536 }

  init() {}

  var isEmpty: Bool { count == 0 }

  /// Makes room for keys up to `maximum` in the array, if it may hold them once the map
  /// has `expectedCount` values: a map about to be filled with a store's objects grows
  /// once, not a doubling at a time.
  mutating func reserve(upTo maximum: UInt64, expectedCount: Int = 0) {
    guard maximum < UInt64(Int.max / 4),
      Int(maximum) < 2 * Swift.max(count, expectedCount) + Self.margin + 1
    else {
      return
    }
    grow(toInclude: Int(maximum))
  }

  /// The value of `id`, if any.
  ///
  /// - Complexity: O(1); no hashing when `id` is in the array.
  subscript(id: ObjectID) -> Value? {
    get {
      let number = id.rawValue
      if number < UInt64(dense.count) { return dense[Int(number)] }
      return sparse.isEmpty ? nil : sparse[number]
    }
    set { _ = updateValue(newValue, for: id) }
  }

  /// Sets or removes the value of `id` and returns the value it replaced.
  @discardableResult
  mutating func updateValue(_ value: Value?, for id: ObjectID) -> Value? {
    let number = id.rawValue
    if number >= UInt64(dense.count), value != nil,
      number < UInt64(2 * (count + 1) + Self.margin)
    {
      grow(toInclude: Int(number))
    }
    let old: Value?
    if number < UInt64(dense.count) {
      old = dense[Int(number)]
      dense[Int(number)] = value
    } else if let value {
      old = sparse.updateValue(value, forKey: number)
    } else {
      old = sparse.removeValue(forKey: number)
    }
    count += (value == nil ? 0 : 1) - (old == nil ? 0 : 1)
    return old
  }

  /// Lends `body` the value of `id` (`nil` if none) to change in place: a value held by
  /// the map alone is not copied, as reading it out and setting it back would copy it.
  ///
  /// - Complexity: O(1) besides `body`; no hashing when `id` is in the array.
  mutating func modifyValue<Result>(
    for id: ObjectID, _ body: (inout Value?) throws -> Result
  ) rethrows -> Result {
    let number = id.rawValue
    if number >= UInt64(dense.count), number < UInt64(2 * (count + 1) + Self.margin) {
      grow(toInclude: Int(number))
    }
    if number < UInt64(dense.count) {
      let hadValue = dense[Int(number)] != nil
      defer { count += (dense[Int(number)] == nil ? 0 : 1) - (hadValue ? 1 : 0) }
      return try body(&dense[Int(number)])
    }
    var value = sparse.removeValue(forKey: number)
    let hadValue = value != nil
    defer {
      if let value { sparse[number] = value }
      count += (value == nil ? 0 : 1) - (hadValue ? 1 : 0)
    }
    return try body(&value)
  }

  /// Adds `value` for `id`, which has none; returns `false`, changing nothing, if it has one.
  ///
  /// ``updateValue(_:for:)`` without the optional value and old value to copy and compare:
  /// loading a store adds every object this way.
  mutating func insert(_ value: consuming Value, for id: ObjectID) -> Bool {
    let number = id.rawValue
    if number >= UInt64(dense.count), number < UInt64(2 * (count + 1) + Self.margin) {
      grow(toInclude: Int(number))
    }
    if number < UInt64(dense.count) {
      guard case .none = dense[Int(number)] else { return false }
      dense[Int(number)] = value
    } else {
      guard sparse.index(forKey: number) == nil else { return false }
      sparse[number] = value
    }
    count += 1
    return true
  }

  /// Lends `body` the memory of the array part (the values of the numbers below its count,
  /// `nil` where there is none) to add values in place, with one uniqueness check for all:
  /// a context loading a store's objects adds them this way. `body` may only fill places
  /// that hold `nil`, and counts each one it fills in its second argument (kept even if it
  /// throws).
  mutating func fillArrayPart(
    _ body: (UnsafeMutableBufferPointer<Value?>, inout Int) throws -> Void
  ) rethrows {
    var filled = 0
    defer { count += filled }
    try dense.withUnsafeMutableBufferPointer { try body($0, &filled) }
  }

  /// Every value, in object-number order for those in the array.
  var values: [Value] {
    var result: [Value] = []
    result.reserveCapacity(count)
    for value in dense { if let value { result.append(value) } }
    result.append(contentsOf: sparse.values)
    return result
  }

  /// Calls `body` with every value, without collecting them first.
  /// Empties the map, calling `body` with each value in number order just before letting go
  /// of it: when the map holds the last reference, each value is freed right after `body`,
  /// while it is still in the cache.
  mutating func removeAll(_ body: (Value) -> Void) {
    for number in dense.indices {
      if let value = dense[number].take() { body(value) }
    }
    let sparseValues = sparse.values
    sparse = [:]
    for value in sparseValues { body(value) }
    dense = []
    count = 0
  }

  /// Calls `body` with every value in place, in number order (so that it can ask whether
  /// the map holds the only reference to it).
  mutating func forEachInPlace(_ body: (inout Value) -> Void) {
    for number in dense.indices where dense[number] != nil { body(&dense[number]!) }
    for number in sparse.keys.sorted() { body(&sparse[number]!) }
  }

  func forEachValue(_ body: (Value) throws -> Void) rethrows {
    for case let value? in dense { try body(value) }
    for value in sparse.values { try body(value) }
  }

  /// Every key with its value.
  var pairs: [(ObjectID, Value)] {
    var result: [(ObjectID, Value)] = []
    result.reserveCapacity(count)
    for (number, value) in dense.enumerated() {
      if let value { result.append((ObjectID(rawValue: UInt64(number)), value)) }
    }
    for (number, value) in sparse { result.append((ObjectID(rawValue: number), value)) }
    return result
  }

  /// Grows the array to hold `number`, moving any values the dictionary held below it.
  private mutating func grow(toInclude number: Int) {
    let newCount = max(number + 1, min(dense.count * 2, number + Self.margin))
    if dense.isEmpty {
      // Made in place (a map sized for a load): appending a repeated `nil` copied it into
      // each element through a call per element.
      dense = [Value?](unsafeUninitializedCapacity: newCount) { buffer, count in
        for index in 0..<newCount { (buffer.baseAddress! + index).initialize(to: nil) }
        count = newCount
      }
    } else {
      dense.append(contentsOf: repeatElement(nil, count: newCount - dense.count))
    }
    guard !sparse.isEmpty else { return }
    for (key, value) in sparse where key < UInt64(newCount) {
      dense[Int(key)] = value
      sparse[key] = nil
    }
  }
}

extension ObjectNumberMap: Sendable where Value: Sendable {}

extension ObjectNumberMap where Value == Int32 {
  /// Adds `delta` to the count of `id`, where no value counts as zero and a count that comes
  /// to zero is removed.
  @inline(__always)
  mutating func add(_ delta: Int32, to id: ObjectID) {
    let number = id.rawValue
    guard number < UInt64(dense.count) else {
      let new = (self[id] ?? 0) &+ delta
      _ = updateValue(new == 0 ? nil : new, for: id)
      return
    }
    let old = dense[Int(number)]
    let new = (old ?? 0) &+ delta
    dense[Int(number)] = new == 0 ? nil : new
    count += (new == 0 ? 0 : 1) - (old == nil ? 0 : 1)
  }

  /// Lends `body` a ``Counter`` of this map's counts, to count many ids with one uniqueness
  /// check for all: the counts of a store's references are made this way.
  mutating func counting(_ body: (inout Counter) -> Void) {
    let (added, outside) = dense.withUnsafeMutableBufferPointer { dense in
      var counter = Counter(dense: dense)
      body(&counter)
      return (counter.added, counter.outside)
    }
    count += added
    for (id, delta) in outside { add(delta, to: id) }
  }

  /// Adds to counts in place (see ``counting(_:)``); ids beyond the array are set aside and
  /// counted after.
  struct Counter {
    fileprivate let dense: UnsafeMutableBufferPointer<Int32?>
    fileprivate var added = 0
    fileprivate var outside: [(ObjectID, Int32)] = []

    /// Adds `delta` to the count of `id`.
    @inline(__always)
    mutating func add(_ delta: Int32, to id: ObjectID) {
      guard id.rawValue < UInt64(dense.count) else {
        outside.append((id, delta))
        return
      }
      let place = dense.baseAddress! + Int(id.rawValue)
      let old = place.pointee
      let new = (old ?? 0) &+ delta
      place.pointee = new == 0 ? nil : new
      added += (new == 0 ? 0 : 1) - (old == nil ? 0 : 1)
    }
  }
}

extension ObjectNumberMap where Value: AnyObject {
  /// The values in number order, unretained: valid while the map holds them. Reading every
  /// object of a context this way retains and releases none (``pairs``, sorted, did each
  /// twice).
  ///
  /// - Complexity: O(*n*), plus O(*s* log *s*) for the *s* values held beyond the array.
  func unretainedValuesInNumberOrder() -> [Unmanaged<Value>] {
    var result: [Unmanaged<Value>] = []
    result.reserveCapacity(count)
    dense.withUnsafeBufferPointer { dense in
      for case let value? in dense { result.append(.passUnretained(value)) }
    }
    for number in sparse.keys.sorted() { result.append(.passUnretained(sparse[number]!)) }
    return result
  }
}
