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

/// A version of the workload's box without its detail: a store migrated to it names the
/// properties after `detail` by numbers that are not their positions.
enum TrimmedModel {
  final class Box: ManagedObject {
    @Attribute(.unique) var id = UUID()
    @Attribute var title = ""
    @Attribute var created = Date()
    @Relationship(inverse: \Box.children) var parent: Box?
    @Relationship(deleteRule: .cascade) var children: [Box]
  }
}

/// The workload's box and its next version, as a plan with a custom stage that sets the new
/// attribute of every box from the old one's title.
enum BoxesV1: VersionedSchema {
  static let versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [ManagedObject.Type] { [Box.self] }
}

enum BoxesV2: VersionedSchema {
  static let versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [ManagedObject.Type] { [RevisedModel.Box.self] }
}

enum RatingPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [BoxesV1.self, BoxesV2.self] }
  static var stages: [MigrationStage] {
    [
      .custom(fromVersion: BoxesV1.self, toVersion: BoxesV2.self) { migration in
        for box in try migration.new.fetch(FetchDescriptor<RevisedModel.Box>()) {
          box.rating = box.title.utf8.count
        }
      }
    ]
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
        // The same boxes saved after a first save of one: a changeset record of new objects
        // replayed after the snapshot, stored whole (no snapshot per object).
        MicroBenchmark(
          "open: binary store of \(count) boxes saved after a first save (per box)",
          batchOf: count
        ) {
          let store = try StoreFileFixture(roots: roots, afterAFirstSave: true)
          return { _ in
            store.keep(try ObjectContainer(for: Box.self, storeURL: store.url))
          }
        },
        // The file's records in number order, with a hole where `detail` was: each object
        // is read in that order and its values put in order of position.
        MicroBenchmark(
          "open: migrated binary store, a property removed, \(count) boxes (per box)",
          batchOf: count
        ) {
          let store = try StoreFileFixture(roots: roots)
          try ObjectContainer(for: TrimmedModel.Box.self, storeURL: store.url).close()
          return { _ in
            store.keep(try ObjectContainer(for: TrimmedModel.Box.self, storeURL: store.url))
          }
        },
        // A context made after two others (a model actor's per job, say): loaded from the
        // contents the contexts share, a rename saved since applied, not from the file.
        MicroBenchmark(
          "context: one more context of a binary store of \(count) boxes (per box)",
          batchOf: count
        ) {
          let store = try StoreFileFixture(roots: roots)
          let container = try ObjectContainer(for: Box.self, storeURL: store.url)
          store.keep(container)
          let saving = try container.newContext()
          _ = try container.newContext()  // a second load from the file: from now on, shared
          let box = try saving.fetch(FetchDescriptor<Box>())[0]
          return { number in
            box.title = "Renamed \(number)"
            try saving.save()
            let context = try container.newContext()
            _ = try context.fetchCount(FetchDescriptor<Box>())
            withExtendedLifetime(store) {}
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
        MicroBenchmark(
          "migrate: open with a custom stage setting every box, \(count) boxes (per box)",
          batchOf: count
        ) {
          let store = try StoreFileFixture(roots: roots)
          return { _ in
            store.keep(
              try ObjectContainer(
                for: [RevisedModel.Box.self], migrationPlan: RatingPlan.self,
                configurations: [ModelConfiguration(url: store.url)]))
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

  /// With `afterAFirstSave`, the trees are saved after a first save of one other box, so
  /// that the file holds them as a changeset of new objects rather than its snapshot.
  init(roots: Int, afterAFirstSave: Bool = false) throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "microbench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    url = directory.appendingPathComponent("boxes.ogstore")
    let container = try ObjectContainer(for: Box.self, storeURL: url)
    let context = try container.newContext()
    var random = FixtureRandom()
    if afterAFirstSave {
      context.insert(
        Box(
          id: random.nextUUID(), title: "First", detail: "",
          created: Date(timeIntervalSince1970: 1_600_000_000), parent: nil))
      try context.save()
    }
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
