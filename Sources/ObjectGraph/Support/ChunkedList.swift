/// An ordered list kept as a run of chunks (arrays of at most ``maximumChunkCount``
/// elements), so that inserting, removing or moving one element shifts one chunk, not every
/// element after it.
///
/// A store keeps the objects of each ordered to-many relationship to count references;
/// in a flat array, an insert or a remove in a list of 100,000 moved 400 KB on average, a
/// third of what a durable drag cost beyond its sync. Here it moves at most
/// ``maximumChunkCount`` elements and walks the chunk counts to find the place.
///
/// A list of at most the maximum is a plain array, edited as one. A list made from an
/// array shares the array's storage (a loaded list costs nothing until it is edited); the
/// first edit of a list longer than the maximum splits it into chunks of half the maximum. A chunk left with fewer than a quarter of the
/// maximum is joined to a neighbour when both fit in one, and an empty one is dropped. The
/// elements' order is the chunks' order; `debugCheckInvariants()` checks, in debug builds,
/// that no chunk is empty, that ``count`` is their sum, and that each chunk's count is kept
/// beside it.
struct ChunkedList<Element>: Sequence {
  /// The most elements an edited chunk holds.
  static var maximumChunkCount: Int { 512 }

  /// The elements while the list is one chunk (no more than the maximum, or loaded and not
  /// edited since): a list of the usual size costs what an array does.
  private var flat: [Element]
  /// The chunks, once a long list is edited; nil while the list is ``flat``.
  private var chunks: [[Element]]?
  /// The number of elements of each chunk, side by side: finding an index walks these
  /// (contiguous) instead of reading each chunk's header (a cache miss a chunk; about 2 µs of
  /// a durable move in a list of 100,000).
  private var chunkCounts: [Int] = []
  /// The number of elements.
  private(set) var count: Int

  /// An empty list.
  init() {
    self.init([])
  }

  /// A list of `elements`, sharing their storage.
  init(_ elements: [Element]) {
    flat = elements
    chunks = nil
    count = elements.count
  }

  var isEmpty: Bool { count == 0 }

  /// The elements, in order.
  ///
  /// - Complexity: O(1) for a flat list; O(*n*) once chunked.
  var elements: [Element] { chunks.map { Array($0.joined()) } ?? flat }

  /// Iterates the elements in order, flat or chunked.
  struct Iterator: IteratorProtocol {
    fileprivate var flat: IndexingIterator<[Element]>
    fileprivate var chunked: FlattenSequence<[[Element]]>.Iterator?

    mutating func next() -> Element? { chunked != nil ? chunked!.next() : flat.next() }
  }

  func makeIterator() -> Iterator {
    Iterator(flat: flat.makeIterator(), chunked: chunks?.joined().makeIterator())
  }

  /// The element at `index`.
  ///
  /// - Complexity: O(*n* / ``maximumChunkCount``).
  subscript(index: Int) -> Element {
    get {
      guard let chunks else { return flat[index] }
      let (chunk, offset) = place(of: index)
      return chunks[chunk][offset]
    }
    set {
      guard chunks != nil else {
        flat[index] = newValue
        return
      }
      let (chunk, offset) = place(of: index)
      chunks![chunk][offset] = newValue
    }
  }

  /// Exchanges the elements at `first` and `second`.
  ///
  /// - Complexity: O(*n* / ``maximumChunkCount``).
  mutating func swapAt(_ first: Int, _ second: Int) {
    guard first != second else { return }
    let element = self[first]
    self[first] = self[second]
    self[second] = element
  }

  /// Inserts `element` so that it ends up at `index` (`0...count`).
  ///
  /// - Complexity: O(*n* / ``maximumChunkCount`` + ``maximumChunkCount``), once a long
  ///   loaded list is split.
  mutating func insert(_ element: Element, at index: Int) {
    precondition(index >= 0 && index <= count, "ChunkedList: insert at \(index) of \(count)")
    count += 1
    if chunks == nil {
      if flat.count < Self.maximumChunkCount {
        flat.insert(element, at: index)
        return
      }
      makeChunked()
    }
    // The end of the list belongs to the last chunk.
    var (chunk, offset) =
      index == count - 1
      ? (chunkCounts.count - 1, chunkCounts[chunkCounts.count - 1])
      : place(of: index)
    if chunkCounts[chunk] >= Self.maximumChunkCount {
      (chunk, offset) = split(chunk, keeping: offset)
    }
    chunks![chunk].insert(element, at: offset)
    chunkCounts[chunk] += 1
    debugCheckInvariants()
  }

  /// Removes and returns the element at `index`.
  ///
  /// - Complexity: As ``insert(_:at:)``.
  @discardableResult
  mutating func remove(at index: Int) -> Element {
    precondition(index >= 0 && index < count, "ChunkedList: remove at \(index) of \(count)")
    count -= 1
    if chunks == nil {
      if flat.count <= Self.maximumChunkCount { return flat.remove(at: index) }
      makeChunked()
    }
    var (chunk, offset) = place(of: index)
    if chunkCounts[chunk] > Self.maximumChunkCount {
      (chunk, offset) = split(chunk, keeping: offset)
    }
    let element = chunks![chunk].remove(at: offset)
    chunkCounts[chunk] -= 1
    joinIfSmall(chunk)
    // An emptied list is flat again.
    if count == 0 {
      chunks = nil
      chunkCounts = []
    }
    debugCheckInvariants()
    return element
  }

  /// Moves the element at `from` to `to` (`Array` semantics: removed, then inserted there).
  ///
  /// - Complexity: As ``insert(_:at:)``; one rotation of the elements between for a flat
  ///   list.
  mutating func moveElement(from: Int, to: Int) {
    precondition(
      from >= 0 && from < count && to >= 0 && to < count,
      "ChunkedList: move from \(from) to \(to) of \(count)")
    guard from != to else { return }
    if chunks == nil, flat.count <= Self.maximumChunkCount {
      flat.moveElement(from: from, to: to)
      return
    }
    insert(remove(at: from), at: to)
  }

  /// Makes the flat list its first chunk, to be split by the edit that follows.
  private mutating func makeChunked() {
    chunks = [flat]
    chunkCounts = [flat.count]
    flat = []
  }

  /// The chunk and offset of `index` (`0..<count`), once chunked.
  private func place(of index: Int) -> (chunk: Int, offset: Int) {
    chunkCounts.withUnsafeBufferPointer { counts in
      var offset = index
      for chunk in counts.indices {
        let length = counts[chunk]
        if offset < length { return (chunk, offset) }
        offset -= length
      }
      preconditionFailure("ChunkedList: index \(index) of \(count)")
    }
  }

  /// Splits chunk `chunk` into chunks of half the maximum; returns where `offset` in it
  /// now is.
  private mutating func split(_ chunk: Int, keeping offset: Int) -> (chunk: Int, offset: Int) {
    let half = Self.maximumChunkCount / 2
    let whole = chunks![chunk]
    let pieces = stride(from: 0, to: whole.count, by: half).map {
      Array(whole[$0..<Swift.min($0 + half, whole.count)])
    }
    chunks!.replaceSubrange(chunk...chunk, with: pieces)
    chunkCounts.replaceSubrange(chunk...chunk, with: pieces.map(\.count))
    // An offset at the very end belongs to the last piece.
    let piece = Swift.min(offset / half, pieces.count - 1)
    return (chunk + piece, offset - piece * half)
  }

  /// Joins chunk `chunk` to a neighbour when it has fallen under a quarter of the maximum
  /// and both fit in one, and drops it when it is empty.
  private mutating func joinIfSmall(_ chunk: Int) {
    let length = chunkCounts[chunk]
    guard length < Self.maximumChunkCount / 4 else { return }
    if length == 0 {
      chunks!.remove(at: chunk)
      chunkCounts.remove(at: chunk)
      return
    }
    for neighbour in [chunk - 1, chunk + 1] where chunkCounts.indices.contains(neighbour) {
      guard chunkCounts[neighbour] + length <= Self.maximumChunkCount else { continue }
      let (first, second) = (Swift.min(chunk, neighbour), Swift.max(chunk, neighbour))
      chunks![first] += chunks![second]
      chunks!.remove(at: second)
      chunkCounts[first] += chunkCounts[second]
      chunkCounts.remove(at: second)
      return
    }
  }

  /// Checks, in debug builds, that the chunks hold ``count`` elements and none is empty.
  private func debugCheckInvariants() {
    #if DEBUG
      guard let chunks else { return assert(flat.count == count, "ChunkedList: count drifted") }
      assert(chunks.reduce(0) { $0 + $1.count } == count, "ChunkedList: count drifted")
      assert(!chunks.contains { $0.isEmpty }, "ChunkedList: an empty chunk was kept")
      assert(chunks.map(\.count) == chunkCounts, "ChunkedList: a chunk's count drifted")
    #endif
  }
}

extension ChunkedList: Sendable where Element: Sendable {}

extension ChunkedList: ListEditTarget where Element == ObjectID {}
