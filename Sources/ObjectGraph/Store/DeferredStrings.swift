/// The string values of ``PackedObjects`` that a decoder left as bytes in ``StoredStrings``
/// (see there for why): each such value is a `.null` placeholder in the packed values, and
/// an entry here says where its bytes are.
///
/// Entries are in the order of their values' positions, so a loader walking the values in
/// order meets them in order, and a reader of one object finds its entries by binary search.
/// An entry whose value is replaced or removed is discarded, so it never hides a later value.
struct DeferredStrings: Sendable {
  /// Where the bytes of the value at `position` are: in storage number `storage`, `count`
  /// bytes at `offset`; `count == .max` once discarded.
  struct Entry {
    var position: Int
    var storage: Int32
    var offset: UInt32
    var count: UInt32

    var isDiscarded: Bool { count == .max }
  }

  /// The bytes the entries refer to: one storage each under 4 GiB, so that a slot's
  /// ``StoredString`` takes 16 bytes and slots stay 24.
  private(set) var storages: [StoredStrings] = []
  /// The entries, in order of position.
  private(set) var entries: [Entry] = []

  /// Whether no value is deferred.
  var isEmpty: Bool { entries.isEmpty }

  /// The stored string of an entry, or `nil` if it was discarded.
  func string(_ entry: Entry) -> StoredString? {
    guard !entry.isDiscarded else { return nil }
    return StoredString(
      strings: storages[Int(entry.storage)], offset: entry.offset, count: entry.count)
  }

  /// The indexes in ``entries`` of the entries of the values at `positions`.
  ///
  /// - Complexity: O(log *n*) in the number of entries.
  func entryIndexes(of positions: Range<Int>) -> Range<Int> {
    firstEntry(atOrAfter: positions.lowerBound)..<firstEntry(atOrAfter: positions.upperBound)
  }

  /// The stored string of the value at `position`, if it is deferred (one search).
  func string(at position: Int) -> StoredString? {
    let index = firstEntry(atOrAfter: position)
    guard index < entries.count, entries[index].position == position else { return nil }
    return string(entries[index])
  }

  /// Discards the entries of the values at `positions`, which were replaced or removed.
  mutating func discard(_ positions: Range<Int>) {
    // One search: the entries at the positions follow the first one at or after them.
    var index = firstEntry(atOrAfter: positions.lowerBound)
    while index < entries.count, entries[index].position < positions.upperBound {
      entries[index].count = .max
      index += 1
    }
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

  init() {}

  private init(storages: [StoredStrings], entries: [Entry]) {
    self.storages = storages
    self.entries = entries
  }

  /// The strings of several parts, in order (each part's positions after the one before's).
  init(joining parts: [DeferredStrings]) {
    entries.reserveCapacity(parts.reduce(0) { $0 + $1.entries.count })
    for part in parts where !part.isEmpty {
      let storageOffset = Int32(storages.count)
      storages += part.storages
      // Copied whole, then renumbered in place: an append an entry cost a check each.
      let first = entries.count
      entries += part.entries
      guard storageOffset != 0 else { continue }
      entries.withUnsafeMutableBufferPointer { entries in
        for index in first..<entries.count { entries[index].storage += storageOffset }
      }
    }
  }

  /// Where a string's bytes are while a builder collects them.
  struct Span {
    var storage = 0
    var offset = 0
    var count = 0
  }

  /// Collects deferred strings while a decoder fills packed objects.
  struct Builder {
    /// The storages filled before ``current``.
    private var earlier: [StoredStrings] = []
    /// The storage strings are added to.
    private var current: StoredStrings
    private var entries: [Entry] = []
    /// The most bytes one storage takes (below 4 GiB; lowered by tests).
    private let storageLimit: Int

    /// A builder with room for about `byteCount` bytes of strings, and `count` strings.
    init(reservingBytes byteCount: Int, strings count: Int, storageLimit: Int = Int(UInt32.max)) {
      self.storageLimit = storageLimit
      current = StoredStrings(capacity: min(byteCount, storageLimit))
      entries.reserveCapacity(count)
    }

    /// Adds, as the value at `position`, the string made of the first `shared` bytes of
    /// `previous` (a string added before) then `suffix`; returns the new string, the
    /// `previous` of the next one that shares its prefix.
    mutating func append(
      sharing shared: Int, of previous: Span, then suffix: UnsafeRawBufferPointer, position: Int
    ) -> Span {
      precondition(shared <= previous.count, "a shared prefix longer than the string")
      let count = shared + suffix.count
      precondition(count < storageLimit, "a string longer than a storage")
      if current.count + count >= storageLimit {
        earlier.append(current)
        current = StoredStrings(capacity: min(2 * count, storageLimit))
      }
      let storage = earlier.count
      let offset =
        previous.storage == storage
        ? current.append(sharing: shared, at: previous.offset, then: suffix)
        : current.append(
          sharing: shared, of: earlier[previous.storage], at: previous.offset, then: suffix)
      entries.append(
        Entry(
          position: position, storage: Int32(storage), offset: UInt32(offset),
          count: UInt32(count)))
      return Span(storage: storage, offset: offset, count: count)
    }

    /// The strings collected.
    func finish() -> DeferredStrings {
      guard !entries.isEmpty else { return DeferredStrings() }
      let storages = earlier + [current]
      for storage in storages { storage.shrinkToFit() }
      return DeferredStrings(storages: storages, entries: entries)
    }
  }
}
