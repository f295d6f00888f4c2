import BenchmarkSupport
import Foundation
import ObjectGraph

/// The full run of `APPBENCH.md`, phase by phase, on ObjectGraph's public API, written as an
/// app would write it: `#Predicate` fetches, `FetchDescriptor` sorts, limits and offsets,
/// and the wide list edited as a Swift array, with a save after each edit.
///
/// Between phases it keeps only the generator and the wide box's id (to find it again when
/// it reads the list back from the store). A phase that "drops everything" releases its
/// container (which closes the store) and every object before the store is opened afresh.
@MainActor
final class AppWorkload {
  /// Children per box at each depth: roots have 10, then 10, then 9, then none.
  static let fanOut = [10, 10, 9, 0]
  /// Boxes in one root's tree: 1 + 10 + 100 + 900.
  static let boxesPerRoot = 1011
  /// Children of the wide box per root: W = 1,000 R.
  static let wideChildrenPerRoot = 1000
  /// Moves, inserts and deletes in the wide list, each saved on its own.
  static let listOperations = 1000
  /// How often each query runs; its median time is reported.
  static let queryRuns = 5
  /// B: the `created` of the first box, in seconds since 1970.
  static let base = 1_700_000_000.0

  let options: Options
  private var random = SplitMix64(seed: 42)
  /// The boxes made so far (the next box's creation number, k).
  private var boxesMade = 0
  /// The id of the wide box, once made.
  private var wideID: UUID?
  private var result: AppResult

  init(options: Options) {
    self.options = options
    result = AppResult(roots: options.roots, boxes: options.roots * Self.boxesPerRoot)
  }

  /// N, the boxes in trees.
  private var boxCount: Int { result.boxes }

  /// Runs every phase in order and returns the measurements; leaves the store at
  /// `options.path` for the first-screen run.
  ///
  /// - Throws: ``WorkloadError`` when a result is not what the workload requires, or the
  ///   framework's error.
  func run() throws -> AppResult {
    removeStoreFiles(atPath: options.path)
    result.buildSave = try seconds { try buildAndSave() }
    try runSession()
    try readWideListBack()
    result.fileBytes = storeFileBytes(atPath: options.path)
    result.peakResidentBytes = peakResidentBytes()
    return result
  }

  // MARK: Phase 1: build_save

  /// WORKLOAD.md's phase 1: creates all boxes root by root, each tree in pre-order, saves
  /// once, and closes the store.
  private func buildAndSave() throws {
    var container: ObjectContainer? = try makeContainer(path: options.path)
    let context = container!.mainContext
    for _ in 0..<options.roots {
      let root = makeTreeBox(depth: 0, parent: nil)
      context.insert(root)
      makeChildren(of: root, depth: 0)
    }
    guard boxesMade == boxCount else {
      throw WorkloadError.count("boxes built", found: boxesMade, expected: boxCount)
    }
    try context.save()
    drainMainQueue()
    container = nil
  }

  /// Creates the children of `parent` (a box at `depth`) and their subtrees, in pre-order.
  private func makeChildren(of parent: Box, depth: Int) {
    for _ in 0..<Self.fanOut[depth] {
      let child = makeTreeBox(depth: depth + 1, parent: parent)
      makeChildren(of: child, depth: depth + 1)
    }
  }

  /// Creates the next box of the trees. Giving it a parent appends it to the parent's
  /// children and inserts it into the parent's context.
  private func makeTreeBox(depth: Int, parent: Box?) -> Box {
    let number = boxesMade
    return makeBox(
      title: "Box \(number)",
      detail: "Sed ut perspiciatis unde omnis iste natus error sit voluptatem \(number)",
      created: Self.base + Double(number), parent: parent)
  }

  /// Creates the next box: its id comes first from the generator (two draws).
  private func makeBox(title: String, detail: String, created: Double, parent: Box? = nil)
    -> Box
  {
    boxesMade += 1
    return Box(
      id: random.nextUUID(), title: title, detail: detail,
      created: Date(timeIntervalSince1970: created), parent: parent)
  }

  // MARK: Phases 2 to 7, on one opened store

  /// Opens the store afresh and runs phases 2 to 7 on it; dropping the container afterwards
  /// is not timed (the baseline closes after timing too).
  private func runSession() throws {
    let start = monotonicSeconds()
    var container: ObjectContainer? = try makeContainer(path: options.path)
    let context = container!.mainContext
    let count = try context.fetchCount(FetchDescriptor<Box>())
    result.open = monotonicSeconds() - start
    guard count == boxCount else {
      throw WorkloadError.count("boxes after open", found: count, expected: boxCount)
    }
    try runQueries(context)
    var wide: Box!
    result.wideBuild = try seconds { wide = try buildWideList(context) }
    result.wideMove = try seconds { try moveChildren(of: wide, context) }
    result.wideInsert = try seconds { try insertChildren(into: wide, context) }
    result.wideDelete = try seconds { try deleteChildren(of: wide, context) }
    wide = nil
    drainMainQueue()
    container = nil
  }

  // MARK: Phase 3: queries

  /// The six queries, each run ``queryRuns`` times, with its median time and its result.
  private func runQueries(_ context: ObjectContext) throws {
    let base = Self.base
    let quarter = Date(timeIntervalSince1970: base + Double(boxCount / 4))
    let half = Date(timeIntervalSince1970: base + Double(boxCount / 2))

    let title = "Box \(boxCount / 2 + 7)"
    let equal = FetchDescriptor<Box>(predicate: #Predicate { $0.title == title })
    (result.nEqual, result.qEqual) = try measure("q_equal") { try context.fetch(equal).count }

    let contains = FetchDescriptor<Box>(predicate: #Predicate { $0.title.contains("42") })
    (result.nContains, result.qContains) = try measure("q_contains") {
      try context.fetch(contains).count
    }

    let range = FetchDescriptor<Box>(
      predicate: #Predicate { $0.created >= quarter && $0.created < half })
    (result.nRange, result.qRange) = try measure("q_range") { try context.fetchCount(range) }

    var top = FetchDescriptor<Box>(sortBy: [SortDescriptor(\.created, order: .reverse)])
    top.fetchLimit = 20
    (result.hTop, result.qTop) = try measure("q_top") { createdHash(try context.fetch(top)) }

    // Sorted by title as Swift's `<` orders strings (the default comparator for a String key
    // path on Linux): byte order of UTF-8 on these ASCII titles.
    var page = FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)])
    page.fetchOffset = boxCount / 2
    page.fetchLimit = 20
    (result.hPage, result.qPage) = try measure("q_page") { createdHash(try context.fetch(page)) }

    let compound = FetchDescriptor<Box>(
      predicate: #Predicate { ($0.title.contains("7") && $0.created < half) || $0.parent == nil })
    (result.nCompound, result.qCompound) = try measure("q_compound") {
      try context.fetch(compound).count
    }
  }

  /// Runs a query ``queryRuns`` times in a row; returns its result, which every run must
  /// give, and the median time.
  private func measure<Value: Equatable>(_ name: String, _ query: () throws -> Value) throws
    -> (Value, Double)
  {
    var times: [Double] = []
    var first: Value?
    for _ in 0..<Self.queryRuns {
      let start = monotonicSeconds()
      let value = try query()
      times.append(monotonicSeconds() - start)
      if let first, first != value {
        throw WorkloadError.unstable(name, "\(first)", "\(value)")
      }
      first = value
    }
    return (first!, median(times))
  }

  // MARK: Phases 4 to 7: the wide list

  /// Phase 4: a new root with W children, each appended to the end of its children; one
  /// save.
  private func buildWideList(_ context: ObjectContext) throws -> Box {
    let wide = makeBox(title: "Wide", detail: "", created: 1_800_000_000)
    wideID = wide.id
    context.insert(wide)
    for i in 0..<(Self.wideChildrenPerRoot * options.roots) {
      // Appending a new box to a box in the context inserts it there too.
      let child = makeBox(title: "Wide \(i)", detail: "", created: 1_800_000_001 + Double(i))
      wide.children.append(child)
    }
    try context.save()
    return wide
  }

  /// Phase 5: 1,000 times, removes the child at a random place and inserts it at another
  /// (Swift Array semantics); one save each time.
  private func moveChildren(of wide: Box, _ context: ObjectContext) throws {
    for _ in 0..<Self.listOperations {
      let count = wide.children.count
      let from = random.index(below: count)
      let to = random.index(below: count)
      let child = wide.children.remove(at: from)
      wide.children.insert(child, at: to)
      try context.save()
    }
  }

  /// Phase 6: 1,000 new boxes, each inserted at a random place among the children; one save
  /// each time.
  private func insertChildren(into wide: Box, _ context: ObjectContext) throws {
    for j in 0..<Self.listOperations {
      let box = makeBox(title: "Inserted \(j)", detail: "", created: 1_900_000_000 + Double(j))
      let position = random.index(below: wide.children.count + 1)
      wide.children.insert(box, at: position)
      try context.save()
    }
  }

  /// Phase 7: 1,000 times, deletes the child at a random place (the object, not only its
  /// place in the list); one save each time.
  private func deleteChildren(of wide: Box, _ context: ObjectContext) throws {
    for _ in 0..<Self.listOperations {
      let child = wide.children[random.index(below: wide.children.count)]
      context.delete(child)
      try context.save()
    }
  }

  // MARK: The result, read back from the store

  /// Opens the store afresh and reads the wide list in its stored order: `n_wide`, `h_wide`.
  /// Not timed.
  private func readWideListBack() throws {
    var container: ObjectContainer? = try makeContainer(path: options.path)
    let context = container!.mainContext
    let id = wideID!
    guard
      let wide = try context.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.id == id }))
        .first
    else { throw WorkloadError.missing(id) }
    result.nWide = wide.children.count
    result.hWide = createdHash(wide.children)
    drainMainQueue()
    container = nil
  }
}

/// FNV-1a over the `created` of boxes, in order.
func createdHash(_ boxes: [Box]) -> UInt64 {
  var hash = CreatedHash()
  for box in boxes { hash.add(box.created) }
  return hash.value
}

/// A way the workload found the framework's results wrong.
enum WorkloadError: Error, CustomStringConvertible {
  /// A count differs from what the workload requires.
  case count(String, found: Int, expected: Int)
  /// A fetch by id found nothing.
  case missing(UUID)
  /// Two runs of a query gave different results.
  case unstable(String, String, String)
  /// The first-screen run found no store, or not one a full run left.
  case store(String)

  var description: String {
    switch self {
    case .count(let what, let found, let expected): "\(what): \(found), expected \(expected)"
    case .missing(let id): "no box with id \(id)"
    case .unstable(let query, let first, let later):
      "\(query) gave \(first), then \(later): every run must give the same result"
    case .store(let problem): problem
    }
  }
}
