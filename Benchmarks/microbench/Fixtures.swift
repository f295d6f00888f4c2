import BenchmarkSupport
import Foundation
import ObjectGraph

/// The workload's model with constant defaults: what `Box()` costs without running
/// `UUID()` and `Date()`.
final class ConstantDefaultsBox: ManagedObject {
  @Attribute(.unique) var id = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
  @Attribute var title = ""
  @Attribute var detail = ""
  @Attribute var created = Date(timeIntervalSince1970: 0)
  @Relationship(inverse: \ConstantDefaultsBox.children) var parent: ConstantDefaultsBox?
  @Relationship(deleteRule: .cascade) var children: [ConstantDefaultsBox]
}

/// Deterministic ids for fixtures: the workload's generator.
typealias FixtureRandom = SplitMix64

/// A store holding saved box trees, and a container open on it.
///
/// Trees are the workload's: each root has 10 children, each of those 10, each of those 9
/// (1,011 boxes a root).
@MainActor
final class BoxFixture {
  static let fanOut = [10, 10, 9, 0]

  let store: InMemoryStore
  private(set) var container: ObjectContainer?
  /// The ids of the saved boxes, in creation order.
  let ids: [UUID]

  /// A store with `roots` saved trees, and a container open on it.
  init(roots: Int) throws {
    store = InMemoryStore()
    let built = try BoxFixture.populate(store, roots: roots)
    ids = built
    container = try ObjectContainer(for: Box.self, store: store)
  }

  var context: ObjectContext { container!.mainContext }

  /// Closes the container and opens a new one on the same store, loading every box again.
  func reopen() throws {
    close()
    container = try ObjectContainer(for: Box.self, store: store)
  }

  /// Drops the container and everything it loaded.
  func close() {
    drainMainQueue()
    container = nil
  }

  /// Fetches all boxes, in creation order.
  func allBoxes() throws -> [Box] {
    try context.fetch(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.created)]))
  }

  /// The boxes that have children, in creation order.
  func parents() throws -> [Box] {
    try allBoxes().filter { !$0.children.isEmpty }
  }

  private static func populate(_ store: InMemoryStore, roots: Int) throws -> [UUID] {
    let container = try ObjectContainer(for: Box.self, store: store)
    let context = container.mainContext
    var random = FixtureRandom()
    var ids: [UUID] = []
    func make(depth: Int, parent: Box?) {
      let box = Box()
      box.id = random.nextUUID()
      box.title = "Box \(ids.count)"
      box.detail = "Sed ut perspiciatis unde omnis iste natus error sit voluptatem \(ids.count)"
      box.created = Date(timeIntervalSince1970: 1_700_000_000 + Double(ids.count))
      ids.append(box.id)
      if let parent { box.parent = parent } else { context.insert(box) }
      for _ in 0..<fanOut[depth] { make(depth: depth + 1, parent: box) }
    }
    for _ in 0..<roots { make(depth: 0, parent: nil) }
    try context.save()
    drainMainQueue()
    return ids
  }
}

/// Keeps a value alive and opaque to the optimizer.
@inline(never)
func blackHole<T>(_ value: T) {
  withExtendedLifetime(value) {}
}

/// An event with an indexed date and title (ordered indexes), and the same values again in
/// attributes without an index, so one fixture times both ways of answering a query.
final class Event: ManagedObject {
  @Attribute(.indexed) var created = Date(timeIntervalSince1970: 0)
  @Attribute(.indexed) var title = ""
  @Attribute var unindexedCreated = Date(timeIntervalSince1970: 0)
  @Attribute var unindexedTitle = ""
}

/// An event without indexes: what an insert costs with none to keep.
final class PlainEvent: ManagedObject {
  @Attribute var created = Date(timeIntervalSince1970: 0)
  @Attribute var title = ""
}

/// A store of `count` saved events (and as many plain events) in random order of date and
/// title, and a container open on it with its indexes built.
@MainActor
final class EventFixture {
  static let base = Date(timeIntervalSince1970: 1_700_000_000)

  let count: Int
  let container: ObjectContainer
  /// The events, loaded.
  let events: [Event]

  init(count: Int) throws {
    self.count = count
    let store = InMemoryStore()
    do {
      let container = try ObjectContainer(for: [Event.self, PlainEvent.self], store: store)
      var random = FixtureRandom()
      for _ in 0..<count {
        let (created, title) = Self.randomValues(&random, count: count)
        let event = Event()
        (event.created, event.title) = (created, title)
        (event.unindexedCreated, event.unindexedTitle) = (created, title)
        container.mainContext.insert(event)
        let plain = PlainEvent()
        (plain.created, plain.title) = (created, title)
        container.mainContext.insert(plain)
      }
      try container.mainContext.save()
      drainMainQueue()
    }
    container = try ObjectContainer(for: [Event.self, PlainEvent.self], store: store)
    events = try container.mainContext.fetch(FetchDescriptor<Event>())
    // Builds the attribute indexes (and waits for a build started on another thread).
    let base = Self.base
    _ = try container.mainContext.fetchCount(
      FetchDescriptor<Event>(predicate: #Predicate { $0.created < base }))
  }

  var context: ObjectContext { container.mainContext }

  /// A date among `count` seconds from ``base`` and a title, both random.
  static func randomValues(_ random: inout FixtureRandom, count: Int) -> (Date, String) {
    let created = base + Double(random.index(below: count * 10)) / 10
    return (created, "Event \(random.index(below: count * 10))")
  }
}
