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
/// Each distinct element is hashed once, into a dense number; everything after works on
/// arrays indexed by those numbers.
///
/// - Complexity: O(*n* log *n*) in the length of the lists.
enum ListMerge {
  static func merge<Element: Hashable>(
    base: [Element], theirs: [Element], ours: [Element], oursWinMoves: Bool
  ) -> [Element] {
    merge(base: base, theirs: theirs, ours: ours, oursWinMoves: oursWinMoves) { $0 }
  }

  /// ``merge(base:theirs:ours:oursWinMoves:)`` for elements told apart by `key` (model
  /// objects by their identity: no element is retained to be numbered).
  static func merge<Element, Key: Hashable>(
    base baseElements: [Element], theirs theirElements: [Element], ours ourElements: [Element],
    oursWinMoves: Bool, key: (Element) -> Key
  ) -> [Element] {
    let lists = [baseElements, theirElements, ourElements]
    var numbering = Numbering<Key>(
      capacity: baseElements.count + theirElements.count / 8 + ourElements.count / 8)
    let base = baseElements.indices.map { numbering.number(of: key(baseElements[$0]), 0, $0) }
    let theirs = theirElements.indices.map {
      numbering.number(of: key(theirElements[$0]), 1, $0)
    }
    let ours = ourElements.indices.map { numbering.number(of: key(ourElements[$0]), 2, $0) }
    let count = numbering.count
    let inBase = membership(base, count)
    let inOurs = membership(ours, count)
    let inTheirs = membership(theirs, count)
    var basePosition = [Int](repeating: -1, count: count)
    for (index, element) in base.enumerated() { basePosition[element] = index }
    let theirMoved = moved(theirs, basePosition, preferring: nil)
    let ourMoved = moved(ours, basePosition, preferring: theirMoved)
    // What ours places: its inserts, and its moves that theirs did not override.
    var placed = [Bool](repeating: false, count: count)
    for element in ours {
      let isInserted = !inBase[element]
      let isMoved = ourMoved[element] && (oursWinMoves || !theirMoved[element])
      // A move of an element theirs removed is dropped; an insert is kept.
      if isInserted || (isMoved && inTheirs[element]) { placed[element] = true }
    }
    // Theirs, less what ours removed and what ours places.
    var isKept = [Bool](repeating: false, count: count)
    let kept = theirs.filter { element in
      let keeps = !placed[element] && (inOurs[element] || !inBase[element])
      isKept[element] = keeps
      return keeps
    }
    // Each placed element goes after its nearest predecessor in ours that the result holds.
    var front: [Int] = []
    var after: [Int: [Int]] = [:]
    var anchor: Int?
    for element in ours {
      if placed[element] {
        if let anchor { after[anchor, default: []].append(element) } else { front.append(element) }
        anchor = element
      } else if isKept[element] {
        anchor = element
      }
    }
    var result: [Element] = []
    result.reserveCapacity(kept.count + front.count + after.count)
    func emit(_ element: Int) {
      // Iterative: a chain of placed elements each after the last could be long.
      var stack = [element]
      while let next = stack.popLast() {
        let (list, index) = numbering.place(of: next)
        result.append(lists[list][index])
        if let following = after[next] { stack.append(contentsOf: following.reversed()) }
      }
    }
    for element in front { emit(element) }
    for element in kept { emit(element) }
    return result
  }

  /// Dense numbers for distinct elements (by key), in order of first sight, and where each
  /// was first seen: which list, at which index.
  private struct Numbering<Key: Hashable> {
    private var numbers: [Key: Int]
    private var places: [(list: Int, index: Int)] = []

    init(capacity: Int) {
      numbers = Dictionary(minimumCapacity: capacity)
      places.reserveCapacity(capacity)
    }

    var count: Int { places.count }

    mutating func number(of key: Key, _ list: Int, _ index: Int) -> Int {
      if let number = numbers[key] { return number }
      numbers[key] = places.count
      places.append((list, index))
      return places.count - 1
    }

    func place(of number: Int) -> (list: Int, index: Int) { places[number] }
  }

  /// Whether each of `count` numbered elements is in `list`.
  private static func membership(_ list: [Int], _ count: Int) -> [Bool] {
    var isIn = [Bool](repeating: false, count: count)
    for element in list { isIn[element] = true }
    return isIn
  }

  /// Whether each numbered element is in `list` and in base (`basePosition` ≥ 0) but outside
  /// the longest subsequence of them that keeps their order in base; among the longest, the
  /// one that keeps most elements not `favored` (so that of two ways to explain a swap with
  /// one move, the move is put on the element the other side moved too).
  ///
  /// - Complexity: O(*n* log *n*): a Fenwick tree over base positions keeps the best run
  ///   ending below each position.
  private static func moved(_ list: [Int], _ basePosition: [Int], preferring favored: [Bool]?)
    -> [Bool]
  {
    let common = list.filter { basePosition[$0] >= 0 }
    // A run's score counts its elements first, then those not favored.
    let unit = common.count + 1
    let baseCount = basePosition.lazy.filter { $0 >= 0 }.count
    var tree = [(score: Int, end: Int)](repeating: (0, -1), count: baseCount + 1)
    var links = [Int](repeating: -1, count: common.count)
    var best = (score: 0, end: -1)
    for (index, element) in common.enumerated() {
      let slot = basePosition[element] + 1
      // The best run ending at a base position below this one.
      var before = (score: 0, end: -1)
      var node = slot - 1
      while node > 0 {
        if tree[node].score > before.score { before = tree[node] }
        node -= node & -node
      }
      let score = before.score + unit + (favored?[element] == true ? 0 : 1)
      links[index] = before.end
      if score > best.score { best = (score, index) }
      node = slot
      while node < tree.count {
        if score > tree[node].score { tree[node] = (score, index) }
        node += node & -node
      }
    }
    var isMoved = [Bool](repeating: false, count: basePosition.count)
    for element in common { isMoved[element] = true }
    var next = best.end
    while next >= 0 {
      isMoved[common[next]] = false
      next = links[next]
    }
    return isMoved
  }
}
