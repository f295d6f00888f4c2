/// Stored objects with all their values in one buffer, in order: what a store hands over
/// in ``StoreContents/packed`` and a context saves in ``Changeset/insertedPacked``.
///
/// A snapshot per object (``ObjectSnapshot``) costs an array of its own (an allocation to
/// make, a generic destruction to free), more than decoding the object's values; here
/// every object's values are one run of a single buffer, so a store built on a database or
/// a file hands over 100,000 objects with a handful of allocations, and a context loading
/// them takes the buffer's memory as the objects' slots.
///
/// ```swift
/// var objects = PackedObjects()
/// objects.reserveCapacity(objects: rows.count, values: rows.count * 3)
/// for row in rows {
///   objects.beginObject(id: ObjectID(rawValue: row.id), entity: 0)
///   objects.appendValue(.string(row.title))
///   objects.appendValue(.date(row.created))
///   objects.appendValue(row.parent.map { .reference(ObjectID(rawValue: $0)) } ?? .null)
/// }
/// return StoreContents(packed: objects, nextObjectNumber: next)
/// ```
///
/// Inside the framework, object *k* is `ids[k]` of entity `entities[k]`, and its values are
/// `values[starts[k] ..< starts[k + 1]]` (the last one's run to the end). An object can be
/// removed in place: its entity becomes `-1` and its values `.null`, so positions stay put
/// and order is kept; every reader skips removed objects. The binary store's decoder may
/// leave string values as bytes (``deferredStrings``); then their values are `.null`
/// placeholders, which every public read decodes.
public struct PackedObjects: Sendable {
  /// The entity of a removed object.
  static let removed: Int32 = -1

  private(set) var ids: [ObjectID] = []
  private(set) var entities: [Int32] = []
  private(set) var starts: [Int] = []
  /// Every object's values, one run per object.
  private(set) var values = PackedValues()
  /// The number of objects not removed.
  private(set) var liveCount = 0
  /// String values left as bytes, whose values are `.null` placeholders.
  private(set) var deferredStrings = DeferredStrings()

  /// Creates an empty list of objects.
  public init() {}

  /// The number of objects.
  ///
  /// - Complexity: O(1).
  public var count: Int { liveCount }

  /// Whether there are no objects.
  public var isEmpty: Bool { liveCount == 0 }

  /// Calls `body` with each object's id, entity and values, in order, copying no value:
  /// the values are the buffer's own, valid only during the call.
  ///
  /// ```swift
  /// objects.forEach { id, entity, values in
  ///   try statement.insert(id.rawValue, entity, values[0], values[1])
  /// }
  /// ```
  ///
  /// - Complexity: O(*n*) in the number of values; strings the binary store left as
  ///   bytes are decoded as they are met (into a scratch copy of their object's values).
  public func forEach(
    _ body: (ObjectID, Int, UnsafeBufferPointer<PersistentValue>) throws -> Void
  ) rethrows {
    guard !deferredStrings.isEmpty else {
      return try forEach(in: 0..<positionCount, readsStrings: false, body)
    }
    // Strings left as bytes: each object's values are copied and its strings decoded.
    var strings = deferredStrings.makeCursor()
    var scratch: [PersistentValue] = []
    for position in ids.indices where isLive(position) {
      let range = valueRange(position)
      scratch.removeAll(keepingCapacity: true)
      for index in range {
        // An entry stands for its value only while that is the placeholder.
        if case .null = values[index], let string = strings.string(at: index) {
          scratch.append(.string(string.value))
        } else {
          scratch.append(values[index])
        }
      }
      try scratch.withUnsafeBufferPointer { try body(ids[position], Int(entities[position]), $0) }
    }
  }

  /// Calls `body` with the id, entity and values of each object at `positions` (removed
  /// ones passed over), in order, the values the buffer's own. Deferred strings show as
  /// `.null`, so only a caller that reads no string attribute may pass `readsStrings:
  /// false`; otherwise the objects must have none.
  func forEach(
    in positions: Range<Int>, readsStrings: Bool,
    _ body: (ObjectID, Int, UnsafeBufferPointer<PersistentValue>) throws -> Void
  ) rethrows {
    precondition(
      !readsStrings || deferredStrings.isEmpty, "deferred strings would read as nil")
    try values.withUnsafeBufferPointer { values in
      for position in positions where isLive(position) {
        try body(
          ids[position], Int(entities[position]),
          UnsafeBufferPointer(rebasing: values[valueRange(position)]))
      }
    }
  }

  /// Packs objects that `fill` writes, at most `objectCapacity` objects of at most
  /// `valueCapacity` values in all, straight into the storage of the arrays: a decoder
  /// adding 600,000 values one `append` at a time paid a uniqueness and a capacity check
  /// for each.
  ///
  /// With `deferredStringBytes`, the filler may leave strings as bytes
  /// (``Filler/appendDeferredString(sharing:of:then:)``), guessing they take about that many.
  ///
  /// - Throws: What `fill` throws; the objects written until then are freed.
  static func filling<Failure: Error>(
    objectCapacity: Int, valueCapacity: Int, deferredStringBytes: Int? = nil,
    _ fill: (inout Filler) throws(Failure) -> Void
  ) throws(Failure) -> PackedObjects {
    var failure: Failure?
    var deferredStrings: DeferredStrings?
    var objects = allocating(objectCapacity: objectCapacity, valueCapacity: valueCapacity) {
      storage in
      var filler = Filler(
        storage, objectCapacity: objectCapacity, valueCapacity: valueCapacity,
        strings: deferredStringBytes.map {
          // Room for an entry per value, as any value may be a string: an entry per object
          // was short for two strings an object, whose entries were then copied as they
          // grew (memory reserved and never touched costs nothing).
          DeferredStrings.Builder(reservingBytes: $0, strings: valueCapacity)
        })
      do throws(Failure) {
        try fill(&filler)
      } catch {
        failure = error
      }
      deferredStrings = filler.strings?.finish()
      return (filler.objectCount, filler.valueCount)
    }
    if let failure { throw failure }
    objects.liveCount = objects.positionCount
    objects.deferredStrings = deferredStrings ?? DeferredStrings()
    return objects
  }

  /// The room for one part of objects packed in parts (see ``filling(parts:_:)``).
  struct PartCapacity {
    var objects: Int
    var values: Int
    /// A guess of the bytes of the part's deferred strings, or `nil` to decode them.
    var deferredStringBytes: Int?
  }

  /// Packs objects written in independent parts, each by a call of `fill` with its own
  /// filler, on as many threads as there are cores (a snapshot's parts decode on their own).
  ///
  /// Part *k*'s objects follow part *k − 1*'s, each part in its own room; what a part leaves
  /// of its room before the next becomes one removed position (entity `-1`, values `.null`),
  /// which every reader skips, so the positions and values stay one run per object.
  ///
  /// - Throws: The first failure in part order; the objects written until then are freed.
  static func filling<Failure: Error>(
    parts: [PartCapacity], _ fill: (Int, inout Filler) throws(Failure) -> Void
  ) throws(Failure) -> PackedObjects {
    guard parts.count > 1 else {
      let part = parts.first ?? PartCapacity(objects: 0, values: 0)
      return try filling(
        objectCapacity: part.objects, valueCapacity: part.values,
        deferredStringBytes: part.deferredStringBytes
      ) { (filler: inout Filler) throws(Failure) in try fill(0, &filler) }
    }
    // Each part but the last has one more position, for the removed object its leftover
    // room may need.
    var objectOrigins: [Int] = []
    var valueOrigins: [Int] = []
    var objectTotal = 0
    var valueTotal = 0
    for (number, part) in parts.enumerated() {
      objectOrigins.append(objectTotal)
      valueOrigins.append(valueTotal)
      objectTotal += part.objects + (number < parts.count - 1 ? 1 : 0)
      valueTotal += part.values
    }
    var results = [PartResult<Failure>?](repeating: nil, count: parts.count)
    var objects = allocating(objectCapacity: objectTotal, valueCapacity: valueTotal) { storage in
      results.withUnsafeMutableBufferPointer { results in
        Parallel.forEach(parts.count) { number in
          let part = parts[number]
          var filler = Filler(
            storage.offset(objects: objectOrigins[number], values: valueOrigins[number]),
            objectCapacity: part.objects, valueCapacity: part.values,
            strings: part.deferredStringBytes.map {
              DeferredStrings.Builder(reservingBytes: $0, strings: part.values)
            })
          var failure: Failure?
          do throws(Failure) {
            try fill(number, &filler)
          } catch {
            failure = error
          }
          results[number] = PartResult(
            objectCount: filler.objectCount, valueCount: filler.valueCount,
            strings: filler.strings?.finish(), failure: failure)
        }
      }
      let written = results.map { $0! }
      if written.contains(where: { $0.failure != nil }) {
        for (number, part) in written.enumerated() {
          (storage.values + valueOrigins[number]).deinitialize(count: part.valueCount)
        }
        return (0, 0)
      }
      // Close each part's leftover room with a removed object; the last part's is cut.
      for number in 0..<parts.count - 1 {
        let position = objectOrigins[number] + written[number].objectCount
        let firstFree = valueOrigins[number] + written[number].valueCount
        for filler in position..<objectOrigins[number + 1] {
          (storage.ids + filler).initialize(to: ObjectID(rawValue: 0))
          (storage.entities + filler).initialize(to: Self.removed)
          (storage.starts + filler).initialize(
            to: filler == position ? firstFree : valueOrigins[number + 1])
        }
        (storage.values + firstFree).initialize(
          repeating: .null, count: valueOrigins[number + 1] - firstFree)
      }
      let last = parts.count - 1
      return (
        objectOrigins[last] + written[last].objectCount,
        valueOrigins[last] + written[last].valueCount
      )
    }
    let written = results.map { $0! }
    if let failure = written.lazy.compactMap(\.failure).first { throw failure }
    objects.liveCount = written.reduce(0) { $0 + $1.objectCount }
    objects.deferredStrings = DeferredStrings(joining: written.compactMap(\.strings))
    return objects
  }

  /// The buffers of packed objects being filled: ids, entities and starts by position,
  /// values by value position.
  struct Storage {
    fileprivate let ids: UnsafeMutablePointer<ObjectID>
    fileprivate let entities: UnsafeMutablePointer<Int32>
    fileprivate let starts: UnsafeMutablePointer<Int>
    fileprivate let values: UnsafeMutablePointer<PersistentValue>
    /// The position of `values[0]` in the whole values buffer.
    fileprivate var valueOrigin = 0

    /// The buffers from position `objects` and value position `values` on.
    fileprivate func offset(objects: Int, values: Int) -> Storage {
      Storage(
        ids: ids + objects, entities: entities + objects, starts: starts + objects,
        values: self.values + values, valueOrigin: valueOrigin + values)
    }
  }

  /// Packed objects with room for `objectCapacity` positions and `valueCapacity` values,
  /// which `initialize` writes straight into the arrays' storage; it returns how many of
  /// each it initialized, from the start.
  private static func allocating(
    objectCapacity: Int, valueCapacity: Int,
    _ initialize: (Storage) -> (positions: Int, values: Int)
  ) -> PackedObjects {
    var objects = PackedObjects()
    var initialized = (positions: 0, values: 0)
    // Room for at least one of each, so every buffer has an address (an empty one need not).
    objects.ids = [ObjectID](unsafeUninitializedCapacity: max(objectCapacity, 1)) { ids, idCount in
      objects.entities = [Int32](unsafeUninitializedCapacity: max(objectCapacity, 1)) {
        entities, entityCount in
        objects.starts = [Int](unsafeUninitializedCapacity: max(objectCapacity, 1)) {
          starts, startCount in
          objects.values = PackedValues(uninitializedCapacity: valueCapacity) { values in
            initialized = initialize(
              Storage(
                ids: ids.baseAddress!, entities: entities.baseAddress!,
                starts: starts.baseAddress!, values: values))
            return initialized.values
          }
          startCount = initialized.positions
        }
        entityCount = initialized.positions
      }
      idCount = initialized.positions
    }
    return objects
  }

  /// What one part of ``filling(parts:_:)`` wrote.
  private struct PartResult<Failure: Error> {
    var objectCount: Int
    var valueCount: Int
    var strings: DeferredStrings?
    var failure: Failure?
  }

  /// Writes objects and their values into storage made for them (see
  /// ``filling(objectCapacity:valueCapacity:_:)``), checking only that it has room.
  struct Filler {
    fileprivate let storage: Storage
    let objectCapacity: Int
    let valueCapacity: Int
    fileprivate(set) var objectCount = 0
    fileprivate(set) var valueCount = 0
    /// The strings left as bytes, when the filler may defer them.
    fileprivate var strings: DeferredStrings.Builder?

    fileprivate init(
      _ storage: Storage, objectCapacity: Int, valueCapacity: Int,
      strings: DeferredStrings.Builder?
    ) {
      self.storage = storage
      self.objectCapacity = objectCapacity
      self.valueCapacity = valueCapacity
      self.strings = strings
    }

    /// Whether strings may be left as bytes (``appendDeferredString(sharing:of:then:)``).
    var defersStrings: Bool { strings != nil }

    /// Whether another object with `valueCount` values fits.
    func hasRoom(forValues count: Int) -> Bool {
      objectCount < objectCapacity && count <= valueCapacity - valueCount
    }

    /// Starts a new object, which must fit (``hasRoom(forValues:)``); its values follow.
    @inline(__always)
    mutating func beginObject(id: ObjectID, entity: Int) {
      (storage.ids + objectCount).initialize(to: id)
      (storage.entities + objectCount).initialize(to: Int32(entity))
      (storage.starts + objectCount).initialize(to: storage.valueOrigin + valueCount)
      objectCount += 1
    }

    /// Adds a value to the object begun last.
    @inline(__always)
    mutating func appendValue(_ value: consuming PersistentValue) {
      (storage.values + valueCount).initialize(to: value)
      valueCount += 1
    }

    /// Adds to the object begun last, as bytes (the filler must defer strings:
    /// ``defersStrings``), the string made of the first `shared` bytes of `previous` (a
    /// string added before) then `suffix`; returns where the new string's bytes are.
    mutating func appendDeferredString(
      sharing shared: Int, of previous: DeferredStrings.Span, then suffix: UnsafeRawBufferPointer
    ) -> DeferredStrings.Span {
      let span = strings!.append(
        sharing: shared, of: previous, then: suffix, position: storage.valueOrigin + valueCount)
      appendValue(.null)
      return span
    }
  }

  /// Packs snapshots, in their order.
  ///
  /// - Complexity: O(*n*) in the number of values.
  public init(_ snapshots: [ObjectSnapshot]) {
    guard !snapshots.isEmpty else { return }  // no buffers for none
    reserveCapacity(objects: snapshots.count, values: snapshots.reduce(0) { $0 + $1.values.count })
    for snapshot in snapshots { append(snapshot) }
  }

  /// The number of positions, removed objects included.
  var positionCount: Int { ids.count }

  /// Whether the object at `position` was not removed.
  func isLive(_ position: Int) -> Bool { entities[position] != Self.removed }

  /// The positions of the values of the object at `position`.
  func valueRange(_ position: Int) -> Range<Int> {
    Self.valueRange(position, starts: starts, valueCount: values.count)
  }

  /// The positions of the values of the object at `position`, from the objects' starts and
  /// the number of values (for a reader holding the values buffer itself).
  static func valueRange(_ position: Int, starts: [Int], valueCount: Int) -> Range<Int> {
    starts[position]..<(position + 1 < starts.count ? starts[position + 1] : valueCount)
  }

  /// The object at `position` as a snapshot, deferred strings decoded.
  func snapshot(at position: Int) -> ObjectSnapshot {
    ObjectSnapshot(
      id: ids[position], entity: Int(entities[position]),
      values: decodedValues(valueRange(position)))
  }

  /// The value at `index` of ``values``, a deferred string decoded.
  func value(at index: Int) -> PersistentValue {
    let value = values[index]
    // Only a `.null` can stand for a deferred string: other values need no search.
    guard case .null = value, !deferredStrings.isEmpty,
      let string = deferredStrings.string(at: index)
    else { return value }
    return .string(string.value)
  }

  /// Replaces the value at `index` of ``values``.
  ///
  /// A deferred string's entry stands only for a `.null` placeholder (every reader checks
  /// the value first), so only a new `.null` needs its position's entry discarded: a
  /// replayed rename costs no search of the entries.
  mutating func replaceValue(at index: Int, with newValue: PersistentValue) {
    if case .null = newValue, !deferredStrings.isEmpty {
      deferredStrings.discard(index..<index + 1)
    }
    values[index] = newValue
  }

  /// The values at `range` of ``values``, deferred strings decoded.
  private func decodedValues(_ range: Range<Int>) -> [PersistentValue] {
    var decoded = values[range]
    for (position, string) in deferredStrings.strings(in: range) {
      // An entry stands for its value only while that is the placeholder.
      if case .null = decoded[position - range.lowerBound] {
        decoded[position - range.lowerBound] = .string(string.value)
      }
    }
    return decoded
  }

  /// The objects as snapshots, in order (strings left as bytes decoded).
  ///
  /// - Complexity: O(*n*) in the number of values, an array per object, on every read.
  public var snapshots: [ObjectSnapshot] {
    var result: [ObjectSnapshot] = []
    result.reserveCapacity(liveCount)
    for position in ids.indices where isLive(position) { result.append(snapshot(at: position)) }
    return result
  }

  /// Makes room for `objects` more objects of `values` values in all, so that adding them
  /// allocates nothing more.
  public mutating func reserveCapacity(objects: Int, values valueCount: Int) {
    ids.reserveCapacity(ids.count + objects)
    entities.reserveCapacity(entities.count + objects)
    starts.reserveCapacity(starts.count + objects)
    values.reserveCapacity(values.count + valueCount)
  }

  /// Starts a new object of entity `entity` (its index in the ``Schema``); its values are
  /// then added with ``appendValue(_:)``, one per property, in the entity's order.
  ///
  /// - Complexity: O(1) amortized.
  public mutating func beginObject(id: ObjectID, entity: Int) {
    ids.append(id)
    entities.append(Int32(entity))
    starts.append(values.count)
    liveCount += 1
  }

  /// Adds a value to the object begun last.
  ///
  /// - Complexity: O(1) amortized.
  public mutating func appendValue(_ value: PersistentValue) {
    values.append(value)
  }

  /// Adds an object at the end.
  ///
  /// - Complexity: O(*k*) in its values, amortized.
  public mutating func append(_ snapshot: ObjectSnapshot) {
    beginObject(id: snapshot.id, entity: snapshot.entity)
    values.append(contentsOf: snapshot.values)
  }

  /// Adds `other`'s objects at the end, in order (its removed positions left out); their
  /// strings left as bytes are decoded.
  ///
  /// - Complexity: O(*n*) in `other`'s positions and values.
  mutating func append(contentsOf other: PackedObjects) {
    guard other.deferredStrings.isEmpty else {
      for position in other.ids.indices where other.isLive(position) {
        append(other.snapshot(at: position))
      }
      return
    }
    // No reservation: an exact one per batch made a replay of 1,000 saves of one new object
    // each copy everything 1,000 times; appending grows geometrically.
    for position in other.ids.indices where other.isLive(position) {
      beginObject(id: other.ids[position], entity: Int(other.entities[position]))
      values.append(contentsOf: other.values, other.valueRange(position))
    }
  }

  /// Replaces the values of the object at `position` with as many others.
  mutating func replaceValues(at position: Int, with newValues: [PersistentValue]) {
    let range = valueRange(position)
    precondition(range.count == newValues.count, "an object's values changed in number")
    deferredStrings.discard(range)
    values.replaceSubrange(range, with: newValues)
  }

  /// Removes the object at `position`, freeing its values but keeping every position.
  ///
  /// Its deferred strings' entries stay: every reader skips removed positions, and a
  /// position is never used again, so they can hide no later value (and looking them up
  /// was most of replaying a delete).
  mutating func remove(at position: Int) {
    guard isLive(position) else { return }
    values.nullify(valueRange(position))
    entities[position] = Self.removed
    liveCount -= 1
  }

  /// Gives the objects strings left as bytes for some of their `.null` placeholders (a
  /// migration's, relocated with the values they stand for).
  mutating func adoptDeferredStrings(_ strings: DeferredStrings) {
    precondition(deferredStrings.isEmpty, "the objects have deferred strings already")
    deferredStrings = strings
  }

  /// Whether the values' buffer is this value's alone (see
  /// ``PackedValues/isUniquelyReferenced``).
  var valuesAreUniquelyReferenced: Bool {
    mutating get { values.isUniquelyReferenced }
  }

  /// Takes the values' memory for a loader, which then owns it (see
  /// ``PackedValues/takeMemory()``), with the deferred strings; the objects keep their ids,
  /// entities and starts, and have no values left.
  mutating func takeValues() -> (
    values: UnsafeMutablePointer<PersistentValue>, count: Int, deferredStrings: DeferredStrings
  ) {
    let (values, count) = values.takeMemory()
    let strings = deferredStrings
    deferredStrings = DeferredStrings()
    return (values, count, strings)
  }
}
