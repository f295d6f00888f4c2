/// The properties of one object changed since the last delivery to observers: a bit each
/// for the first 64, a set only for a property beyond them.
///
/// A context notes the property of every write to a saved object it tracks; kept as a
/// `Set<Int>` per object in a dictionary, a write paid a hash and, for the object's first,
/// an allocation (a custom migration stage setting one attribute of 101,100 boxes spent a
/// tenth of its time there). Here it is an `or` into the object's entry.
struct ChangedProperties: Sequence, Equatable {
  private var bits: UInt64 = 0
  private var beyond: Set<Int> = []

  init() {}

  var isEmpty: Bool { bits == 0 && beyond.isEmpty }

  mutating func insert(_ property: Int) {
    if property < 64 { bits |= 1 << UInt64(property) } else { beyond.insert(property) }
  }

  func contains(_ property: Int) -> Bool {
    property < 64 ? bits & (1 << UInt64(property)) != 0 : beyond.contains(property)
  }

  /// The properties as one word of bits, when all are among the first 64 (the key a
  /// delivery finds the properties' names by).
  var bitsIfNoneBeyond: UInt64? { beyond.isEmpty ? bits : nil }

  /// The properties in increasing order: the bits one by one, then (sorted, the only
  /// allocation) any beyond them.
  struct Iterator: IteratorProtocol {
    fileprivate var remaining: UInt64
    fileprivate var beyond: Set<Int>
    fileprivate var sortedBeyond: IndexingIterator<[Int]>?

    mutating func next() -> Int? {
      if remaining != 0 {
        let property = remaining.trailingZeroBitCount
        remaining &= remaining - 1
        return property
      }
      if beyond.isEmpty { return nil }
      if sortedBeyond == nil { sortedBeyond = beyond.sorted().makeIterator() }
      return sortedBeyond!.next()
    }
  }

  func makeIterator() -> Iterator {
    Iterator(remaining: bits, beyond: beyond, sortedBeyond: nil)
  }
}
