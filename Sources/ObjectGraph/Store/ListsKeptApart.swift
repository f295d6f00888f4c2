/// The long lists of stored objects that changesets edit, kept apart from the objects'
/// values in chunks, for storage that applies changesets (``InMemoryObjects``, ``LiveGraph``).
///
/// Kept in an object's values, a list is a flat array: each edit of a list of 100,000
/// shifts its tail (400 KB on average), so replaying a file that holds 3,000 saved edits of
/// one such list moved gigabytes. A list longer than ``ChunkedList/maximumChunkCount``
/// moves apart when an edit first reaches it, into a ``ChunkedList`` that shifts at most a
/// chunk per edit; its slot in the object's values then holds `.null`, and the list kept
/// apart answers for it until the property's whole value is set, the object goes, or the
/// storage joins it back.
///
/// Invariant (the storage's to keep, checked there in debug builds): a list kept apart
/// belongs to a stored object whose slot for it holds `.null`.
struct ListsKeptApart {
  /// A list property of an object.
  struct Key: Hashable {
    var id: ObjectID
    var property: Int
  }

  /// One flat dictionary, edited through its `values` view: a write through a nested
  /// dictionary's optional subscript allocated coroutine frames.
  private var lists: [Key: ChunkedList<ObjectID>] = [:]

  var isEmpty: Bool { lists.isEmpty }

  /// The list kept apart for `key`, whose slot holds `stored`: only a `.null` slot stands
  /// for one.
  func list(_ key: Key, slot stored: PersistentValue) -> ChunkedList<ObjectID>? {
    guard !lists.isEmpty, case .null = stored else { return nil }
    return lists[key]
  }

  /// The value `key`'s slot, holding `stored`, stands for: its list kept apart, joined, or
  /// `stored` itself.
  ///
  /// - Complexity: O(*m*) for a list of *m* kept apart; O(1) otherwise.
  func value(_ key: Key, slot stored: PersistentValue) -> PersistentValue {
    list(key, slot: stored).map { .references($0.elements) } ?? stored
  }

  /// Replaces each `.null` slot of object `id`'s `values` that stands for a list kept
  /// apart with that list, joined: the object as a whole read makes it.
  ///
  /// - Complexity: O(*p*) in the values, plus O(*m*) for each list of *m* kept apart.
  func join(into values: inout [PersistentValue], of id: ObjectID) {
    guard !lists.isEmpty else { return }
    for property in values.indices {
      values[property] = value(Key(id: id, property: property), slot: values[property])
    }
  }

  /// The number of objects of the list `key`'s slot, holding `stored`, stands for (`nil`
  /// when it holds no list).
  func listCount(_ key: Key, slot stored: PersistentValue) -> Int? {
    list(key, slot: stored)?.count ?? stored.listCount
  }

  /// Forgets the list kept apart for `key`, if any: its slot is about to be set whole, or
  /// its object removed.
  mutating func forget(_ key: Key) {
    guard !lists.isEmpty else { return }
    lists[key] = nil
  }

  /// Forgets every list kept apart of object `id` among `values` (its `.null` slots).
  mutating func forgetLists(of id: ObjectID, in values: some Collection<PersistentValue>) {
    guard !lists.isEmpty else { return }
    for (property, value) in values.enumerated() {
      if case .null = value { lists[Key(id: id, property: property)] = nil }
    }
  }

  /// What ``edit(_:slot:_:)`` did.
  enum EditOutcome {
    /// The list kept apart was edited.
    case edited
    /// The slot's long list moved apart and was edited there: the slot must now hold
    /// `.null`.
    case movedApart
    /// The slot holds a short list (or `.null` for an empty one), which the caller edits in
    /// place.
    case leftInPlace
  }

  /// Applies `edits`, already checked to fit, to the list of `key`, whose slot holds
  /// `stored`: in its chunks when it is kept apart, after moving it apart when it is long.
  ///
  /// - Complexity: O(*e* × (*m* / ``ChunkedList/maximumChunkCount`` +
  ///   ``ChunkedList/maximumChunkCount``)) for *e* edits of a list of *m* kept apart; the
  ///   first edit of a long list also copies it once into chunks.
  mutating func edit(_ key: Key, slot stored: PersistentValue, _ edits: [ListEdit])
    -> EditOutcome
  {
    let outcome: EditOutcome
    let index: Dictionary<Key, ChunkedList<ObjectID>>.Index
    if case .null = stored, let kept = lists.index(forKey: key) {
      index = kept
      outcome = .edited
    } else {
      guard case .references(let ids) = stored, ids.count > ChunkedList<ObjectID>.maximumChunkCount
      else { return .leftInPlace }
      lists[key] = ChunkedList(ids)
      index = lists.index(forKey: key)!
      outcome = .movedApart
    }
    try! lists.values[index].applyEdits(edits)  // checked to fit by the applier
    return outcome
  }

  /// Removes every list kept apart, handing each to `body` with its key, joined.
  mutating func joinAll(_ body: (Key, [ObjectID]) -> Void) {
    for (key, list) in lists { body(key, list.elements) }
    lists = [:]
  }
}
