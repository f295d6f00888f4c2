import Foundation

/// How an ordered list of objects changed between two deliveries: a relationship's objects
/// or a live query's results.
///
/// Applying it to the old list gives the new list exactly: remove the objects at
/// ``removed`` and at every move's `from` (old indexes), then insert the new objects at
/// ``inserted`` and every move's `to` (new indexes), in ascending order. ``updated`` lists the
/// new indexes of objects that stayed and whose own properties changed.
///
/// ```swift
/// context.observe(box, relationship: \.children) { change in
///   tableView.performBatchUpdates {
///     tableView.deleteRows(at: change.removed, ...)
///     tableView.insertRows(at: change.inserted, ...)
///   }
/// }
/// ```
public struct ListChange: Hashable, Sendable {
  /// One object that stayed but changed place.
  public struct Move: Hashable, Sendable {
    /// Its index in the old list.
    public var from: Int
    /// Its index in the new list.
    public var to: Int
  }

  /// Indexes in the old list of objects no longer in the list.
  public var removed: IndexSet
  /// Indexes in the new list of objects that were not in the list.
  public var inserted: IndexSet
  /// Objects that stayed but changed place relative to the others.
  public var moved: [Move]
  /// Indexes in the new list of objects that stayed and whose properties changed.
  public var updated: IndexSet

  /// Creates a list change.
  public init(
    removed: IndexSet = [], inserted: IndexSet = [], moved: [Move] = [], updated: IndexSet = []
  ) {
    self.removed = removed
    self.inserted = inserted
    self.moved = moved
    self.updated = updated
  }

  /// Whether nothing changed.
  public var isEmpty: Bool {
    removed.isEmpty && inserted.isEmpty && moved.isEmpty && updated.isEmpty
  }

  /// Applies the change to the old list, taking new elements from `new`.
  ///
  /// - Complexity: O(*n* + *k* log *k*).
  public func apply<Element>(to old: [Element], takingInsertionsFrom new: [Element]) -> [Element] {
    var result = old
    let removals = removed.union(IndexSet(moved.map(\.from)))
    for index in removals.reversed() { result.remove(at: index) }
    let insertions = inserted.union(IndexSet(moved.map(\.to)))
    for index in insertions { result.insert(new[index], at: index) }
    return result
  }
}

extension ListChange {
  /// The change from the list of identities `old` to the list of distinct objects `new`,
  /// `updated` being the indexes in `new` of objects whose own properties changed; `old`
  /// becomes the
  /// identities of `new`. The lists' common prefix and suffix stay, and the middles are
  /// compared by ``between(_:_:updated:)-(ObjectIdentifier)``, with its indexes shifted by
  /// the prefix. `unchanged` gives how many objects at each end are known to be the same
  /// (``UnchangedEnds``): the comparison starts after them.
  ///
  /// - Complexity: O(*n*) to read both lists (no allocation but the middle's), less what
  ///   `unchanged` covers, O(*m* log *m*) for a middle of *m* objects.
  static func between(
    _ old: inout [ObjectIdentifier], _ new: [ManagedObject], updated: IndexSet = [],
    unchanged: (prefix: Int, suffix: Int) = (0, 0)
  ) -> ListChange {
    let (prefix, suffix) = commonEnds(old, new, atLeast: unchanged)
    assert(
      old.count > 1_000 || (prefix, suffix) == commonEnds(old, new),
      "the unchanged ends noted by list writes are not those of the lists")
    let middle = prefix..<(new.count - suffix)
    let oldMiddle = Array(old[prefix..<(old.count - suffix)])
    let newMiddle = new[middle].map(ObjectIdentifier.init)
    // Updated objects in the middle are the inner comparison's; those at the unchanged ends
    // keep their index.
    var inMiddle = Set<ObjectIdentifier>()
    var atEnds = IndexSet()
    for index in updated {
      if middle.contains(index) {
        inMiddle.insert(ObjectIdentifier(new[index]))
      } else {
        atEnds.insert(index)
      }
    }
    var change = between(oldMiddle, newMiddle, updated: inMiddle)
    if prefix > 0 {
      change.removed.shift(startingAt: 0, by: prefix)
      change.inserted.shift(startingAt: 0, by: prefix)
      change.updated.shift(startingAt: 0, by: prefix)
      change.moved = change.moved.map { Move(from: $0.from + prefix, to: $0.to + prefix) }
    }
    change.updated.formUnion(atEnds)
    old.replaceSubrange(prefix..<(old.count - suffix), with: newMiddle)
    return change
  }

  /// The change one edit made, from the list of identities `old` to the list of objects
  /// `new`, `updated` being the indexes in `new` of objects whose own properties changed;
  /// `old` becomes the identities of `new`. Nil when the edit does not turn `old` into `new`
  /// (the caller compares the lists instead).
  ///
  /// The same change ``between(_:_:updated:unchanged:)`` finds, without comparing the
  /// lists: a move of one object past at least one other keeps every other object in place
  /// (the only longest increasing run); a move by one place exchanges two neighbours, which
  /// the comparison reports as the later of the two in the old list moving down.
  ///
  /// - Complexity: O(1) besides the shift of `old` (the array's own work).
  static func made(
    by edit: ListEditRecord, _ old: inout [ObjectIdentifier], _ new: [ManagedObject],
    updated: IndexSet
  ) -> ListChange? {
    var change = ListChange(updated: updated)
    switch edit {
    case .insert(let object, let position):
      guard new.count == old.count + 1, new.indices.contains(position), new[position] === object
      else { return nil }
      change.inserted.insert(position)
      change.updated.remove(position)
      old.insert(ObjectIdentifier(object), at: position)
    case .remove(let object, let position):
      guard new.count == old.count - 1, old.indices.contains(position),
        old[position] == ObjectIdentifier(object)
      else { return nil }
      change.removed.insert(position)
      old.remove(at: position)
    case .move(let from, let to):
      guard new.count == old.count, old.indices.contains(from), new.indices.contains(to),
        old[from] == ObjectIdentifier(new[to])
      else { return nil }
      if from == to { return change }
      change.moved.append(
        abs(from - to) == 1
          ? Move(from: max(from, to), to: min(from, to)) : Move(from: from, to: to))
      old.moveElement(from: from, to: to)
    }
    return change
  }

  /// The change an exchange of the objects at `low` and `high` made (`swapAt`, written as
  /// two moves), as ``made(by:_:_:updated:)`` gives one edit's; nil when it does not turn
  /// `old` into `new`.
  ///
  /// What the comparison finds: the objects between the two stay in order, so with two or
  /// more of them both exchanged objects moved; with one, the run keeps the object that came
  /// up from `high` and reports the one between moving in place; neighbours are a move by
  /// one place.
  ///
  /// - Complexity: O(1).
  static func made(
    byExchanging low: Int, _ high: Int, _ old: inout [ObjectIdentifier], _ new: [ManagedObject],
    updated: IndexSet
  ) -> ListChange? {
    guard low < high, new.count == old.count, high < old.count,
      old[low] == ObjectIdentifier(new[high]), old[high] == ObjectIdentifier(new[low])
    else { return nil }
    var change = ListChange(updated: updated)
    switch high - low {
    case 1: change.moved = [Move(from: high, to: low)]
    case 2: change.moved = [Move(from: high, to: low), Move(from: low + 1, to: low + 1)]
    default: change.moved = [Move(from: high, to: low), Move(from: low, to: high)]
    }
    old.swapAt(low, high)
    return change
  }

  /// The change from `old` to `new`, lists of distinct identities, with the fewest moves:
  /// the objects that stay put form a longest increasing run of old positions.
  ///
  /// One hash of each old identity (a table of old positions, from which each new identity
  /// takes its own: those left are the removed), then the run over plain integers, marked in
  /// an array of flags.
  ///
  /// - Complexity: O(*n* log *n*).
  static func between(
    _ old: [ObjectIdentifier], _ new: [ObjectIdentifier], updated: Set<ObjectIdentifier> = []
  ) -> ListChange {
    var oldPositions: [ObjectIdentifier: Int] = [:]
    oldPositions.reserveCapacity(old.count)
    for (index, id) in old.enumerated() { oldPositions[id] = index }
    var change = ListChange()
    // Old positions of the objects that stayed, in new order, and their new positions.
    var stayedOld: [Int] = []
    var stayedNew: [Int] = []
    stayedOld.reserveCapacity(min(old.count, new.count))
    stayedNew.reserveCapacity(min(old.count, new.count))
    for (index, id) in new.enumerated() {
      if let oldIndex = oldPositions.removeValue(forKey: id) {
        stayedOld.append(oldIndex)
        stayedNew.append(index)
        if !updated.isEmpty && updated.contains(id) { change.updated.insert(index) }
      } else {
        change.inserted.insert(index)
      }
    }
    for oldIndex in oldPositions.values { change.removed.insert(oldIndex) }
    let kept = longestIncreasingRun(stayedOld)
    for position in stayedOld.indices where !kept[position] {
      change.moved.append(Move(from: stayedOld[position], to: stayedNew[position]))
    }
    return change
  }

  /// Which of `values` (by position) form a longest strictly increasing subsequence.
  private static func longestIncreasingRun(_ values: [Int]) -> [Bool] {
    var tails: [Int] = []  // positions of the smallest tail of each length
    var previous = [Int](repeating: -1, count: values.count)
    for (position, value) in values.enumerated() {
      // A value above every tail extends the longest run: what the search below finds, at
      // once (the usual case: most objects stay in order).
      var low = tails.count
      if let last = tails.last, values[last] >= value {
        low = 0
        var high = tails.count
        while low < high {
          let middle = (low + high) / 2
          if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
        }
      }
      if low > 0 { previous[position] = tails[low - 1] }
      if low == tails.count { tails.append(position) } else { tails[low] = position }
    }
    var kept = [Bool](repeating: false, count: values.count)
    var position = tails.last ?? -1
    while position >= 0 {
      kept[position] = true
      position = previous[position]
    }
    return kept
  }
}
