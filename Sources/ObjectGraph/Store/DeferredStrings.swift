/// The string values of ``PackedObjects`` that a decoder left as bytes in ``StoredStrings``
/// (see there for why): each such value is a `.null` placeholder in the packed values, and
/// an entry here says where its bytes are.
///
/// Entries are in the order of their values' positions, so a loader walking the values in
/// order meets them in order (``Cursor``), and a reader of one object finds its entries by
/// binary search. An entry stands for its value only while that value is the `.null`
/// placeholder: every reader checks the value first, so a value replaced by another
/// leaves its entry, and only one replaced by `.null` discards it. The strings of a snapshot decoded in parts stay in their parts, one after
/// another: joining them into one list copied every entry into fresh memory (0.5 ms of
/// opening 101,100 boxes).
struct DeferredStrings: Sendable {
  /// Where the bytes of the value at `position` are: in storage number `storage` of its
  /// part, `count` bytes at `offset`; `count == .max` once discarded.
  struct Entry {
    var position: Int
    var storage: Int32
    var offset: UInt32
    var count: UInt32

    var isDiscarded: Bool { count == .max }
  }

  /// The strings one builder collected: entries in order of position, and the bytes they
  /// refer to (one storage each under 4 GiB, so that a slot's ``StoredString`` takes 16
  /// bytes and slots stay 24).
  fileprivate struct Part {
    var storages: [StoredStrings]
    var entries: [Entry]

    func string(_ entry: Entry) -> StoredString? {
      guard !entry.isDiscarded else { return nil }
      return StoredString(
        strings: storages[Int(entry.storage)], offset: entry.offset, count: entry.count)
    }

    /// The index of the first entry at or after `position`.
    ///
    /// Positions grow about evenly (a few string values an object), so one interpolation
    /// step lands within a few entries of the answer and the binary search starts from a
    /// window around it: a search from the whole list missed the cache at each of its first
    /// ten steps, a replayed rename of a loaded title cost about a microsecond.
    func firstEntry(atOrAfter position: Int) -> Int {
      var low = 0
      var high = entries.count
      if high > 2 * Self.window, let first = entries.first?.position,
        let last = entries.last?.position, first < position, position <= last
      {
        // In 0..<high: `position - first` is positive and at most `last - first`.
        let guess = (position - first).multipliedFullWidth(by: high - 1)
        let index = Int((last - first).dividingFullWidth((guess.high, guess.low)).quotient)
        let below = max(index - Self.window, 0)
        let above = min(index + Self.window, high - 1)
        // Each narrowing keeps the search's bounds: entries before `low` are before
        // `position`, those from `high` on are not.
        if entries[below].position < position { low = below + 1 }
        if entries[above].position >= position { high = above }
      }
      while low < high {
        let middle = (low + high) / 2
        if entries[middle].position < position { low = middle + 1 } else { high = middle }
      }
      return low
    }

    /// How many entries on each side of an interpolated guess the search starts with.
    private static var window: Int { 16 }
  }

  /// The parts, each with entries, in order of position, after the part before's.
  private var parts: [Part] = []

  /// Whether no value is deferred.
  var isEmpty: Bool { parts.isEmpty }

  /// The bytes every entry refers to.
  var storages: [StoredStrings] { parts.flatMap(\.storages) }

  /// The number of the part whose entries' positions include `position`, if any.
  private func part(holding position: Int) -> Int? {
    // Few parts (one per core): a scan from the end finds the last starting at or before.
    parts.lastIndex { $0.entries[0].position <= position }
  }

  /// The stored string of the value at `position`, if it is deferred (one search).
  func string(at position: Int) -> StoredString? {
    guard let number = part(holding: position) else { return nil }
    let part = parts[number]
    let index = part.firstEntry(atOrAfter: position)
    guard index < part.entries.count, part.entries[index].position == position else {
      return nil
    }
    return part.string(part.entries[index])
  }

  /// The stored strings of the values at `positions`, with their positions, in order.
  func strings(in positions: Range<Int>) -> [(position: Int, string: StoredString)] {
    var found: [(position: Int, string: StoredString)] = []
    for part in parts {
      var index = part.firstEntry(atOrAfter: positions.lowerBound)
      while index < part.entries.count, part.entries[index].position < positions.upperBound {
        if let string = part.string(part.entries[index]) {
          found.append((part.entries[index].position, string))
        }
        index += 1
      }
    }
    return found
  }

  /// Discards the entries of the values at `positions`, which were replaced.
  mutating func discard(_ positions: Range<Int>) {
    // The parts from the one holding the first position on (at most those).
    let first = part(holding: positions.lowerBound) ?? 0
    for number in first..<parts.count {
      if parts[number].entries[0].position >= positions.upperBound { break }
      // One search: the entries at the positions follow the first one at or after them.
      var index = parts[number].firstEntry(atOrAfter: positions.lowerBound)
      while index < parts[number].entries.count,
        parts[number].entries[index].position < positions.upperBound
      {
        parts[number].entries[index].count = .max
        index += 1
      }
    }
  }

  /// Reads the stored strings in the order of their positions, as a loader walking the
  /// values in order meets them: each step a comparison, no search.
  struct Cursor {
    private let parts: [Part]
    private var part = 0
    /// The current part, kept here so reading its entries retains nothing.
    private var current: Part
    private var next = 0
    /// The number, among all parts' ``DeferredStrings/storages``, of the current part's
    /// first storage.
    private var storageBase: Int32

    /// A cursor at the first string of a value at or after `position`, in part `part`.
    fileprivate init(_ parts: [Part], part: Int, position: Int) {
      self.parts = parts
      self.part = part
      current = parts.isEmpty ? Part(storages: [], entries: []) : parts[part]
      next = current.firstEntry(atOrAfter: position)
      storageBase = Int32(parts.prefix(part).reduce(0) { $0 + $1.storages.count })
    }

    /// Passes over the strings of the values before `position` (those of removed objects)
    /// and discarded ones: a loader calls it at the start of each object's values.
    @inline(__always)
    mutating func skip(to position: Int) {
      while true {
        while next < current.entries.count
          && (current.entries[next].position < position || current.entries[next].isDiscarded)
        {
          next += 1
        }
        guard next == current.entries.count, part + 1 < parts.count else { return }
        storageBase += Int32(current.storages.count)
        part += 1
        current = parts[part]
        next = 0
      }
    }

    /// The stored string of the value at `position` if it is the next one (see
    /// ``skip(to:)``), which it then passes; `nil` if that value is not deferred.
    @inline(__always)
    mutating func take(at position: Int) -> StoredString? {
      guard next < current.entries.count, current.entries[next].position == position else {
        return nil
      }
      next += 1
      return current.string(current.entries[next - 1])
    }

    /// The stored string of the value at `position`, if it is deferred; each call must ask
    /// for a position after the one before.
    mutating func string(at position: Int) -> StoredString? {
      skip(to: position)
      return take(at: position)
    }

    /// The next entry not discarded whose position is before `end`, which it then passes,
    /// its storage numbered among all parts' ``DeferredStrings/storages``; a migration
    /// moving whole objects reads each object's entries so (after ``skip(to:)`` to its
    /// first value), without a search or a storage lookup per string.
    @inline(__always)
    mutating func nextEntry(before end: Int) -> Entry? {
      skip(to: 0)
      guard next < current.entries.count, current.entries[next].position < end else {
        return nil
      }
      var entry = current.entries[next]
      next += 1
      entry.storage += storageBase
      return entry
    }
  }

  /// A cursor at the first deferred string of a value at or after `position`: a loader
  /// working on a piece of the values starts there.
  func makeCursor(at position: Int = 0) -> Cursor {
    Cursor(parts, part: part(holding: position) ?? 0, position: position)
  }

  init() {}

  private init(part: Part) {
    parts = part.entries.isEmpty ? [] : [part]
  }

  /// The strings of several parts, in order (each part's positions after the one before's).
  init(joining parts: [DeferredStrings]) {
    self.parts = parts.flatMap(\.parts)
  }

  /// The strings of other deferred strings at new positions, added in increasing order of
  /// position: what a migration makes of the strings of the values it moves (their bytes
  /// stay where they are, in the same storages).
  struct Relocation {
    /// Every part's storages, in order: the storages an entry from
    /// ``Cursor/nextEntry(before:)`` is numbered among.
    let storages: [StoredStrings]
    private var entries: [Entry] = []

    init(of strings: DeferredStrings) {
      storages = strings.storages
    }

    /// Places the string of `entry` (from ``Cursor/nextEntry(before:)``) at `position`,
    /// after those placed so far.
    @inline(__always)
    mutating func place(_ entry: Entry, at position: Int) {
      precondition(entries.last.map { $0.position < position } ?? true, "positions out of order")
      var placed = entry
      placed.position = position
      entries.append(placed)
    }

    /// The string of `entry` (from ``Cursor/nextEntry(before:)``).
    func string(_ entry: Entry) -> StoredString {
      StoredString(strings: storages[Int(entry.storage)], offset: entry.offset, count: entry.count)
    }

    /// The strings placed.
    func finish() -> DeferredStrings {
      DeferredStrings(part: Part(storages: storages, entries: entries))
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
      return DeferredStrings(part: Part(storages: storages, entries: entries))
    }
  }
}
