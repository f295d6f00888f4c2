import BenchmarkSupport
import Foundation
import ObjectGraph

/// The seed workload of `WORKLOAD.md`, phase by phase, on ObjectGraph's public API.
///
/// Between phases it keeps only what the workload allows: the ids in creation order and the
/// list P of parents as creation indices. A phase that "drops everything" releases its
/// container (which closes the store) and every object before the store is opened afresh.
@MainActor
final class SeedWorkload {
  /// Children per box at each depth: roots have 10, then 10, then 9, then none.
  static let fanOut = [10, 10, 9, 0]
  /// Boxes in one root's tree: 1 + 10 + 100 + 900.
  static let boxesPerRoot = 1011
  /// Moves in the reorder phase, each saved on its own.
  static let reorderMoves = 1000

  let options: Options
  private var random = SplitMix64(seed: 42)
  /// The id of the k-th box created.
  private var ids: [UUID] = []
  /// P: the creation indices of the boxes that have children, in creation order.
  private var parentIndices: [Int] = []
  private var result: SeedResult
  private var breakdown: PhaseBreakdown

  init(options: Options) {
    self.options = options
    result = SeedResult(roots: options.roots, boxes: options.roots * Self.boxesPerRoot)
    breakdown = PhaseBreakdown(isEnabled: options.breakdown)
  }

  /// Runs every phase in order and returns the measurements.
  ///
  /// - Throws: ``WorkloadError`` when a count is not what the workload requires, or the
  ///   framework's error.
  func run() throws -> SeedResult {
    removeStoreFiles(atPath: options.path)
    result.buildSave = try seconds { try buildAndSave() }
    try runSession()
    try reopen()
    result.fileBytes = storeFileBytes(atPath: options.path)
    result.peakResidentBytes = peakResidentBytes()
    if options.breakdown { breakdown.report() }
    return result
  }

  // MARK: Phase 1: build_save

  /// Creates all boxes root by root, each tree in pre-order, saves once, and closes the store.
  private func buildAndSave() throws {
    var container: ObjectContainer? = try breakdown.time("build_save: open new store") {
      try makeContainer(path: options.path)
    }
    try build(in: container!.mainContext)
    breakdown.time("build_save: release container and boxes") {
      drainMainQueue()
      container = nil
    }
  }

  /// Creates the R trees in `context` and saves them.
  private func build(in context: ObjectContext) throws {
    breakdown.time("build_save: create and insert boxes") {
      ids.reserveCapacity(result.boxes)
      for _ in 0..<options.roots {
        let root = makeBox(depth: 0, parent: nil)
        context.insert(root)
        makeChildren(of: root, depth: 0)
      }
    }
    guard ids.count == result.boxes else {
      throw WorkloadError.count("boxes built", found: ids.count, expected: result.boxes)
    }
    try breakdown.time("build_save: save") { try context.save() }
  }

  /// Creates the children of `parent` (a box at `depth`) and their subtrees, in pre-order.
  private func makeChildren(of parent: Box, depth: Int) {
    for _ in 0..<Self.fanOut[depth] {
      let child = makeBox(depth: depth + 1, parent: parent)
      makeChildren(of: child, depth: depth + 1)
    }
  }

  /// Creates the next box in creation order. Giving it a parent appends it to the parent's
  /// children and inserts it into the parent's context.
  private func makeBox(depth: Int, parent: Box?) -> Box {
    let number = ids.count
    let id = random.nextUUID()
    ids.append(id)
    if Self.fanOut[depth] > 0 { parentIndices.append(number) }
    return Box(
      id: id, title: "Box \(number)",
      detail: "Sed ut perspiciatis unde omnis iste natus error sit voluptatem \(number)",
      created: Date(timeIntervalSince1970: 1_700_000_000 + Double(number)), parent: parent)
  }

  // MARK: Phases 2 to 6, on one opened store

  /// Opens the store afresh and runs phases 2 to 6 on it; dropping the container afterwards
  /// is not timed (the baseline closes after timing too).
  private func runSession() throws {
    let start = monotonicSeconds()
    var container: ObjectContainer? = try breakdown.time("open: open container (load)") {
      try makeContainer(path: options.path)
    }
    try runSessionPhases(in: container!.mainContext, openedAt: start)
    breakdown.time("after cascade_delete: release container") {
      drainMainQueue()
      container = nil
    }
  }

  /// Phases 2 (from `start`, before the container was opened) to 6, each timed on its own.
  private func runSessionPhases(in context: ObjectContext, openedAt start: Double) throws {
    try checkOpened(context)
    result.open = monotonicSeconds() - start
    result.traverse = try seconds {
      result.checksumBuilt = try breakdown.time("traverse: checksum") {
        try traversalChecksum(context)
      }
    }
    result.reorder = try seconds { try reorder(context) }
    result.update = try seconds { try update(context) }
    result.cascadeDelete = try seconds { try cascadeDelete(context) }
  }

  /// Phase 2: the roots and the count of all boxes must be R and N.
  private func checkOpened(_ context: ObjectContext) throws {
    let roots = try breakdown.time("open: fetch roots") { try context.fetch(Self.rootsByCreation) }
    let count = try breakdown.time("open: count boxes") {
      try context.fetchCount(FetchDescriptor<Box>())
    }
    guard roots.count == options.roots else {
      throw WorkloadError.count("roots after open", found: roots.count, expected: options.roots)
    }
    guard count == result.boxes else {
      throw WorkloadError.count("boxes after open", found: count, expected: result.boxes)
    }
  }

  /// Phase 4: moves one child of a random parent, and saves, 1,000 times.
  private func reorder(_ context: ObjectContext) throws {
    for _ in 0..<Self.reorderMoves {
      let parentID = ids[parentIndices[random.index(below: parentIndices.count)]]
      let parent = try breakdown.time("reorder: fetch parent by id") {
        try box(withID: parentID, in: context)
      }
      let count = parent.children.count
      let from = random.index(below: count)
      let to = random.index(below: count)
      breakdown.time("reorder: move child") { parent.$children.move(from: from, to: to) }
      try breakdown.time("reorder: save") { try context.save() }
    }
  }

  /// Phase 5: renames N/100 random boxes, found by id, and saves once.
  private func update(_ context: ObjectContext) throws {
    try breakdown.time("update: fetch by id and rename") {
      for renameNumber in 0..<(result.boxes / 100) {
        let box = try box(withID: ids[random.index(below: result.boxes)], in: context)
        box.title = "Renamed \(renameNumber)"
      }
    }
    try breakdown.time("update: save") { try context.save() }
  }

  /// Phase 6: deletes the first R/10 roots in created order with their subtrees, and saves.
  private func cascadeDelete(_ context: ObjectContext) throws {
    var firstRoots = Self.rootsByCreation
    firstRoots.fetchLimit = options.roots / 10
    let doomed = try breakdown.time("cascade_delete: fetch roots") {
      try context.fetch(firstRoots)
    }
    breakdown.time("cascade_delete: delete") { for root in doomed { context.delete(root) } }
    try breakdown.time("cascade_delete: save") { try context.save() }
  }

  // MARK: Phase 7: reopen

  /// Opens the store afresh, counts the boxes and computes the final checksum. Releasing the
  /// container afterwards is not part of the phase (the baseline closes after timing too).
  private func reopen() throws {
    let start = monotonicSeconds()
    var container: ObjectContainer? = try breakdown.time("reopen: open container (load)") {
      try makeContainer(path: options.path)
    }
    try countAndChecksum(container!.mainContext)
    result.reopen = monotonicSeconds() - start
    breakdown.time("after reopen: release container") {
      drainMainQueue()
      container = nil
    }
  }

  /// Phase 7's work: the count must be N minus the deleted trees; then the final checksum.
  private func countAndChecksum(_ context: ObjectContext) throws {
    let count = try context.fetchCount(FetchDescriptor<Box>())
    let expected = result.boxes - Self.boxesPerRoot * (options.roots / 10)
    guard count == expected else {
      throw WorkloadError.count("boxes after reopen", found: count, expected: expected)
    }
    result.countFinal = count
    result.checksumFinal = try breakdown.time("reopen: checksum") {
      try traversalChecksum(context)
    }
  }

  // MARK: Queries

  /// The roots, oldest first.
  static let rootsByCreation = FetchDescriptor<Box>(
    predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.created)])

  /// The box with an id, found by a fetch on the unique `id` attribute (an index lookup).
  private func box(withID id: UUID, in context: ObjectContext) throws -> Box {
    var descriptor = FetchDescriptor<Box>(predicate: #Predicate { $0.id == id })
    descriptor.fetchLimit = 1
    guard let box = try context.fetch(descriptor).first else { throw WorkloadError.missing(id) }
    return box
  }

  /// The workload's traversal checksum: FNV-1a over `created` of every box, visiting the
  /// roots oldest first and each tree depth first, children in their stored order.
  private func traversalChecksum(_ context: ObjectContext) throws -> UInt64 {
    var hash: UInt64 = 14_695_981_039_346_656_037
    var stack: [Box] = []
    for root in try context.fetch(Self.rootsByCreation) {
      stack.append(root)
      while let box = stack.popLast() {
        hash = (hash ^ UInt64(box.created.timeIntervalSince1970)) &* 1_099_511_628_211
        stack.append(contentsOf: box.children.reversed())
      }
    }
    return hash
  }
}

/// A way the workload found the framework's results wrong.
enum WorkloadError: Error, CustomStringConvertible {
  /// A count differs from what the workload requires.
  case count(String, found: Int, expected: Int)
  /// A fetch by id found nothing.
  case missing(UUID)

  var description: String {
    switch self {
    case .count(let what, let found, let expected): "\(what): \(found), expected \(expected)"
    case .missing(let id): "no box with id \(id)"
    }
  }
}
