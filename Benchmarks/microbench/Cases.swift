import BenchmarkSupport
import Foundation
import ObjectGraph

/// The hot paths measured, on fixtures of `roots` workload trees (1,011 boxes a root).
@MainActor
enum Cases {
  static func all(roots: Int) -> [MicroBenchmark] {
    let groups: [[MicroBenchmark]] = [
      identity(), objects(roots: roots), drafts(), attributes(roots: roots),
      relationships(roots: roots), lists(), fetches(roots: roots), queries(), orderedIndexes(),
      persistence(roots: roots), swiftDataStyle(), merges(),
      notifications(), migrations(),
    ]
    return groups.flatMap { $0 }
  }

  // MARK: Identity and creation

  /// What the model's defaults cost: `UUID()` runs for every `Box()` a user makes.
  static func identity() -> [MicroBenchmark] {
    [
      MicroBenchmark("UUID() (the model's default id)", iterations: 100_000) {
        { _ in blackHole(UUID()) }
      },
      MicroBenchmark("UUID(uuid:) from two SplitMix64 draws", iterations: 100_000) {
        var random = FixtureRandom()
        return { _ in blackHole(random.nextUUID()) }
      },
      MicroBenchmark("Date() (the model's default created)", iterations: 100_000) {
        { _ in blackHole(Date()) }
      },
    ]
  }

  static func objects(roots: Int) -> [MicroBenchmark] {
    let count = roots * 1011
    return [
      MicroBenchmark("Box() detached, defaults run", iterations: count) {
        var kept: [Box] = []
        kept.reserveCapacity(count)
        return { _ in kept.append(Box()) }
      },
      MicroBenchmark("Box() detached, constant defaults (no UUID())", iterations: count) {
        var kept: [ConstantDefaultsBox] = []
        kept.reserveCapacity(count)
        return { _ in kept.append(ConstantDefaultsBox()) }
      },
      MicroBenchmark("insert: Box() + 4 attributes + parent (seed)", iterations: count) {
        let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
        let context = container.mainContext
        var random = FixtureRandom()
        let parents = (0..<100).map { _ in Box() }
        for parent in parents { context.insert(parent) }
        return { number in
          let box = Box()
          box.id = random.nextUUID()
          box.title = "Box \(number)"
          box.detail = "Sed ut perspiciatis unde omnis iste natus error sit voluptatem \(number)"
          box.created = Date(timeIntervalSince1970: 1_700_000_000 + Double(number))
          box.parent = parents[number % parents.count]
          withExtendedLifetime(container) {}
        }
      },
      MicroBenchmark("insert: context.insert(Box()) without parent", iterations: count) {
        let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
        let context = container.mainContext
        return { _ in
          context.insert(Box())
          withExtendedLifetime(container) {}
        }
      },
    ]
  }

  // MARK: Attributes

  static func attributes(roots: Int) -> [MicroBenchmark] {
    let iterations = 1_000_000
    return [
      MicroBenchmark("attribute get: title (String)", iterations: iterations) {
        let (fixture, boxes) = try savedBoxes(roots: roots)
        return { number in
          blackHole(boxes[number % boxes.count].title)
          withExtendedLifetime(fixture) {}
        }
      },
      MicroBenchmark("attribute get: created (Date)", iterations: iterations) {
        let (fixture, boxes) = try savedBoxes(roots: roots)
        return { number in
          blackHole(boxes[number % boxes.count].created)
          withExtendedLifetime(fixture) {}
        }
      },
      MicroBenchmark("attribute get: id (UUID)", iterations: iterations) {
        let (fixture, boxes) = try savedBoxes(roots: roots)
        return { number in
          blackHole(boxes[number % boxes.count].id)
          withExtendedLifetime(fixture) {}
        }
      },
      MicroBenchmark("attribute set: title, saved box (tracked)", iterations: iterations / 10) {
        let (fixture, boxes) = try savedBoxes(roots: roots)
        let titles = ["Renamed A", "Renamed B"]
        return { number in
          boxes[number % boxes.count].title = titles[(number / boxes.count) % 2]
          withExtendedLifetime(fixture) {}
        }
      },
      MicroBenchmark("attribute set: same value (no change)", iterations: iterations / 10) {
        let (fixture, boxes) = try savedBoxes(roots: roots)
        return { number in
          let box = boxes[number % boxes.count]
          box.created = box.created
          withExtendedLifetime(fixture) {}
        }
      },
    ]
  }

  // MARK: Relationships

  static func relationships(roots: Int) -> [MicroBenchmark] {
    let iterations = 100_000
    return [
      MicroBenchmark("to-one get: parent", iterations: iterations * 10) {
        let (fixture, boxes) = try savedBoxes(roots: roots)
        return { number in
          blackHole(boxes[number % boxes.count].parent)
          withExtendedLifetime(fixture) {}
        }
      },
      MicroBenchmark("to-many get: children (0-10 boxes)", iterations: iterations * 10) {
        let (fixture, boxes) = try savedBoxes(roots: roots)
        return { number in
          blackHole(boxes[number % boxes.count].children)
          withExtendedLifetime(fixture) {}
        }
      },
      MicroBenchmark("to-many: $children.move(from:to:), saved", iterations: iterations) {
        let fixture = try BoxFixture(roots: roots)
        let parents = try fixture.parents()
        var random = FixtureRandom()
        return { number in
          let parent = parents[number % parents.count]
          let count = parent.$children.count
          parent.$children.move(from: random.index(below: count), to: random.index(below: count))
          withExtendedLifetime(fixture) {}
        }
      },
      MicroBenchmark("to-many: children.move(fromOffsets:toOffset:)", iterations: iterations) {
        let fixture = try BoxFixture(roots: roots)
        let parents = try fixture.parents()
        return { number in
          parents[number % parents.count].children.move(fromOffsets: [0], toOffset: 3)
          withExtendedLifetime(fixture) {}
        }
      },
      MicroBenchmark("to-many: $children.append(new box), saved", iterations: iterations) {
        let fixture = try BoxFixture(roots: roots)
        let parents = try fixture.parents()
        return { number in
          parents[number % parents.count].$children.append(Box())
          withExtendedLifetime(fixture) {}
        }
      },
      MicroBenchmark("to-one set: reparent a saved box", iterations: iterations) {
        let fixture = try BoxFixture(roots: roots)
        let parents = try fixture.parents()
        let boxes = try fixture.allBoxes().filter { $0.children.isEmpty }
        return { number in
          boxes[number % boxes.count].parent = parents[number % parents.count]
          withExtendedLifetime(fixture) {}
        }
      },
    ]
  }

  // MARK: Fetches

  static func fetches(roots: Int) -> [MicroBenchmark] {
    [
      MicroBenchmark("fetch: id == x (unique index), limit 1", iterations: 100_000) {
        let fixture = try BoxFixture(roots: roots)
        let ids = fixture.ids
        return { number in
          let id = ids[(number &* 7919) % ids.count]
          var descriptor = FetchDescriptor<Box>(predicate: #Predicate { $0.id == id })
          descriptor.fetchLimit = 1
          blackHole(try fixture.context.fetch(descriptor))
        }
      },
      MicroBenchmark("fetch: parent == nil, sort by created", iterations: 1_000) {
        let fixture = try BoxFixture(roots: roots)
        let descriptor = FetchDescriptor<Box>(
          predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.created)])
        return { _ in blackHole(try fixture.context.fetch(descriptor)) }
      },
      MicroBenchmark("fetch: title == x (scan of \(roots * 1011))", iterations: 20) {
        let fixture = try BoxFixture(roots: roots)
        return { number in
          let title = "Box \(number * 37)"
          blackHole(
            try fixture.context.fetch(
              FetchDescriptor<Box>(predicate: #Predicate { $0.title == title })))
        }
      },
      MicroBenchmark("fetchCount: all boxes", iterations: 10_000) {
        let fixture = try BoxFixture(roots: roots)
        return { _ in blackHole(try fixture.context.fetchCount(FetchDescriptor<Box>())) }
      },
    ]
  }

  // MARK: Saving and loading

  static func persistence(roots: Int) -> [MicroBenchmark] {
    let count = roots * 1011
    return [
      MicroBenchmark("save: \(count) inserted boxes (per box)", batchOf: count) {
        let fixture = try BoxFixture(roots: 0)
        var random = FixtureRandom()
        var parents: [Box] = []
        for number in 0..<count {
          let box = Box()
          box.id = random.nextUUID()
          box.title = "Box \(number)"
          box.created = Date(timeIntervalSince1970: 1_700_000_000 + Double(number))
          if number % 10 == 0 { fixture.context.insert(box) } else { box.parent = parents.last! }
          if number % 10 == 0 { parents.append(box) }
        }
        return { _ in try fixture.context.save() }
      },
      MicroBenchmark("save: one title change (store of \(count))", iterations: 1_000) {
        let (fixture, boxes) = try savedBoxes(roots: roots)
        return { number in
          boxes[number % boxes.count].title = "Saved \(number)"
          try fixture.context.save()
        }
      },
      MicroBenchmark("save: one move (store of \(count))", iterations: 1_000) {
        let fixture = try BoxFixture(roots: roots)
        let parents = try fixture.parents()
        return { number in
          parents[number % parents.count].$children.move(from: 0, to: 5)
          try fixture.context.save()
        }
      },
      MicroBenchmark("load: open container, \(count) boxes (per box)", batchOf: count) {
        let fixture = try BoxFixture(roots: roots)
        fixture.close()
        return { _ in try fixture.reopen() }
      },
      MicroBenchmark("release: drop container, \(count) boxes (per box)", batchOf: count) {
        let fixture = try BoxFixture(roots: roots)
        return { _ in fixture.close() }
      },
      // The store seam's packed objects, as a store outside the framework builds and
      // reads them through the public API (one buffer, no array per object).
      MicroBenchmark(
        "store seam: PackedObjects built and read, \(count) boxes (per box)", batchOf: count
      ) {
        let fixture = try BoxFixture(roots: roots)
        let rows = try fixture.store.load().objects
        let valueCount = rows.reduce(0) { $0 + $1.values.count }
        return { _ in
          var packed = PackedObjects()
          packed.reserveCapacity(objects: rows.count, values: valueCount)
          for row in rows {
            packed.beginObject(id: row.id, entity: row.entity)
            for value in row.values { packed.appendValue(value) }
          }
          var read = 0
          packed.forEach { _, _, values in read += values.count }
          precondition(read == valueCount)
        }
      },
      // A partial read of ten objects: the in-memory store finds them by id, whatever
      // its size.
      MicroBenchmark(
        "store seam: load(ids:) of 10 boxes, in-memory store of \(count)", iterations: 1_000
      ) {
        let fixture = try BoxFixture(roots: roots)
        let stored = try fixture.store.load().objects
        let ids = Set(
          stride(from: 0, to: stored.count, by: stored.count / 10).prefix(10).map {
            stored[$0].id
          })
        return { _ in
          let part = try fixture.store.load(ids: ids)
          precondition(part.packed.count == ids.count)
        }
      },
      MicroBenchmark("release: drop a context of \(count) boxes (per box)", batchOf: count) {
        let fixture = try BoxFixture(roots: roots)
        var context: ObjectContext? = try ObjectContext(fixture.container!)
        _ = try context!.fetchCount(FetchDescriptor<Box>())
        // The fixture (its container and store) outlives the measure: only the context goes.
        return { _ in
          context = nil
          withExtendedLifetime(fixture) {}
        }
      },
      // A context released while the app holds one of its boxes, which keeps its
      // relationships through the values of every box it reaches (its tree): kept B/op is
      // that graph's memory per box.
      MicroBenchmark(
        "release: drop a context, one of \(count) boxes kept (per box)", batchOf: count
      ) {
        let fixture = try BoxFixture(roots: roots)
        var context: ObjectContext? = try ObjectContext(fixture.container!)
        var first = FetchDescriptor<Box>()
        first.fetchLimit = 1
        let kept = try context!.fetch(first)[0]
        return { _ in
          context = nil
          withExtendedLifetime((kept, fixture)) {}
        }
      },
      MicroBenchmark("delete: cascade one tree of 1011 (per box)", batchOf: 1011) {
        let fixture = try BoxFixture(roots: roots)
        let root = try fixture.context.fetch(
          FetchDescriptor<Box>(predicate: #Predicate { $0.parent == nil })
        ).first!
        return { _ in fixture.context.delete(root) }
      },
    ]
  }

  /// A fixture and its boxes in creation order, all loaded from the store.
  private static func savedBoxes(roots: Int) throws -> (BoxFixture, [Box]) {
    let fixture = try BoxFixture(roots: roots)
    return (fixture, try fixture.allBoxes())
  }
}
