/// An ordered index of one attribute: the live objects sorted by the attribute's value, as
/// a fetch's sort descriptor orders them (see ``OrderedKey``: nil first), ties by object
/// identifier, so range predicates, sorts with a limit and pages are answered without
/// scanning.
///
/// Beside the attribute's ``ValueIndex`` (which still answers equalities, in O(1)), and kept
/// up to date with it by ``EntityTable`` on every change: each object has one entry, its
/// key and its identifier, in a ``SortedChunks``. The identifier is the tie key: an object
/// has it from its insertion (the context reserves it then) until it leaves the table, so
/// an entry never changes place without a change of its key. Objects whose value has no
/// order (a NaN) are only counted: a sort then falls back to the scan, which orders them as
/// Foundation does; a range never holds them.
///
/// Ranks number the entries in order, nil keys first; every query answers in ranks.
///
/// The entries hold their objects unretained, as a ``ValueIndex`` does: the table that owns
/// the index holds every object in it and takes an object out of it before letting it go.
struct OrderedIndex {
  /// One object's place.
  struct Entry: Comparable {
    let key: OrderedKey
    let id: UInt64
    let object: Unmanaged<ManagedObject>

    static func < (lhs: Entry, rhs: Entry) -> Bool {
      lhs.key < rhs.key || (lhs.key == rhs.key && lhs.id < rhs.id)
    }

    static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.key == rhs.key && lhs.id == rhs.id }
  }

  /// The values a range holds: above a lower bound and below an upper one, either open.
  /// Nil values are in no range.
  struct KeyRange {
    var lower: (key: OrderedKey, isInclusive: Bool)?
    var upper: (key: OrderedKey, isInclusive: Bool)?

    /// The range of the values in `comparison` to `key` (`.less`: below it), nil for a
    /// comparison no range expresses (`!=`).
    init?(_ comparison: ComparisonTest, _ key: OrderedKey) {
      switch comparison {
      case .equal: (lower, upper) = ((key, true), (key, true))
      case .less: upper = (key, false)
      case .lessOrEqual: upper = (key, true)
      case .greater: lower = (key, false)
      case .greaterOrEqual: lower = (key, true)
      case .notEqual: return nil
      }
    }

    /// The values in both ranges.
    func intersection(_ other: KeyRange) -> KeyRange {
      var result = self
      if let bound = other.lower,
        result.lower.map({ Self.isTighter(bound, than: $0, lower: true) }) ?? true
      {
        result.lower = bound
      }
      if let bound = other.upper,
        result.upper.map({ Self.isTighter(bound, than: $0, lower: false) }) ?? true
      {
        result.upper = bound
      }
      return result
    }

    /// Whether `bound` excludes more than `current` (both lower bounds, or both upper).
    private static func isTighter(
      _ bound: (key: OrderedKey, isInclusive: Bool),
      than current: (key: OrderedKey, isInclusive: Bool), lower: Bool
    ) -> Bool {
      if bound.key == current.key { return !bound.isInclusive && current.isInclusive }
      return lower ? current.key < bound.key : bound.key < current.key
    }
  }

  /// The attribute's type.
  let type: AttributeType
  private var entries = SortedChunks<Entry>()
  /// The number of objects whose value has no order (NaN), which are in no entry.
  private(set) var unorderedCount = 0

  /// An empty index of an attribute of `type`; nil if its values have no order.
  init?(type: AttributeType) {
    guard OrderedKey.orders(type) else { return nil }
    self.type = type
  }

  /// The number of entries (objects with an ordered value or nil).
  var count: Int { entries.count }

  /// The entry at `rank`.
  ///
  /// - Complexity: O(log *n*).
  subscript(rank: Int) -> Entry { entries[rank] }

  // MARK: Changes

  /// Adds an object holding `value`.
  ///
  /// - Complexity: O(log *n* + *B*) amortized (see ``SortedChunks/insert(_:)``).
  mutating func add(_ object: ManagedObject, for value: PersistentValue) {
    guard let key = OrderedKey(stored: value, of: type) else {
      unorderedCount += 1
      return
    }
    let inserted = entries.insert(Self.entry(object, key))
    assert(inserted, "ObjectGraph: an object is in an ordered index twice")
  }

  /// Removes an object that holds `value`.
  ///
  /// - Complexity: O(log *n* + *B*) amortized (see ``SortedChunks/remove(_:)``).
  mutating func remove(_ object: ManagedObject, for value: PersistentValue) {
    guard let key = OrderedKey(stored: value, of: type) else {
      unorderedCount -= 1
      assert(unorderedCount >= 0, "ObjectGraph: an unordered value removed twice")
      return
    }
    let removed = entries.remove(Self.entry(object, key))
    assert(removed, "ObjectGraph: an object left an ordered index it was not in")
  }

  /// Adds `objects[i]` for `values[i]`, for every `i`, into an empty index: the entries
  /// are sorted once.
  ///
  /// - Complexity: O(*n* log *n*).
  mutating func add<Values: RandomAccessCollection<PersistentValue>>(
    _ objects: [Unmanaged<ManagedObject>], for values: Values
  ) where Values.Index == Int {
    precondition(objects.count == values.count && entries.isEmpty, "one value per object")
    var sorted: [Entry] = []
    sorted.reserveCapacity(objects.count)
    for (object, value) in zip(objects, values) {
      guard let key = OrderedKey(stored: value, of: type) else {
        unorderedCount += 1
        continue
      }
      sorted.append(object._withUnsafeGuaranteedRef { Self.entry($0, key) })
    }
    sorted.sort()
    entries = SortedChunks(sorted: sorted)
  }

  private static func entry(_ object: ManagedObject, _ key: OrderedKey) -> Entry {
    assert(object.storedObjectID != nil, "ObjectGraph: an indexed object has an identifier")
    return Entry(
      key: key, id: object.storedObjectID?.rawValue ?? 0, object: Unmanaged.passUnretained(object))
  }

  // MARK: Queries

  /// The ranks of the entries with a nil key (the first ones).
  ///
  /// - Complexity: O(log *n*).
  var nilRanks: Range<Int> {
    0..<entries.rank { $0.key != .null }
  }

  /// The ranks of the entries whose key is in `range` (never nil).
  ///
  /// - Complexity: O(log *n*).
  func ranks(in range: KeyRange) -> Range<Int> {
    let start: Int
    if let lower = range.lower {
      start = entries.rank { lower.isInclusive ? !($0.key < lower.key) : lower.key < $0.key }
    } else {
      start = nilRanks.upperBound
    }
    var end = count
    if let upper = range.upper {
      end = entries.rank { upper.isInclusive ? upper.key < $0.key : !($0.key < upper.key) }
    }
    return start..<max(start, end)
  }

  /// The ranks of the entries whose key equals the key at `rank`.
  ///
  /// - Complexity: O(log *n*).
  func ranksOfKey(at rank: Int) -> Range<Int> {
    let key = entries[rank].key
    let start = entries.rank { !($0.key < key) }
    let end = entries.rank { key < $0.key }
    return start..<end
  }

  /// Calls `body` with the entries at `ranks`, ascending or descending, until it returns
  /// false.
  ///
  /// - Complexity: O(log *n* + *k*) for the *k* entries visited.
  func forEach(
    in ranks: Range<Int>, reversed: Bool = false, _ body: (Entry) throws -> Bool
  ) rethrows {
    try entries.forEach(in: ranks, reversed: reversed, body)
  }

  /// Stops the program if the index's layout is broken; O(*n*), for tests.
  func checkInvariants() { entries.checkInvariants() }
}
