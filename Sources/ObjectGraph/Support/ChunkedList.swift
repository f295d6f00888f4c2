/// An ordered list kept as a run of chunks (arrays of at most ``maximumChunkCount``
/// elements), so that inserting, removing or moving one element shifts one chunk, not every
/// element after it.
///
/// A store keeps the objects of each ordered to-many relationship to count references;
/// in a flat array, an insert or a remove in a list of 100,000 moved 400 KB on average, a
/// third of what a durable drag cost beyond its sync. Here it moves at most
/// ``maximumChunkCount`` elements and walks the chunk counts to find the place.
///
/// A list made from an array is one chunk that shares the array's storage (a loaded list
/// costs nothing until it is edited); the first edit of a chunk longer than the maximum
/// splits it into halves of the maximum. A chunk left with fewer than a quarter of the
/// maximum is joined to a neighbour when both fit in one, and an empty one is dropped. The
/// elements' order is the chunks' order; `debugCheckInvariants()` checks, in debug builds,
/// that no chunk is empty and that ``count`` is their sum.
struct ChunkedList<Element>: Sequence {
  /// The most elements an edited chunk holds.
  static var maximumChunkCount: Int { 512 }

  private var chunks: [[Element]]
  /// The number of elements.
  private(set) var count: Int

  /// An empty list.
  init() {
    chunks = []
    count = 0
  }

  /// A list of `elements`, sharing their storage.
  init(_ elements: [Element]) {
    chunks = elements.isEmpty ? [] : [elements]
    count = elements.count
  }

  var isEmpty: Bool { count == 0 }

  /// The elements, in order.
  ///
  /// - Complexity: O(*n*).
  var elements: [Element] { chunks.count == 1 ? chunks[0] : Array(chunks.joined()) }

  func makeIterator() -> FlattenSequence<[[Element]]>.Iterator {
    chunks.joined().makeIterator()
  }

  /// The element at `index`.
  ///
  /// - Complexity: O(*n* / ``maximumChunkCount``).
  subscript(index: Int) -> Element {
    let (chunk, offset) = place(of: index)
    return chunks[chunk][offset]
  }

  /// Inserts `element` so that it ends up at `index` (`0...count`).
  ///
  /// - Complexity: O(*n* / ``maximumChunkCount`` + ``maximumChunkCount``), once a loaded
  ///   chunk is split.
  mutating func insert(_ element: Element, at index: Int) {
    precondition(index >= 0 && index <= count, "ChunkedList: insert at \(index) of \(count)")
    if chunks.isEmpty {
      chunks = [[element]]
      count = 1
      return
    }
    // The end of the list belongs to the last chunk.
    var (chunk, offset) =
      index == count ? (chunks.count - 1, chunks[chunks.count - 1].count) : place(of: index)
    if chunks[chunk].count >= Self.maximumChunkCount {
      (chunk, offset) = split(chunk, keeping: offset)
    }
    chunks[chunk].insert(element, at: offset)
    count += 1
    debugCheckInvariants()
  }

  /// Removes and returns the element at `index`.
  ///
  /// - Complexity: As ``insert(_:at:)``.
  @discardableResult
  mutating func remove(at index: Int) -> Element {
    precondition(index >= 0 && index < count, "ChunkedList: remove at \(index) of \(count)")
    var (chunk, offset) = place(of: index)
    if chunks[chunk].count > Self.maximumChunkCount {
      (chunk, offset) = split(chunk, keeping: offset)
    }
    let element = chunks[chunk].remove(at: offset)
    count -= 1
    joinIfSmall(chunk)
    debugCheckInvariants()
    return element
  }

  /// Moves the element at `from` to `to` (`Array` semantics: removed, then inserted there).
  ///
  /// - Complexity: As ``insert(_:at:)``.
  mutating func moveElement(from: Int, to: Int) {
    precondition(
      from >= 0 && from < count && to >= 0 && to < count,
      "ChunkedList: move from \(from) to \(to) of \(count)")
    guard from != to else { return }
    insert(remove(at: from), at: to)
  }

  /// The chunk and offset of `index` (`0..<count`).
  private func place(of index: Int) -> (chunk: Int, offset: Int) {
    var offset = index
    for chunk in chunks.indices {
      let length = chunks[chunk].count
      if offset < length { return (chunk, offset) }
      offset -= length
    }
    preconditionFailure("ChunkedList: index \(index) of \(count)")
  }

  /// Splits chunk `chunk` into chunks of half the maximum; returns where `offset` in it
  /// now is.
  private mutating func split(_ chunk: Int, keeping offset: Int) -> (chunk: Int, offset: Int) {
    let half = Self.maximumChunkCount / 2
    let whole = chunks[chunk]
    let pieces = stride(from: 0, to: whole.count, by: half).map {
      Array(whole[$0..<Swift.min($0 + half, whole.count)])
    }
    chunks.replaceSubrange(chunk...chunk, with: pieces)
    // An offset at the very end belongs to the last piece.
    let piece = Swift.min(offset / half, pieces.count - 1)
    return (chunk + piece, offset - piece * half)
  }

  /// Joins chunk `chunk` to a neighbour when it has fallen under a quarter of the maximum
  /// and both fit in one, and drops it when it is empty.
  private mutating func joinIfSmall(_ chunk: Int) {
    let length = chunks[chunk].count
    guard length < Self.maximumChunkCount / 4 else { return }
    if length == 0 {
      chunks.remove(at: chunk)
      return
    }
    for neighbour in [chunk - 1, chunk + 1] where chunks.indices.contains(neighbour) {
      guard chunks[neighbour].count + length <= Self.maximumChunkCount else { continue }
      let (first, second) = (Swift.min(chunk, neighbour), Swift.max(chunk, neighbour))
      chunks[first] += chunks[second]
      chunks.remove(at: second)
      return
    }
  }

  /// Checks, in debug builds, that the chunks hold ``count`` elements and none is empty.
  private func debugCheckInvariants() {
    #if DEBUG
      assert(chunks.reduce(0) { $0 + $1.count } == count, "ChunkedList: count drifted")
      assert(!chunks.contains { $0.isEmpty }, "ChunkedList: an empty chunk was kept")
    #endif
  }
}

extension ChunkedList: Sendable where Element: Sendable {}
