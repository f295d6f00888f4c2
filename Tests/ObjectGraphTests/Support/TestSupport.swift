import Foundation
import Observation
import Testing

@testable import ObjectGraph

/// Every model class of the tests.
let allModels: [ManagedObject.Type] = [
  Box.self, Item.self, Note.self, Tag.self, Block.self, Person.self, Passport.self, Club.self,
  Loan.self, Pet.self, Sample.self,
]

/// How many steps a long random test takes: fewer under a sanitizer (CI's sanitized runs
/// set its options), which looks for memory errors and races that a few steps already
/// reach, and runs several times slower.
enum TestScale {
  static let isSanitized = ["ASAN_OPTIONS", "TSAN_OPTIONS"].contains {
    ProcessInfo.processInfo.environment[$0] != nil
  }

  /// `normal`, or `sanitized` under a sanitizer.
  static func steps(_ normal: Int, sanitized: Int) -> Int { isSanitized ? sanitized : normal }

  /// The number a soak sets in `OBJECTGRAPH_TEST_SEED` to run the randomized tests on other
  /// random sequences than their own; nil in an ordinary run.
  static let soakSeed = ProcessInfo.processInfo.environment["OBJECTGRAPH_TEST_SEED"].flatMap {
    UInt64($0)
  }

  /// The seed a randomized test starts its generator from: `base` in an ordinary run, a
  /// seed of its own for each soak number otherwise (`Tests/soak.sh` runs the tests
  /// under many).
  static func seed(_ base: UInt64) -> UInt64 {
    guard let soakSeed else { return base }
    return base &+ (soakSeed &+ 1) &* 0x9E37_79B9_7F4A_7C15
  }

  /// Whether an exhaustive test tries its case number `number`: every case, or one in
  /// `stride` under a sanitizer (spread over the whole range, so every kind of case is met).
  static func tries(_ number: Int, oneIn stride: Int) -> Bool {
    !isSanitized || number.isMultiple(of: stride)
  }
}

/// The stores every end-to-end test runs on.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case memory
  case binary

  var testDescription: String { rawValue }
}

/// A container over a fresh (or given) store, with its own context.
struct Stack {
  let kind: StoreKind
  let store: any PersistentStore
  let container: ObjectContainer
  let context: ObjectContext
  /// Where a binary store's file lives; kept alive (and removed) with the stack.
  let directory: TemporaryDirectory?

  /// The model classes of the container.
  let models: [ManagedObject.Type]

  init(_ kind: StoreKind = .memory, models: [ManagedObject.Type] = allModels) throws {
    let directory = kind == .binary ? try TemporaryDirectory() : nil
    try self.init(kind: kind, directory: directory, memoryStore: InMemoryStore(), models: models)
  }

  /// A stack for an exit test's child process, whose binary store lives in the directory
  /// the test process removes afterwards (see ``TemporaryDirectory/forExitTest()``).
  static func forExitTest(_ kind: StoreKind) throws -> Stack {
    let directory = kind == .binary ? try TemporaryDirectory.forExitTest() : nil
    return try Stack(
      kind: kind, directory: directory, memoryStore: InMemoryStore(), models: allModels)
  }

  init(store: InMemoryStore) throws {
    try self.init(kind: .memory, directory: nil, memoryStore: store, models: allModels)
  }

  private init(
    kind: StoreKind, directory: TemporaryDirectory?, memoryStore: InMemoryStore,
    models: [ManagedObject.Type]
  ) throws {
    self.kind = kind
    self.directory = directory
    self.models = models
    if let directory {
      store = BinaryStore(url: directory.file("store.ogstore"))
    } else {
      store = memoryStore
    }
    container = try ObjectContainer(for: models, store: store)
    context = try ObjectContext(container)
  }

  /// A new container and context over the same data: what a relaunch sees.
  func reopened() throws -> Stack {
    container.close()
    switch kind {
    case .memory:
      return try Stack(
        kind: .memory, directory: nil, memoryStore: store as! InMemoryStore, models: models)
    case .binary:
      return try Stack(
        kind: .binary, directory: directory, memoryStore: InMemoryStore(), models: models)
    }
  }
}

/// Whether `change` fires the observers that `withObservationTracking` registers for what
/// `read` reads: the way a SwiftUI view learns that it must render again.
func observes(_ read: () -> Void, change: () throws -> Void) rethrows -> Bool {
  let fired = LockedBox(false)
  withObservationTracking(read) { fired.withLock { $0 = true } }
  try change()
  return fired.withLock { $0 }
}

/// Records every changeset a store is handed, and counts its loads.
final class RecordingStore: PersistentStore, @unchecked Sendable {
  let base: any PersistentStore
  private let saved = LockedBox<[Changeset]>([])
  private let loads = LockedBox(0)
  var changesets: [Changeset] { saved.withLock { $0 } }
  /// How many times a container asked for every object.
  var loadCount: Int { loads.withLock { $0 } }

  init(base: any PersistentStore = InMemoryStore()) {
    self.base = base
  }

  func open(schema: Schema) throws { try base.open(schema: schema) }
  func load() throws -> StoreContents {
    loads.withLock { $0 += 1 }
    return try base.load()
  }
  func save(_ changeset: Changeset) throws {
    try base.save(changeset)
    saved.withLock { $0.append(changeset) }
  }
  func close() { base.close() }
}

extension Array where Element: ManagedObject {
  var titles: [String] { map { ($0 as? Box)?.title ?? "?" } }
}

/// Each box of a context by id: its title, detail, unique id, parent and children in order,
/// as text to compare contexts by; every inverse is checked to be in step.
func forestGraph(of context: ObjectContext) throws -> [ObjectID: String] {
  var graph: [ObjectID: String] = [:]
  for box in try context.fetch(FetchDescriptor<Box>()) {
    #expect(box.children.allSatisfy { $0.parent === box })
    #expect(box.parent.map { parent in parent.children.contains { $0 === box } } ?? true)
    let parent = box.parent?.objectID.map { "\($0)" } ?? "-"
    let children = box.children.map { "\($0.objectID!)" }.joined(separator: ",")
    graph[box.objectID!] =
      "\(box.title) \(box.detail) \(box.id) parent \(parent) children \(children)"
  }
  return graph
}

/// Whether `box` is a strict ancestor of `other` (its parent, its parent's parent, ...):
/// making `box` a child of `other` would then close a cycle. Also true when `other`'s
/// ancestors form a cycle already: each context keeps its own moves acyclic, but two saves
/// of different contexts can close one together (one moves `a` under `b`, the other `b`
/// under `a`; they change different properties, so neither conflicts), as in Core Data.
func isAncestor(_ box: Box, of other: Box) -> Bool {
  var seen: Set<ObjectIdentifier> = [ObjectIdentifier(other)]
  var current = other.parent
  while let ancestor = current {
    if ancestor === box || !seen.insert(ObjectIdentifier(ancestor)).inserted { return true }
    current = ancestor.parent
  }
  return false
}
