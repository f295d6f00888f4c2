/// A sorted set of distinct elements, kept in chunks of at most ``chunkCapacity`` elements
/// (a two-level B-tree), with the chunks' counts in a Fenwick tree so that an element's rank
/// (its position in the order) is found in O(log *n*).
///
/// - Chunks hold between ``minimumChunkCount`` and ``chunkCapacity`` elements (the last
///   one may hold fewer), in order: every element of a chunk is less than
///   every element of the next. A chunk that grows past its capacity splits in halves; one
///   that shrinks under the minimum joins a neighbour.
/// - `maxima[c]` is the last element of chunk `c`, so finding an element's chunk is a binary
///   search of one small contiguous array, not a read of each chunk's storage.
/// - `counts` is a Fenwick (binary indexed) tree over the chunks' counts: the number of
///   elements before a chunk, and the chunk holding a given rank, cost O(log(*n* / *B*)).
///   A change within a chunk updates it in place; a split or a join rebuilds it, O(*n* / *B*),
///   once every *B* / 2 changes at most.
///
/// Elements compare with `<`; two elements neither of which is less than the other are the
/// same element. Ranks run from 0 (the least element) to ``count``.
struct SortedChunks<Element: Comparable> {
  private var chunks: [[Element]] = []
  private var maxima: [Element] = []
  /// The Fenwick tree of the chunks' counts: entry `i - 1` holds the sum of the counts of
  /// chunks `i - (i & -i) ..< i`.
  private var counts: [Int] = []
  /// The number of elements.
  private(set) var count = 0

  /// The most elements a chunk holds: an insertion moves half of that on average.
  static var chunkCapacity: Int { 256 }
  /// The fewest elements a chunk holds when there are others.
  static var minimumChunkCount: Int { 32 }
  /// The elements a chunk holds when built in bulk: room is left for insertions.
  static var bulkChunkCount: Int { 192 }

  /// An empty set.
  init() {}

  /// A set of `elements`, which must be sorted and distinct.
  ///
  /// - Complexity: O(*n*).
  init(sorted elements: [Element]) {
    assert(zip(elements, elements.dropFirst()).allSatisfy { $0 < $1 }, "sorted, distinct")
    var start = 0
    while start < elements.count {
      let end = min(start + Self.bulkChunkCount, elements.count)
      chunks.append(Array(elements[start..<end]))
      maxima.append(elements[end - 1])
      start = end
    }
    count = elements.count
    rebuildCounts()
  }

  var isEmpty: Bool { count == 0 }

  // MARK: Reading

  /// The element at `rank`.
  ///
  /// - Complexity: O(log(*n* / *B*)).
  subscript(rank: Int) -> Element {
    precondition(rank >= 0 && rank < count, "rank out of range")
    let (chunk, offset) = location(ofRank: rank)
    return chunks[chunk][offset]
  }

  /// The rank of the first element for which `isAtOrAfter` is true, or ``count`` if none:
  /// `isAtOrAfter` must be false for every element before some point and true from it on.
  ///
  /// - Complexity: O(log *n*) calls of `isAtOrAfter`.
  func rank(ofFirstWhere isAtOrAfter: (Element) -> Bool) -> Int {
    let chunk = Self.partitionPoint(of: maxima, isAtOrAfter)
    guard chunk < chunks.count else { return count }
    return elementsBefore(chunk: chunk) + Self.partitionPoint(of: chunks[chunk], isAtOrAfter)
  }

  /// Calls `body` with the elements at `ranks`, in ascending order or (`reversed`)
  /// descending, until it returns false.
  ///
  /// - Complexity: O(log(*n* / *B*) + *k*) for the *k* elements visited.
  func forEach(
    in ranks: Range<Int>, reversed: Bool = false, _ body: (Element) throws -> Bool
  ) rethrows {
    precondition(ranks.lowerBound >= 0 && ranks.upperBound <= count, "ranks out of range")
    guard !ranks.isEmpty else { return }
    if reversed {
      var (chunk, offset) = location(ofRank: ranks.upperBound - 1)
      var remaining = ranks.count
      while remaining > 0 {
        let chunkElements = chunks[chunk]
        let first = max(0, offset + 1 - remaining)
        for index in stride(from: offset, through: first, by: -1) {
          guard try body(chunkElements[index]) else { return }
        }
        remaining -= offset + 1 - first
        chunk -= 1
        if chunk >= 0 { offset = chunks[chunk].count - 1 }
      }
    } else {
      var (chunk, offset) = location(ofRank: ranks.lowerBound)
      var remaining = ranks.count
      while remaining > 0 {
        let chunkElements = chunks[chunk]
        let end = min(chunkElements.count, offset + remaining)
        for index in offset..<end {
          guard try body(chunkElements[index]) else { return }
        }
        remaining -= end - offset
        chunk += 1
        offset = 0
      }
    }
  }

  // MARK: Changing

  /// Inserts `element`; false (and nothing changes) if the set holds it already.
  ///
  /// - Complexity: O(log *n* + *B*), and O(*n* / *B*) once every *B* / 2 insertions at most
  ///   (a chunk splits).
  @discardableResult
  mutating func insert(_ element: Element) -> Bool {
    guard !chunks.isEmpty else {
      chunks = [[element]]
      maxima = [element]
      count = 1
      rebuildCounts()
      return true
    }
    let chunk = min(Self.partitionPoint(of: maxima) { !($0 < element) }, chunks.count - 1)
    let offset = Self.partitionPoint(of: chunks[chunk]) { !($0 < element) }
    if offset < chunks[chunk].count && !(element < chunks[chunk][offset]) { return false }
    chunks[chunk].insert(element, at: offset)
    if offset == chunks[chunk].count - 1 { maxima[chunk] = element }
    count += 1
    if chunks[chunk].count > Self.chunkCapacity {
      split(chunk)
      rebuildCounts()
    } else {
      addToCount(ofChunk: chunk, 1)
    }
    return true
  }

  /// Removes `element`; false (and nothing changes) if the set does not hold it.
  ///
  /// - Complexity: O(log *n* + *B*), and O(*n* / *B*) once every *B* / 2 removals at most
  ///   (a chunk joins a neighbour).
  @discardableResult
  mutating func remove(_ element: Element) -> Bool {
    let chunk = Self.partitionPoint(of: maxima) { !($0 < element) }
    guard chunk < chunks.count else { return false }
    let offset = Self.partitionPoint(of: chunks[chunk]) { !($0 < element) }
    guard offset < chunks[chunk].count, !(element < chunks[chunk][offset]) else { return false }
    chunks[chunk].remove(at: offset)
    count -= 1
    if chunks[chunk].isEmpty {
      chunks.remove(at: chunk)
      maxima.remove(at: chunk)
      rebuildCounts()
      return true
    }
    if offset == chunks[chunk].count { maxima[chunk] = chunks[chunk][offset - 1] }
    if chunks[chunk].count < Self.minimumChunkCount && chunks.count > 1 {
      joinWithNeighbour(chunk)
      rebuildCounts()
    } else {
      addToCount(ofChunk: chunk, -1)
    }
    return true
  }

  /// Splits a chunk over capacity into two halves.
  private mutating func split(_ chunk: Int) {
    let half = chunks[chunk].count / 2
    let upper = Array(chunks[chunk][half...])
    chunks[chunk].removeSubrange(half...)
    chunks.insert(upper, at: chunk + 1)
    maxima.insert(maxima[chunk], at: chunk + 1)
    maxima[chunk] = chunks[chunk][half - 1]
  }

  /// Moves the elements of a chunk under the minimum into a neighbour (splitting the result
  /// if it is over capacity).
  private mutating func joinWithNeighbour(_ chunk: Int) {
    let lower = chunk + 1 < chunks.count ? chunk : chunk - 1
    let upper = chunks.remove(at: lower + 1)
    chunks[lower].append(contentsOf: upper)
    maxima.remove(at: lower)
    if chunks[lower].count > Self.chunkCapacity { split(lower) }
  }

  // MARK: Ranks

  /// The chunk holding `rank` and the rank's offset in it; `rank` must be less than
  /// ``count``.
  private func location(ofRank rank: Int) -> (chunk: Int, offset: Int) {
    // Descends the Fenwick tree: the longest prefix of chunks holding at most `rank`
    // elements.
    var chunk = 0
    var remaining = rank
    var step = 1
    while step * 2 <= counts.count { step *= 2 }
    while step > 0 {
      if chunk + step <= counts.count && counts[chunk + step - 1] <= remaining {
        chunk += step
        remaining -= counts[chunk - 1]
      }
      step /= 2
    }
    return (chunk, remaining)
  }

  /// The number of elements in the chunks before `chunk`.
  private func elementsBefore(chunk: Int) -> Int {
    var sum = 0
    var node = chunk
    while node > 0 {
      sum += counts[node - 1]
      node &= node - 1
    }
    return sum
  }

  private mutating func addToCount(ofChunk chunk: Int, _ delta: Int) {
    var node = chunk + 1
    while node <= counts.count {
      counts[node - 1] += delta
      node += node & -node
    }
  }

  private mutating func rebuildCounts() {
    counts = chunks.map(\.count)
    guard !counts.isEmpty else { return }
    for node in 1...counts.count {
      let parent = node + (node & -node)
      if parent <= counts.count { counts[parent - 1] += counts[node - 1] }
    }
  }

  /// The first index of `elements` (sorted) at which `isAtOrAfter` holds, or its count.
  private static func partitionPoint(
    of elements: [Element], _ isAtOrAfter: (Element) -> Bool
  ) -> Int {
    var low = 0
    var high = elements.count
    while low < high {
      let middle = (low + high) / 2
      if isAtOrAfter(elements[middle]) { high = middle } else { low = middle + 1 }
    }
    return low
  }

  // MARK: Checks

  /// Stops the program if an invariant of the layout does not hold: chunks sorted and
  /// bounded, maxima their last elements, counts their counts. O(*n*); for tests.
  func checkInvariants() {
    precondition(chunks.count == maxima.count && chunks.count == counts.count, "parallel arrays")
    var previous: Element?
    var total = 0
    for (index, chunk) in chunks.enumerated() {
      precondition(!chunk.isEmpty && chunk.count <= Self.chunkCapacity, "chunk size")
      precondition(
        index == chunks.count - 1 || chunk.count >= Self.minimumChunkCount,
        "chunk under the minimum")
      for element in chunk {
        if let previous { precondition(previous < element, "elements in order") }
        previous = element
      }
      precondition(!(maxima[index] < chunk.last!) && !(chunk.last! < maxima[index]), "maximum")
      precondition(elementsBefore(chunk: index) == total, "counts")
      total += chunk.count
    }
    precondition(total == count, "count")
  }
}
