import Foundation
import Testing

@testable import ObjectGraph

/// A binary store hands the context opening it its strings as bytes, decoded when first
/// read (see `StoredStrings`): they read, compare, change, roll back and index exactly as
/// strings decoded at once.
@Suite struct LoadedStringTests {
  /// Strings of every shape: empty, one byte, multi-byte UTF-8, long, and runs that share
  /// prefixes (stored as a prefix count and a suffix).
  static let titles = [
    "", "a", "Ünïcödé 🌳 boxes", String(repeating: "long ", count: 2_000), "Box 1", "Box 10",
    "Box 100", "Box 1000", "Sed ut perspiciatis unde omnis 1", "Sed ut perspiciatis unde omnis 2",
  ]

  /// A reopened stack over boxes with ``titles`` (and details derived from them).
  private func reopenedBoxes() throws -> Stack {
    let stack = try Stack(.binary)
    for (number, title) in Self.titles.enumerated() {
      let box = Box(title: title, created: Date(timeIntervalSince1970: Double(number)))
      box.detail = "detail of " + title
      stack.context.insert(box)
    }
    try stack.context.save()
    return try stack.reopened()
  }

  private func boxesByCreation(_ context: ObjectContext) throws -> [Box] {
    try context.fetch(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.created)]))
  }

  @Test func everyStringReadsAsSaved() throws {
    let stack = try reopenedBoxes()
    let boxes = try boxesByCreation(stack.context)
    let titleIndex = try #require(boxes.first?.model.properties.firstIndex { $0.name == "title" })
    let deferred = boxes.filter {
      if case .deferred(.storedString) = $0.slots[titleIndex] { return true }
      return false
    }
    #expect(deferred.count == boxes.count, "no title is decoded before it is read")
    #expect(boxes.map(\.title) == Self.titles)
    #expect(boxes.map(\.detail) == Self.titles.map { "detail of " + $0 })
    // Read again: the slot now holds the decoded string.
    #expect(boxes.map(\.title) == Self.titles)
    let loaded = try stack.store.load().objects
    let titles = loaded.compactMap { snapshot -> String? in
      guard case .string(let title) = snapshot.values[1] else { return nil }
      return title
    }
    #expect(titles.sorted() == Self.titles.sorted(), "a second load decodes its strings")
  }

  /// Objects kept after their container and context are gone still read their stored
  /// strings: the storage lives as long as the objects of its load (see `StoredString`),
  /// not as long as the store or the context.
  @Test func objectsKeptAfterTheirContainerStillReadTheirStrings() throws {
    var kept: [Box] = []
    do {
      let stack = try reopenedBoxes()
      kept = try boxesByCreation(stack.context).enumerated().filter { $0.offset % 3 == 0 }
        .map(\.element)
    }
    // Whatever memory the container, the context and the other objects had is reused.
    let scratch = (0..<200).map { [UInt8](repeating: UInt8($0), count: 64 << 10) }
    #expect(scratch.count == 200)
    let expected = Self.titles.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
    #expect(kept.map(\.title) == expected)
    #expect(kept.map(\.detail) == expected.map { "detail of " + $0 })
  }

  @Test func predicatesAndSortsSeeLoadedStrings() throws {
    let stack = try reopenedBoxes()
    let title = Self.titles[2]
    let found = try stack.context.fetch(
      FetchDescriptor<Box>(predicate: #Predicate { $0.title == title }))
    #expect(found.map(\.detail) == ["detail of " + title])
    let sorted = try stack.context.fetch(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)]))
    #expect(sorted.map(\.title) == Self.titles.sorted())
  }

  @Test func settingALoadedStringToItsOwnValueIsNoChange() throws {
    let stack = try reopenedBoxes()
    let boxes = try boxesByCreation(stack.context)
    // Written without being read first: the stored bytes are compared, not skipped.
    for (box, title) in zip(boxes, Self.titles) { box.title = title }
    #expect(!stack.context.hasChanges)
  }

  @Test func aChangedLoadedStringKeepsItsCommittedValue() throws {
    let stack = try reopenedBoxes()
    let box = try boxesByCreation(stack.context)[2]
    box.title = "renamed"
    #expect(stack.context.committedValues(of: box)["title"] == .string(Self.titles[2]))
    #expect(stack.context.changedValues(of: box)["title"] == .string("renamed"))
    stack.context.rollback()
    #expect(box.title == Self.titles[2])
    #expect(!stack.context.hasChanges)
  }

  @Test func changesSavedAfterTheSnapshotReplaceItsStrings() throws {
    var stack = try reopenedBoxes()
    var boxes = try boxesByCreation(stack.context)
    boxes[1].title = "renamed once"
    stack.context.delete(boxes[3])
    try stack.context.save()
    boxes[1].detail = "a new detail"
    try stack.context.save()
    stack = try stack.reopened()
    boxes = try boxesByCreation(stack.context)
    var expected = Self.titles
    expected[1] = "renamed once"
    expected.remove(at: 3)
    #expect(boxes.map(\.title) == expected)
    #expect(boxes[1].detail == "a new detail")
    #expect(boxes[2].detail == "detail of " + Self.titles[2])
  }

  /// A stored string replaced after the snapshot reads as its replacement, through the
  /// loader and through a store's snapshots: replaced by a string (its entry is left and
  /// ignored), by nil (its entry is discarded), and by a string, then nil.
  @Test func stringsReplacedAfterTheSnapshotReadAsReplaced() throws {
    var stack = try Stack(.binary)
    for name in ["Ann", "Bob", "Cy", "Di"] {
      let person = Person(name: name)
      person.nickname = "nick " + name
      stack.context.insert(person)
    }
    try stack.context.save()
    stack = try stack.reopened()
    let byName = FetchDescriptor<Person>(sortBy: [SortDescriptor(\.name)])
    var people = try stack.context.fetch(byName)
    people[0].nickname = "renamed"
    people[1].nickname = nil
    people[2].nickname = "briefly"
    try stack.context.save()
    people[2].nickname = nil
    try stack.context.save()
    stack = try stack.reopened()
    people = try stack.context.fetch(byName)
    let expected = ["renamed", nil, nil, "nick Di"]
    #expect(people.map(\.nickname) == expected)
    let nickname = try #require(people[0].model.properties.firstIndex { $0.name == "nickname" })
    let name = try #require(people[0].model.properties.firstIndex { $0.name == "name" })
    let stored = try stack.store.load().objects.sorted {
      "\($0.values[name])" < "\($1.values[name])"
    }
    #expect(stored.map(\.values[nickname]) == expected.map { $0.map { .string($0) } ?? .null })
  }

  @Test func optionalStringsReadAndCompareAsSaved() throws {
    var stack = try Stack(.binary)
    let ann = Person(name: "Ann")
    ann.nickname = "A"
    stack.context.insert(ann)
    stack.context.insert(Person(name: "Bob"))
    try stack.context.save()
    stack = try stack.reopened()
    let people = try stack.context.fetch(FetchDescriptor<Person>(sortBy: [SortDescriptor(\.name)]))
    #expect(people.map(\.nickname) == ["A", nil])
    let unnamed = try stack.context.fetch(
      FetchDescriptor<Person>(predicate: #Predicate { $0.nickname == nil }))
    #expect(unnamed.map(\.name) == ["Bob"])
    people[1].nickname = nil
    #expect(!stack.context.hasChanges, "nil set to nil is no change")
  }

  /// A store big enough for a snapshot in several parts (four per core, at least 8,192
  /// objects each) decodes them at once; boxes and tags have different numbers of values,
  /// so each part's room has some left over.
  @Test func aSnapshotOfSeveralPartsLoadsAsSaved() throws {
    var stack = try Stack(.binary)
    var expected: [String] = []
    for number in 0..<20_000 {
      if number % 7 == 0 {
        stack.context.insert(Tag(name: "tag \(number)"))
      } else {
        let title = "box \(number) " + String(repeating: "x", count: number % 13)
        stack.context.insert(
          Box(title: title, created: Date(timeIntervalSince1970: Double(number))))
        expected.append(title)
      }
    }
    try stack.context.save()
    stack = try stack.reopened()
    let boxes = try boxesByCreation(stack.context)
    #expect(boxes.map(\.title) == expected)
    #expect(try stack.context.fetchCount(FetchDescriptor<Tag>()) == 2_858)
    for (name, found) in [("tag 19999", 1), ("tag 19998", 0)] {
      let tags = try stack.context.fetch(
        FetchDescriptor<Tag>(predicate: #Predicate { $0.name == name }))
      #expect(tags.map(\.name) == Array(repeating: name, count: found))
    }
  }

  /// Unique and indexed strings are decoded at load: the index built on another thread
  /// (from 4,096 objects) reads them while the app reads the rest.
  @Test(arguments: [40, 4_106])
  func uniqueStringsAreIndexedAfterReopening(count: Int) throws {
    var stack = try Stack(.binary)
    for number in 0..<count { stack.context.insert(Tag(name: "tag \(number)")) }
    try stack.context.save()
    stack = try stack.reopened()
    let name = "tag \(count - 1)"
    let found = try stack.context.fetch(
      FetchDescriptor<Tag>(predicate: #Predicate { $0.name == name }))
    #expect(found.map(\.name) == [name])
    stack.context.insert(Tag(name: "tag 0"))
    #expect(throws: ObjectGraphError.self) { try stack.context.save() }
  }
}

/// The builder of deferred strings copies shared prefixes within and across its storages.
@Suite struct DeferredStringsBuilderTests {
  @Test func prefixesAreSharedWithinAndAcrossStorages() {
    // A storage of at most 64 bytes: the strings below fill several.
    var builder = DeferredStrings.Builder(reservingBytes: 8, strings: 1, storageLimit: 64)
    var previous = DeferredStrings.Span()
    var expected: [String] = []
    for number in 0..<40 {
      let last = expected.last ?? ""
      let shared = number % 3 == 0 ? 0 : min(last.utf8.count, 12)
      let suffix = Array("-\(number)-suffix".utf8)
      expected.append(String(decoding: Array(last.utf8.prefix(shared)) + suffix, as: UTF8.self))
      previous = suffix.withUnsafeBytes {
        builder.append(sharing: shared, of: previous, then: $0, position: 2 * number)
      }
    }
    let strings = builder.finish()
    #expect(strings.storages.count > 1)
    #expect((0..<80).compactMap { strings.string(at: $0)?.value } == expected)
    #expect(strings.strings(in: 0..<80).map(\.position) == (0..<40).map { 2 * $0 })
    var cursor = strings.makeCursor()
    #expect((0..<80).compactMap { cursor.string(at: $0)?.value } == expected)
    var discarded = strings
    discarded.discard(10..<21)
    #expect(
      discarded.strings(in: 0..<80).map(\.position)
        == (0..<40).map { 2 * $0 }.filter { !(10..<21).contains($0) })
    #expect(discarded.string(at: 10) == nil)
    #expect(discarded.string(at: 22)?.value == expected[11])
  }

  /// Strings decoded in parts stay in their parts: read by position, in order, and
  /// discarded, across the parts as in one.
  @Test func partsReadAsOne() {
    func part(_ positions: [Int]) -> DeferredStrings {
      var builder = DeferredStrings.Builder(reservingBytes: 64, strings: positions.count)
      for position in positions {
        let bytes = Array("at \(position)".utf8)
        _ = bytes.withUnsafeBytes {
          builder.append(sharing: 0, of: DeferredStrings.Span(), then: $0, position: position)
        }
      }
      return builder.finish()
    }
    let positions = [[1, 4, 6], [], [9, 10], [15]]
    var strings = DeferredStrings(joining: positions.map(part))
    let all = positions.flatMap { $0 }
    #expect(strings.storages.count == 3)
    #expect((0..<20).compactMap { strings.string(at: $0)?.value } == all.map { "at \($0)" })
    var cursor = strings.makeCursor()
    #expect((0..<20).compactMap { cursor.string(at: $0)?.value } == all.map { "at \($0)" })
    // A loader's piece starts its cursor anywhere: before, at, between and after strings,
    // in a part or past its last.
    for start in 0...16 {
      var piece = strings.makeCursor(at: start)
      #expect(
        (start..<20).compactMap { piece.string(at: $0)?.value }
          == all.filter { $0 >= start }.map { "at \($0)" }, "from \(start)")
    }
    #expect(strings.strings(in: 5..<11).map(\.position) == [6, 9, 10])
    strings.discard(6..<10)
    #expect(strings.strings(in: 0..<20).map(\.position) == [1, 4, 10, 15])
    #expect(strings.string(at: 9) == nil)
    var after = strings.makeCursor()
    #expect(
      (0..<20).compactMap { after.string(at: $0)?.value } == ["at 1", "at 4", "at 10", "at 15"])
  }

  /// A long part, with positions spaced unevenly (runs of objects without strings, and
  /// denser stretches), is searched as a short one: every position finds its string or
  /// none, and discarded ranges go, wherever the search first guesses.
  @Test func aLongPartWithUnevenPositionsReadsEveryString() {
    var random = SplitMix64(seed: TestScale.seed(19))
    var positions: [Int] = []
    var position = 0
    for _ in 0..<5_000 {
      // Mostly a string every few values; now and then a long stretch with none.
      position +=
        random.next() % 20 == 0 ? 1 + Int(random.next() % 400) : 1 + Int(random.next() % 6)
      positions.append(position)
    }
    var builder = DeferredStrings.Builder(
      reservingBytes: 8 * positions.count, strings: positions.count)
    for position in positions {
      _ = Array("at \(position)".utf8).withUnsafeBytes {
        builder.append(sharing: 0, of: DeferredStrings.Span(), then: $0, position: position)
      }
    }
    var strings = builder.finish()
    var expected = Set(positions)
    func check(_ stage: String) {
      let found = (0...position + 2).filter { at in
        guard let string = strings.string(at: at) else { return false }
        #expect(string.value == "at \(at)", "\(stage): at \(at)")
        return true
      }
      #expect(found == expected.sorted(), "\(stage)")
    }
    check("built")
    for _ in 0..<50 {
      let start = Int(random.next() % UInt64(position))
      let range = start..<(start + 1 + Int(random.next() % 30))
      strings.discard(range)
      expected.subtract(range)
    }
    check("after discards")
  }
}
