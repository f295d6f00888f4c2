/// The string values of ``PackedObjects`` that a decoder left as bytes in ``StoredStrings``
/// (see there for why): each such value is a `.null` placeholder in the packed values, and
/// an entry here says where its bytes are.
///
/// Entries are in the order of their values' positions, so a loader walking the values in
/// order meets them in order, and a reader of one object finds its entries by binary search.
/// An entry whose value is replaced or removed is discarded, so it never hides a later value.
struct DeferredStrings: Sendable {
  /// Where the bytes of the value at `position` are; `count == .max` once discarded.
  struct Entry {
    var position: Int
    var offset: UInt32
    var count: UInt32

    var isDiscarded: Bool { count == .max }
  }

  /// The bytes the entries refer to (`nil` when there are none).
  private(set) var strings: StoredStrings?
  /// The entries, in order of position.
  private(set) var entries: [Entry] = []

  /// Whether no value is deferred.
  var isEmpty: Bool { entries.isEmpty }

  /// The stored string of an entry, or `nil` if it was discarded.
  func string(_ entry: Entry) -> StoredString? {
    guard !entry.isDiscarded, let strings else { return nil }
    return StoredString(strings: strings, offset: entry.offset, count: entry.count)
  }

  /// The indexes in ``entries`` of the entries of the values at `positions`.
  ///
  /// - Complexity: O(log *n*) in the number of entries.
  func entryIndexes(of positions: Range<Int>) -> Range<Int> {
    firstEntry(atOrAfter: positions.lowerBound)..<firstEntry(atOrAfter: positions.upperBound)
  }

  /// Discards the entries of the values at `positions`, which were replaced or removed.
  mutating func discard(_ positions: Range<Int>) {
    for index in entryIndexes(of: positions) { entries[index].count = .max }
  }

  private func firstEntry(atOrAfter position: Int) -> Int {
    var low = 0
    var high = entries.count
    while low < high {
      let middle = (low + high) / 2
      if entries[middle].position < position { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// Collects deferred strings while a decoder fills packed objects.
  struct Builder {
    private let strings: StoredStrings
    private var entries: [Entry] = []

    /// A builder with room for about `byteCount` bytes of strings, and `count` strings.
    init(reservingBytes byteCount: Int, strings count: Int) {
      strings = StoredStrings(capacity: byteCount)
      entries.reserveCapacity(count)
    }

    /// Adds the string made of `prefix` then `suffix` as the value at `position`, or returns
    /// `false` when the bytes would pass 4 GiB (the value must then be decoded).
    mutating func append(
      _ prefix: UnsafeRawBufferPointer, _ suffix: UnsafeRawBufferPointer, position: Int
    ) -> Bool {
      let count = prefix.count + suffix.count
      guard strings.count + count < Int(UInt32.max) else { return false }
      let offset = strings.append(prefix, suffix)
      entries.append(Entry(position: position, offset: UInt32(offset), count: UInt32(count)))
      return true
    }

    /// The strings collected.
    func finish() -> DeferredStrings {
      guard !entries.isEmpty else { return DeferredStrings() }
      strings.shrinkToFit()
      return DeferredStrings(strings: strings, entries: entries)
    }
  }
}
