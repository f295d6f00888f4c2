import BenchmarkSupport
import Foundation
import ObjectGraph

/// The first screen of `APPBENCH.md`, in a fresh process on the store a full run left: open
/// the store, fetch the 20 oldest roots, read the titles of the first root's children.
@MainActor
struct FirstScreen {
  /// Roots on the first screen.
  static let rootLimit = 20

  let options: Options

  /// Times the first screen from before the store is opened until it is read, then tells R
  /// from the store's boxes (untimed).
  ///
  /// - Throws: ``WorkloadError`` when there is no store at the path, or not one a full run
  ///   left; or the framework's error.
  func run() throws -> FirstScreenResult {
    // Opening a missing file would make a new, empty store.
    guard FileManager.default.fileExists(atPath: options.path) else {
      throw WorkloadError.store(
        "no store at \(options.path): run `appbench --path FILE` (the full run) first")
    }
    let start = monotonicSeconds()
    var container: ObjectContainer? = try makeContainer(path: options.path)
    let context = container!.mainContext
    var roots = FetchDescriptor<Box>(
      predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.created)])
    roots.fetchLimit = Self.rootLimit
    let screen = try context.fetch(roots)
    guard let first = screen.first else { throw WorkloadError.store("the store has no roots") }
    var hash = CreatedHash()
    for root in screen { hash.add(root.created) }
    var titleBytes = 0
    for child in first.children {
      titleBytes += child.title.utf8.count
      hash.add(child.created)
    }
    let elapsed = monotonicSeconds() - start
    guard titleBytes > 0 else { throw WorkloadError.store("first screen: no children") }

    // A full run leaves N + 1 + W = 2,011 R + 1 boxes.
    let boxes = try context.fetchCount(FetchDescriptor<Box>())
    let perRoot = AppWorkload.boxesPerRoot + AppWorkload.wideChildrenPerRoot
    guard boxes > 1, (boxes - 1) % perRoot == 0 else {
      throw WorkloadError.store(
        "the store holds \(boxes) boxes, not the 2,011 R + 1 that a full run leaves")
    }
    var result = FirstScreenResult(roots: (boxes - 1) / perRoot, boxes: boxes)
    result.firstScreen = elapsed
    result.hFirst = hash.value
    drainMainQueue()
    container = nil
    result.fileBytes = storeFileBytes(atPath: options.path)
    result.peakResidentBytes = peakResidentBytes()
    return result
  }
}
