/// A three-way merge of an ordered list that two sides changed from one base: what a merge
/// policy makes of an ordered to-many relationship edited in two contexts.
///
/// The rules, in the words of the list's user:
/// - both sides' inserts are kept;
/// - both sides' removals are kept;
/// - an element one side moved goes where that side put it: after the element that
///   precedes it on that side (at the front when none does);
/// - a move of an element the other side removed is dropped;
/// - an element both sides moved goes where ours put it when `oursWinMoves` (we save later:
///   the later save wins), where theirs did otherwise.
///
/// An element counts as moved on a side when it is not in the longest run of elements that
/// side kept in their base order (the fewest moves that explain the side's order); where
/// two explanations move as few, ours is taken to move the elements theirs moved too.
///
/// - Complexity: O(*n* log *n*) in the length of the lists.
enum ListMerge {
  static func merge<Element: Hashable>(
    base: [Element], theirs: [Element], ours: [Element], oursWinMoves: Bool
  ) -> [Element] {
    let inBase = Set(base)
    let inOurs = Set(ours)
    let inTheirs = Set(theirs)
    let theirMoved = moved(in: theirs, from: base)
    let ourMoved = moved(in: ours, from: base, preferring: theirMoved)
    // What ours places: its inserts, and its moves that theirs did not override.
    var placed = Set<Element>()
    for element in ours {
      let isInserted = !inBase.contains(element)
      let isMoved = ourMoved.contains(element) && (oursWinMoves || !theirMoved.contains(element))
      // A move of an element theirs removed is dropped; an insert is kept.
      if isInserted || (isMoved && inTheirs.contains(element)) { placed.insert(element) }
    }
    // Theirs, less what ours removed and what ours places.
    let kept = theirs.filter { element in
      !placed.contains(element) && (inOurs.contains(element) || !inBase.contains(element))
    }
    // Each placed element goes after its nearest predecessor in ours that the result holds.
    let inKept = Set(kept)
    var front: [Element] = []
    var after: [Element: [Element]] = [:]
    var anchor: Element?
    for element in ours {
      if placed.contains(element) {
        if let anchor { after[anchor, default: []].append(element) } else { front.append(element) }
        anchor = element
      } else if inKept.contains(element) {
        anchor = element
      }
    }
    var result: [Element] = []
    result.reserveCapacity(kept.count + placed.count)
    func emit(_ element: Element) {
      // Iterative: a chain of placed elements each after the last could be long.
      var stack = [element]
      while let next = stack.popLast() {
        result.append(next)
        stack.append(contentsOf: (after[next] ?? []).reversed())
      }
    }
    for element in front { emit(element) }
    for element in kept { emit(element) }
    return result
  }

  /// The elements of `list` that are in `base` but outside the longest subsequence of them
  /// that keeps their order in `base`; among the longest, the one that keeps most elements
  /// not in `favored` (so that of two ways to explain a swap with one move, the move is put
  /// on the element the other side moved too).
  ///
  /// - Complexity: O(*n* log *n*): a Fenwick tree over base positions keeps the best run
  ///   ending below each position.
  static func moved<Element: Hashable>(
    in list: [Element], from base: [Element], preferring favored: Set<Element> = []
  ) -> Set<Element> {
    var position: [Element: Int] = [:]
    position.reserveCapacity(base.count)
    for (index, element) in base.enumerated() { position[element] = index }
    let common = list.filter { position[$0] != nil }
    // A run's score counts its elements first, then those not favored.
    let unit = common.count + 1
    var tree = [(score: Int, end: Int)](repeating: (0, -1), count: base.count + 1)
    var links = [Int](repeating: -1, count: common.count)
    var best = (score: 0, end: -1)
    for (index, element) in common.enumerated() {
      let slot = position[element]! + 1
      // The best run ending at a base position below this one.
      var before = (score: 0, end: -1)
      var node = slot - 1
      while node > 0 {
        if tree[node].score > before.score { before = tree[node] }
        node -= node & -node
      }
      let score = before.score + unit + (favored.contains(element) ? 0 : 1)
      links[index] = before.end
      if score > best.score { best = (score, index) }
      node = slot
      while node < tree.count {
        if score > tree[node].score { tree[node] = (score, index) }
        node += node & -node
      }
    }
    var inOrder = Set<Int>()
    var next = best.end
    while next >= 0 {
      inOrder.insert(next)
      next = links[next]
    }
    var moved = Set<Element>()
    for (index, element) in common.enumerated() where !inOrder.contains(index) {
      moved.insert(element)
    }
    return moved
  }
}
