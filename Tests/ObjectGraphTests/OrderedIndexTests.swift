import Foundation
import Testing

@testable import ObjectGraph

/// A model whose comparable attributes of every kind are indexed (a UUID unique), beside
/// one that is not, for the checks of ordered indexes against Foundation's evaluation.
final class Reading: ManagedObject {
  @Attribute(.indexed) var count = 0
  @Attribute(.indexed) var small: Int8 = 0
  @Attribute(.indexed) var unsigned: UInt64 = 0
  @Attribute(.indexed) var value = 0.0
  @Attribute(.indexed) var ratio: Float = 0
  @Attribute(.indexed) var taken = Date(timeIntervalSince1970: 0)
  @Attribute(.indexed) var label = ""
  @Attribute(.unique) var tag = UUID()
  @Attribute(.indexed) var note: String? = nil
  @Attribute(.indexed) var rank: Int? = nil
  @Attribute var plain = 0.0
}

/// Values readings and predicates draw from: few of each, so keys tie; negative and huge
/// unsigned numbers, signed zeros, canonically equivalent and non-ASCII strings.
private enum Values {
  static let counts = Array(-6...6)
  static let smalls: [Int8] = [-128, -3, 0, 4, 127]
  static let unsigneds: [UInt64] = [0, 1, 7, UInt64(Int64.max), UInt64(Int64.max) + 1, .max]
  static let doubles = [-2.5, -1, -0.0, 0.0, 0.5, 3, .infinity, -.infinity]
  static let dates = [-50.0, 0, 1, 3_600, 7_200, 1e9].map { Date(timeIntervalSince1970: $0) }
  static let labels = [
    "", "a", "A", "ab", "abc", "b", "B", "é", "e\u{301}", "K", "\u{212A}", "z", "Zed", "10",
    "9", "日本",
  ]
  static let tagBytes: [UInt8] = [0, 1, 2, 0x7F, 0x80, 0xFF]

  static func pick<Element>(_ elements: [Element], _ random: inout SplitMix64) -> Element {
    elements[Int(random.next() % UInt64(elements.count))]
  }

  static func maybe<Element>(_ value: Element, _ random: inout SplitMix64) -> Element? {
    random.next() % 3 == 0 ? nil : value
  }

  static func tag(_ random: inout SplitMix64) -> UUID {
    // Random, so unique, with a first byte that ties often and a full range of bytes.
    var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    bytes[0] = pick(tagBytes, &random)
    return UUID(
      uuid: (
        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
        bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
      ))
  }

  /// Gives one attribute (or, for `nil`, every one) a random value.
  static func fill(_ reading: Reading, attribute: Int? = nil, _ random: inout SplitMix64) {
    let chosen = attribute ?? -1
    if chosen < 0 || chosen == 0 { reading.count = pick(counts, &random) }
    if chosen < 0 || chosen == 1 { reading.small = pick(smalls, &random) }
    if chosen < 0 || chosen == 2 { reading.unsigned = pick(unsigneds, &random) }
    if chosen < 0 || chosen == 3 { reading.value = pick(doubles, &random) }
    if chosen < 0 || chosen == 4 { reading.ratio = Float(pick(doubles, &random)) }
    if chosen < 0 || chosen == 5 { reading.taken = pick(dates, &random) }
    if chosen < 0 || chosen == 6 { reading.label = pick(labels, &random) }
    if chosen < 0 || chosen == 7 { reading.tag = tag(&random) }
    if chosen < 0 || chosen == 8 { reading.note = maybe(pick(labels, &random), &random) }
    if chosen < 0 || chosen == 9 { reading.rank = maybe(pick(counts, &random), &random) }
    if chosen < 0 || chosen == 10 { reading.plain = pick(doubles, &random) }
  }
}

extension Stack {
  /// Every reading, by object identifier (no index answers a fetch with no predicate).
  fileprivate var readings: [Reading] {
    get throws { try context.fetch(FetchDescriptor<Reading>()) }
  }
}

/// A random predicate over readings, most of them comparisons that an ordered index takes.
private func randomPredicate(_ random: inout SplitMix64) -> Predicate<Reading>? {
  let a = Values.pick(Values.counts, &random)
  let b = Values.pick(Values.counts, &random)
  let x = Values.pick(Values.doubles, &random)
  let y = Values.pick(Values.doubles, &random)
  let d1 = Values.pick(Values.dates, &random)
  let d2 = Values.pick(Values.dates, &random)
  let s1 = Values.pick(Values.labels, &random)
  let s2 = Values.pick(Values.labels, &random)
  let u = Values.tag(&random)
  let i8 = Values.pick(Values.smalls, &random)
  let j8 = Values.pick(Values.smalls, &random)
  let u64 = Values.pick(Values.unsigneds, &random)
  let f = Float(Values.pick(Values.doubles, &random))
  switch random.next() % 24 {
  case 0: return nil
  case 1: return #Predicate { $0.count >= a && $0.count < b }
  case 2: return #Predicate { $0.count > a }
  case 3: return #Predicate { a <= $0.count }
  case 4: return #Predicate { $0.count == a }
  case 5: return #Predicate { $0.value >= x && $0.value <= y }
  case 6: return #Predicate { $0.taken > d1 && $0.taken <= d2 }
  case 7: return #Predicate { $0.label >= s1 && $0.label < s2 }
  case 8: return #Predicate { $0.label > s1 }
  case 9: return #Predicate { $0.tag < u }
  case 10: return #Predicate { $0.small < i8 && $0.small >= j8 }
  case 11: return #Predicate { $0.unsigned >= u64 }
  case 12: return #Predicate { $0.ratio > f }
  case 13: return #Predicate { $0.count >= a && $0.label < s1 }
  case 14: return #Predicate { $0.count > a && $0.label.contains("a") }
  case 15: return #Predicate { $0.count >= a && $0.count <= b && $0.value > x }
  case 16: return #Predicate { $0.count > a || $0.value < x }
  case 17: return #Predicate { $0.note == s1 }
  case 18: return #Predicate { $0.rank == a }
  case 19: return #Predicate { $0.count < a && $0.count > b }
  case 20: return #Predicate { $0.taken >= d1 }
  case 21: return #Predicate { $0.label == s1 && $0.count > a }
  case 22: return #Predicate { $0.count == a && $0.count >= b }
  default: return #Predicate { $0.plain < x && $0.value >= y }
  }
}

/// Random sort descriptors: on each indexed kind, both ways, with other descriptors after.
private func randomSort(_ random: inout SplitMix64) -> [SortDescriptor<Reading>] {
  switch random.next() % 22 {
  case 0: return []
  case 1: return [SortDescriptor(\.count)]
  case 2: return [SortDescriptor(\.count, order: .reverse)]
  case 3: return [SortDescriptor(\.count), SortDescriptor(\.label)]
  case 4:
    return [SortDescriptor(\.count, order: .reverse), SortDescriptor(\.value, order: .reverse)]
  case 5: return [SortDescriptor(\.label)]
  case 6: return [SortDescriptor(\.label, order: .reverse), SortDescriptor(\.count)]
  case 7: return [SortDescriptor(\.taken)]
  case 8: return [SortDescriptor(\.taken, order: .reverse)]
  case 9: return [SortDescriptor(\.tag)]
  case 10: return [SortDescriptor(\.note)]
  case 11: return [SortDescriptor(\.note, order: .reverse), SortDescriptor(\.count)]
  case 12: return [SortDescriptor(\.rank), SortDescriptor(\.taken, order: .reverse)]
  case 13: return [SortDescriptor(\.value), SortDescriptor(\.count)]
  case 14: return [SortDescriptor(\.unsigned, order: .reverse)]
  case 15: return [SortDescriptor(\.small), SortDescriptor(\.ratio)]
  case 16: return [SortDescriptor(\.ratio, order: .reverse)]
  case 17: return [SortDescriptor(\.count), SortDescriptor(\.tag)]
  case 18: return [SortDescriptor(\.label), SortDescriptor(\.note)]
  case 19: return [SortDescriptor(\.rank, order: .reverse)]
  case 20: return [SortDescriptor(\.count), SortDescriptor(\.plain)]
  default: return [SortDescriptor(\.small, order: .reverse), SortDescriptor(\.rank)]
  }
}

/// What a fetch must return: Foundation's `evaluate` and `SortDescriptor.compare`, ties by
/// object identifier, then the offset and limit.
private func foundationPage(_ descriptor: FetchDescriptor<Reading>, of readings: [Reading])
  throws -> [Reading]
{
  let matched = try readings.filter { try descriptor.predicate?.evaluate($0) ?? true }
  let sorted = matched.sorted { left, right in
    for sort in descriptor.sortBy {
      switch sort.compare(left, right) {
      case .orderedAscending: return true
      case .orderedDescending: return false
      case .orderedSame: continue
      }
    }
    return left.objectID!.rawValue < right.objectID!.rawValue
  }
  let start = min(descriptor.fetchOffset ?? 0, sorted.count)
  let end = descriptor.fetchLimit.map { min(start + $0, sorted.count) } ?? sorted.count
  return Array(sorted[start..<end])
}

/// How often the checks found the index answering, so a test knows it tested the index.
private struct IndexUse {
  var pages = 0
  var exactRanges = 0
}

/// Checks random queries, answered by the context (through the ordered indexes where they
/// apply) and read off the index directly, against Foundation's answer.
private func checkRandomQueries(
  _ stack: Stack, count: Int, _ random: inout SplitMix64, _ use: inout IndexUse
) throws {
  let readings = try stack.readings
  let table = try stack.context.table(for: Reading.self)
  for _ in 0..<count {
    var descriptor = FetchDescriptor<Reading>(
      predicate: randomPredicate(&random), sortBy: randomSort(&random))
    if random.next() % 3 != 0 { descriptor.fetchLimit = Int(random.next() % 12) }
    if random.next() % 2 == 0 { descriptor.fetchOffset = Int(random.next() % 40) }
    let expected = try foundationPage(descriptor, of: readings)
    let fetched = try stack.context.fetch(descriptor)
    #expect(
      fetched.map(\.objectID) == expected.map(\.objectID),
      "\(descriptor.predicate.map { "\($0)" } ?? "no predicate") sorted \(descriptor.sortBy)")
    if let limit = descriptor.fetchLimit, !descriptor.sortBy.isEmpty,
      let page = try stack.context.orderedPage(
        of: descriptor, in: table, offset: descriptor.fetchOffset ?? 0, limit: limit)
    {
      use.pages += 1
      #expect(page.map(\.objectID) == expected.map(\.objectID), "\(descriptor.sortBy)")
    }
    var unsorted = descriptor
    unsorted.sortBy = []
    let counted = try foundationPage(unsorted, of: readings).count
    #expect(try stack.context.fetchCount(descriptor) == counted)
    if stack.context.smallestRange(of: descriptor.predicate, in: table)?.isExact == true {
      use.exactRanges += 1
    }
  }
}

/// Checks that each ordered index of the readings holds exactly the live objects, in the
/// order of their keys and identifiers.
private func checkIndexes(_ stack: Stack) throws {
  let readings = try stack.readings
  let table = try stack.context.table(for: Reading.self)
  for property in table.indexedAttributes {
    guard let index = table.existingOrderedIndex(property) else { continue }
    index.checkInvariants()
    let type = index.type
    var entries: [OrderedIndex.Entry] = []
    index.forEach(in: 0..<index.count) {
      entries.append($0)
      return true
    }
    let expected = readings.compactMap { reading -> (OrderedKey, UInt64)? in
      guard case .value(let value) = reading.slots[property],
        let key = OrderedKey(stored: value, of: type)
      else { return nil }
      return (key, reading.objectID!.rawValue)
    }.sorted { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }
    #expect(entries.map(\.id) == expected.map(\.1), "index of property \(property)")
    #expect(entries.map(\.key) == expected.map(\.0), "keys of property \(property)")
    #expect(index.count + index.unorderedCount == readings.count)
  }
}

@Suite struct OrderedIndexTests {
  @Test(arguments: StoreKind.allCases)
  func orderedIndexAnswersEqualScanAnswersAfterRandomInsertsUpdatesAndDeletes(kind: StoreKind)
    throws
  {
    var use = IndexUse()
    for seed in 1...2 as ClosedRange<UInt64> {
      var random = SplitMix64(seed: TestScale.seed(seed &* 7_919))
      var stack = try Stack(kind, models: [Reading.self])
      var readings: [Reading] = []
      for _ in 0..<80 {
        let reading = Reading()
        Values.fill(reading, &random)
        stack.context.insert(reading)
        readings.append(reading)
      }
      for step in 0..<260 {
        switch random.next() % 12 {
        case 0, 1, 2:
          let reading = Reading()
          Values.fill(reading, &random)
          stack.context.insert(reading)
          readings.append(reading)
        case 3, 4, 5, 6:
          guard !readings.isEmpty else { break }
          let reading = Values.pick(readings, &random)
          for _ in 0...(random.next() % 3) {
            Values.fill(reading, attribute: Int(random.next() % 11), &random)
          }
        case 7, 8:
          guard !readings.isEmpty else { break }
          let position = Int(random.next() % UInt64(readings.count))
          stack.context.delete(readings.remove(at: position))
        case 9:
          try stack.context.save()
        case 10:
          stack.context.rollback()
          readings = try stack.readings
        default:
          if random.next() % 3 == 0 {
            try stack.context.save()
            stack = try stack.reopened()
          }
          readings = try stack.readings
        }
        try checkRandomQueries(stack, count: 6, &random, &use)
        if step % 40 == 0 { try checkIndexes(stack) }
      }
      try checkIndexes(stack)
    }
    // The random queries reached the index's paths hundreds of times (pages: 398 to 890
    // under the first soak numbers, ranges about 1,850).
    #expect(use.pages > 200)
    #expect(use.exactRanges > 300)
  }

  /// A loaded store's ordered indexes are built with its other attribute indexes, on
  /// another thread for thousands of objects: they answer as the scan does, before and
  /// after changes.
  @Test(arguments: StoreKind.allCases)
  func orderedIndexesOfALoadedStoreAnswerAsTheScanDoes(kind: StoreKind) throws {
    var random = SplitMix64(seed: TestScale.seed(77))
    let first = try Stack(kind, models: [Reading.self])
    for _ in 0..<(EntityTable.backgroundBuildThreshold + 100) {
      let reading = Reading()
      Values.fill(reading, &random)
      first.context.insert(reading)
    }
    try first.context.save()
    let stack = try first.reopened()
    var use = IndexUse()
    try checkRandomQueries(stack, count: 10, &random, &use)
    let readings = try stack.readings
    for _ in 0..<50 { Values.fill(Values.pick(readings, &random), &random) }
    try checkRandomQueries(stack, count: 10, &random, &use)
    try checkIndexes(stack)
  }

  @Test func rangesAndSortedPagesAreReadOffTheIndex() throws {
    let stack = try Stack(.memory, models: [Reading.self])
    let base = Date(timeIntervalSince1970: 1_000)
    for number in 0..<1_000 {
      let reading = Reading()
      reading.count = number % 10
      reading.taken = base + Double(number)
      stack.context.insert(reading)
    }
    let table = try stack.context.table(for: Reading.self)
    let start = base + 100
    let end = base + 200
    let range = #Predicate<Reading> { $0.taken >= start && $0.taken < end }
    let selected = try #require(stack.context.smallestRange(of: range, in: table))
    #expect(selected.isExact && selected.count == 100)
    #expect(try stack.context.fetchCount(FetchDescriptor(predicate: range)) == 100)
    let mixed = #Predicate<Reading> { $0.taken >= start && $0.count == 3 }
    #expect(stack.context.smallestRange(of: mixed, in: table)?.isExact == false)
    var latest = FetchDescriptor<Reading>(sortBy: [SortDescriptor(\.taken, order: .reverse)])
    latest.fetchLimit = 20
    let page = try #require(
      try stack.context.orderedPage(of: latest, in: table, offset: 0, limit: 20))
    #expect(page.map { ($0 as! Reading).taken } == (0..<20).map { base + Double(999 - $0) })
    // A sort by a key that ties, with a page crossing groups of ties: the other descriptor
    // and the identifier order each group.
    var byCount = FetchDescriptor<Reading>(
      sortBy: [SortDescriptor(\.count), SortDescriptor(\.taken, order: .reverse)])
    byCount.fetchOffset = 95
    byCount.fetchLimit = 10
    let crossing = try stack.context.fetch(byCount)
    let numbers = [40, 30, 20, 10, 0, 991, 981, 971, 961, 951]
    #expect(crossing.map(\.taken) == numbers.map { base + Double($0) })
  }

  /// A NaN has no order: a sort by the attribute falls back to the scan, and ranges, which
  /// never hold a NaN, still come from the index.
  @Test(arguments: StoreKind.allCases)
  func nanValuesLeaveSortsToTheScanAndStayOutOfRanges(kind: StoreKind) throws {
    let stack = try Stack(kind, models: [Reading.self])
    for number in 0..<40 {
      let reading = Reading()
      reading.value = number % 7 == 0 ? .nan : Double(number % 5)
      stack.context.insert(reading)
    }
    let table = try stack.context.table(for: Reading.self)
    var sorted = FetchDescriptor<Reading>(sortBy: [SortDescriptor(\.value)])
    sorted.fetchLimit = 10
    #expect(try stack.context.orderedPage(of: sorted, in: table, offset: 0, limit: 10) == nil)
    let everything = try stack.context.fetch(FetchDescriptor<Reading>(sortBy: sorted.sortBy))
    #expect(try stack.context.fetch(sorted) == Array(everything.prefix(10)))
    let readings = try stack.readings
    let range = FetchDescriptor<Reading>(predicate: #Predicate { $0.value >= 1 && $0.value < 3 })
    #expect(stack.context.smallestRange(of: range.predicate, in: table)?.isExact == true)
    #expect(try stack.context.fetch(range) == (try foundationPage(range, of: readings)))
    #expect(try stack.context.fetchCount(range) == 14)
    let unordered = Double.nan
    let none = FetchDescriptor<Reading>(predicate: #Predicate { $0.value < unordered })
    #expect(try stack.context.fetchCount(none) == 0)
    for reading in readings where reading.value.isNaN { reading.value = 9 }
    #expect(try stack.context.orderedPage(of: sorted, in: table, offset: 0, limit: 10) != nil)
    try stack.context.save()
    #expect(try stack.context.fetch(sorted) == (try foundationPage(sorted, of: readings)))
  }

  /// A UUID attribute's ordered index is made when a fetch first asks for its order, then
  /// kept up to date.
  @Test func aUUIDIndexIsMadeOnFirstUseAndThenKept() throws {
    let stack = try Stack(.memory, models: [Reading.self])
    var random = SplitMix64(seed: TestScale.seed(5))
    for _ in 0..<50 {
      let reading = Reading()
      Values.fill(reading, &random)
      stack.context.insert(reading)
    }
    let table = try stack.context.table(for: Reading.self)
    let property = try #require(table.model.propertyIndex(for: \Reading.tag))
    #expect(table.existingOrderedIndex(property) == nil)
    var byTag = FetchDescriptor<Reading>(sortBy: [SortDescriptor(\.tag)])
    byTag.fetchLimit = 5
    _ = try stack.context.fetch(byTag)
    #expect(table.existingOrderedIndex(property)?.count == 50)
    for _ in 0..<20 {
      let reading = Reading()
      Values.fill(reading, &random)
      stack.context.insert(reading)
    }
    let readings = try stack.readings
    stack.context.delete(readings[3])
    readings[7].tag = Values.tag(&random)
    #expect(try stack.context.fetch(byTag) == (try foundationPage(byTag, of: try stack.readings)))
    try checkIndexes(stack)
  }
}
