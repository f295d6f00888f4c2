import BenchmarkSupport
import Foundation
import ObjectGraph

/// The next version of the workload's box: one attribute added, with a default.
enum RevisedModel {
  final class Box: ManagedObject {
    @Attribute(.unique) var id = UUID()
    @Attribute var title = ""
    @Attribute var detail = ""
    @Attribute var created = Date()
    @Attribute var rating = 0
    @Relationship(inverse: \Box.children) var parent: Box?
    @Relationship(deleteRule: .cascade) var children: [Box]
  }
}

extension Cases {
  /// Opening a binary store of boxes as it is, against opening it with a model that added
  /// an attribute (a lightweight migration: the file read, each object migrated, a new file
  /// written and synced beside it, renamed over it), at two sizes.
  static func migrations() -> [MicroBenchmark] {
    [1, 100].flatMap { roots -> [MicroBenchmark] in
      let count = roots * 1011
      return [
        MicroBenchmark("open: binary store of \(count) boxes (per box)", batchOf: count) {
          let store = try StoreFileFixture(roots: roots)
          return { _ in
            store.keep(try ObjectContainer(for: Box.self, storeURL: store.url))
          }
        },
        MicroBenchmark(
          "migrate: open adding an attribute, \(count) boxes (per box)", batchOf: count
        ) {
          let store = try StoreFileFixture(roots: roots)
          return { _ in
            store.keep(try ObjectContainer(for: RevisedModel.Box.self, storeURL: store.url))
          }
        },
      ]
    }
  }
}

/// A binary store of the workload's trees in a temporary directory, removed with the
/// fixture; the containers a benchmark opens are kept until then, so that their release is
/// not timed.
@MainActor
final class StoreFileFixture {
  let directory: URL
  let url: URL
  private var containers: [ObjectContainer] = []

  init(roots: Int) throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "microbench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    url = directory.appendingPathComponent("boxes.ogstore")
    let container = try ObjectContainer(for: Box.self, storeURL: url)
    let context = try container.newContext()
    var random = FixtureRandom()
    for root in 0..<roots {
      let top = Box(
        id: random.nextUUID(), title: "Root \(root)", detail: "detail \(root)",
        created: Date(timeIntervalSince1970: 1_700_000_000), parent: nil)
      context.insert(top)
      for child in 0..<10 {
        let middle = Box(
          id: random.nextUUID(), title: "Box \(root).\(child)", detail: "detail",
          created: Date(timeIntervalSince1970: 1_700_000_000 + Double(child)), parent: top)
        for leaf in 0..<100 {
          _ = Box(
            id: random.nextUUID(), title: "Box \(root).\(child).\(leaf)", detail: "detail",
            created: Date(timeIntervalSince1970: 1_700_000_000 + Double(leaf)), parent: middle)
        }
      }
    }
    try context.save()
    container.close()
  }

  func keep(_ container: ObjectContainer) { containers.append(container) }

  deinit {
    for container in containers { container.close() }
    try? FileManager.default.removeItem(at: directory)
  }
}
