/// The values of ``PackedObjects``: one buffer of ``PersistentValue``s, grown and shared like
/// an array's (copied on write), whose memory a loader can take over whole.
///
/// An `Array` keeps its memory to itself and destroys its elements one by one when it goes.
/// A store's loader instead takes the memory the values were decoded into
/// (``takeMemory()``) and turns each object's run of values into that object's slots in
/// place (see ``SlotSlab``): no second buffer of fresh pages for the slots, no copy from one
/// to the other, no pass destroying the values moved out (14.5 MB and about 6 ms for the
/// 101,100 objects of the seed workload).
struct PackedValues: @unchecked Sendable {
  // Sendable like an array: copies share a buffer only to read it; a copy that changes it
  // makes its own first (`makeUnique`).

  /// The memory, the number of values initialized from its start, and its room.
  private final class Buffer {
    let base: UnsafeMutablePointer<PersistentValue>
    let capacity: Int
    var count = 0
    /// Whether the buffer still owns its memory (``PackedValues/takeMemory()`` takes it).
    var ownsMemory = true

    init(capacity: Int) {
      self.capacity = max(capacity, 1)  // every buffer has an address, an empty one too
      base = .allocate(capacity: self.capacity)
    }

    deinit {
      guard ownsMemory else { return }
      base.deinitialize(count: count)
      base.deallocate()
    }
  }

  private var buffer: Buffer

  /// The buffer of every empty value made by ``init()``: shared, so never changed (each
  /// change first makes a buffer of its own, ``makeUnique(capacity:)``), and never freed.
  nonisolated(unsafe) private static let empty = Buffer(capacity: 0)

  /// No values, with no allocation.
  init() {
    buffer = Self.empty
  }

  /// Room for `capacity` values, of which `initialize` writes the first ones from the given
  /// address and returns how many.
  init(
    uninitializedCapacity capacity: Int,
    initializingWith initialize: (UnsafeMutablePointer<PersistentValue>) -> Int
  ) {
    buffer = Buffer(capacity: capacity)
    let count = initialize(buffer.base)
    precondition(count >= 0 && count <= buffer.capacity, "more values than room")
    buffer.count = count
  }

  var count: Int { buffer.count }

  var isEmpty: Bool { buffer.count == 0 }

  subscript(index: Int) -> PersistentValue {
    get {
      precondition(index >= 0 && index < buffer.count, "value index out of range")
      return buffer.base[index]
    }
    set {
      precondition(index >= 0 && index < buffer.count, "value index out of range")
      makeUnique(capacity: buffer.capacity)
      buffer.base[index] = newValue
    }
  }

  /// Replaces the values at `range` with `.null`, freeing what they held: with one
  /// uniqueness check for all of them, where one value at a time took one each.
  mutating func nullify(_ range: Range<Int>) {
    precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count, "range out of range")
    makeUnique(capacity: buffer.capacity)
    (buffer.base + range.lowerBound).update(repeating: .null, count: range.count)
  }

  /// The values at `range`, as an array.
  subscript(range: Range<Int>) -> [PersistentValue] {
    precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count, "range out of range")
    return Array(UnsafeBufferPointer(start: buffer.base + range.lowerBound, count: range.count))
  }

  /// Makes room for `minimumCapacity` values in all.
  mutating func reserveCapacity(_ minimumCapacity: Int) {
    makeUnique(capacity: max(minimumCapacity, buffer.capacity))
  }

  mutating func append(_ value: PersistentValue) {
    makeRoom(for: 1)
    (buffer.base + buffer.count).initialize(to: value)
    buffer.count += 1
  }

  mutating func append(contentsOf values: [PersistentValue]) {
    makeRoom(for: values.count)
    values.withUnsafeBufferPointer { values in
      guard let source = values.baseAddress else { return }
      (buffer.base + buffer.count).initialize(from: source, count: values.count)
    }
    buffer.count += values.count
  }

  /// Appends copies of the values at `range` of `other`.
  mutating func append(contentsOf other: PackedValues, _ range: Range<Int>) {
    precondition(range.lowerBound >= 0 && range.upperBound <= other.count, "range out of range")
    makeRoom(for: range.count)
    (buffer.base + buffer.count).initialize(
      from: other.buffer.base + range.lowerBound, count: range.count)
    buffer.count += range.count
  }

  /// Replaces the values at `range` with as many others.
  mutating func replaceSubrange(_ range: Range<Int>, with newValues: [PersistentValue]) {
    precondition(range.count == newValues.count, "values replaced by a different number")
    precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count, "range out of range")
    makeUnique(capacity: buffer.capacity)
    for (offset, value) in newValues.enumerated() { buffer.base[range.lowerBound + offset] = value }
  }

  func withUnsafeBufferPointer<Result>(
    _ body: (UnsafeBufferPointer<PersistentValue>) throws -> Result
  ) rethrows -> Result {
    try withExtendedLifetime(buffer) {
      try body(UnsafeBufferPointer(start: buffer.base, count: buffer.count))
    }
  }

  /// Whether no other value shares this one's buffer (so ``takeMemory()`` copies nothing).
  var isUniquelyReferenced: Bool {
    mutating get { isKnownUniquelyReferenced(&buffer) }
  }

  /// Takes the memory and its values, leaving no values: the caller must deinitialize what
  /// it leaves initialized of the first `count` values, and free the memory.
  mutating func takeMemory() -> (base: UnsafeMutablePointer<PersistentValue>, count: Int) {
    makeUnique(capacity: buffer.capacity)
    let taken = (buffer.base, buffer.count)
    buffer.ownsMemory = false
    buffer = Self.empty
    return taken
  }

  /// Makes the buffer this value's own, with room for at least `capacity` values.
  private mutating func makeUnique(capacity: Int) {
    let isUnique = isKnownUniquelyReferenced(&buffer)
    if isUnique && capacity <= buffer.capacity { return }
    let new = Buffer(capacity: capacity)
    if isUnique {
      new.base.moveInitialize(from: buffer.base, count: buffer.count)
    } else {
      new.base.initialize(from: buffer.base, count: buffer.count)
    }
    new.count = buffer.count
    if isUnique { buffer.count = 0 }
    buffer = new
  }

  /// Makes room for `extra` more values, doubling the room when it grows.
  private mutating func makeRoom(for extra: Int) {
    let needed = buffer.count + extra
    makeUnique(
      capacity: needed <= buffer.capacity ? buffer.capacity : max(needed, 2 * buffer.capacity))
  }
}
