import Foundation
import Testing

@testable import ObjectGraph

/// A model with an attribute of each compared kind, a tree, and a computed property, for the
/// checks of translated predicates and sorts against Foundation's own evaluation.
final class Row: ManagedObject {
  @Attribute var title = ""
  @Attribute var note: String? = nil
  @Attribute var rank = 0
  @Attribute var small: Int8 = 0
  @Attribute var big: UInt64 = 0
  @Attribute var score = 0.0
  @Attribute var ratio: Float = 0
  @Attribute var flag = false
  @Attribute var created = Date(timeIntervalSince1970: 0)
  @Attribute var optionalRank: Int? = nil
  @Attribute var link: URL? = nil
  @Attribute var uid = UUID()
  @Relationship(inverse: \Row.children) var parent: Row?
  @Relationship(deleteRule: .cascade) var children: [Row]

  /// Computed from `title`: a predicate on it must not be read as one on `title`.
  var shouted: String { title.uppercased() }
  /// Reads `title` unchanged: may be read as `title`.
  var alias: String { title }

  convenience init(title: String) {
    self.init()
    self.title = title
  }
}

/// Values the random rows and predicates draw from: empty, equal, non-ASCII, decomposed and
/// canonically equivalent strings, line breaks, nils, NaN.
private enum Pool {
  static let strings = [
    "", "a", "A", "ab", "abc", "b", "ba", "Box 42", "42", "4", "x42y", "café", "cafe\u{301}",
    "\u{212A}", "K", "k", "ß", "ss", "a\r\nb", "\r", "\n", "\r\n", "a\r", "é", "e", "e\u{301}",
    "Zürich", "日本", "ab\u{301}", "Ab", "abd", "z",
  ]
  static let integers = [-3, -1, 0, 1, 2, 7, 100]
  static let doubles = [-1.5, -0.0, 0.0, 0.5, 2.0, .infinity, .nan]
  static let dates = [-10.0, 0, 5, 1_000].map { Date(timeIntervalSince1970: $0) }
  static let urls = [URL(string: "https://a.example")!, URL(string: "file:///tmp/x")!]
  static let uuids = (0..<3).map {
    UUID(uuid: (UInt8($0), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))
  }

  static func string(_ random: inout SplitMix64) -> String {
    if random.next() % 3 == 0 {
      // Random ASCII words over a small alphabet, so that searches find something.
      let letters = Array("ab4 2")
      return String((0..<Int(random.next() % 5)).map { _ in letters[Int(random.next() % 5)] })
    }
    return pick(strings, &random)
  }

  static func pick<Element>(_ elements: [Element], _ random: inout SplitMix64) -> Element {
    elements[Int(random.next() % UInt64(elements.count))]
  }

  static func maybe<Element>(_ value: Element, _ random: inout SplitMix64) -> Element? {
    random.next() % 4 == 0 ? nil : value
  }
}

extension Stack {
  /// Every row, by object identifier (a fetch with no predicate translates nothing).
  fileprivate var rows: [Row] {
    get throws { try context.fetch(FetchDescriptor<Row>()) }
  }
}

/// Random rows in a forest: saved, reopened (so a binary store's strings are undecoded), then
/// partly edited and added to without saving, so that fetches see every kind of slot.
private func makeRows(_ kind: StoreKind, seed: UInt64, count: Int = 60) throws -> Stack {
  var random = SplitMix64(seed: TestScale.seed(seed))
  let first = try Stack(kind, models: [Row.self])
  var rows: [Row] = []
  func fill(_ row: Row) {
    row.title = Pool.string(&random)
    row.note = Pool.maybe(Pool.string(&random), &random)
    row.rank = Pool.pick(Pool.integers, &random)
    row.small = Int8(Pool.pick(Pool.integers, &random))
    row.big = random.next() % 3 == 0 ? UInt64.max - random.next() % 2 : random.next() % 4
    row.score = Pool.pick(Pool.doubles, &random)
    row.ratio = Float(Pool.pick(Pool.doubles, &random))
    row.flag = random.next() % 2 == 0
    row.created = Pool.pick(Pool.dates, &random)
    row.optionalRank = Pool.maybe(Pool.pick(Pool.integers, &random), &random)
    row.link = Pool.maybe(Pool.pick(Pool.urls, &random), &random)
    row.uid = Pool.pick(Pool.uuids, &random)
  }
  for _ in 0..<count {
    let row = Row()
    fill(row)
    if !rows.isEmpty && random.next() % 3 != 0 { row.parent = Pool.pick(rows, &random) }
    first.context.insert(row)
    rows.append(row)
  }
  try first.context.save()
  let stack = try first.reopened()
  let loaded = try stack.rows
  for _ in 0..<count / 6 { fill(Pool.pick(loaded, &random)) }
  for _ in 0..<count / 10 {
    let row = Row()
    fill(row)
    row.parent = random.next() % 2 == 0 ? Pool.pick(loaded, &random) : nil
    stack.context.insert(row)
  }
  return stack
}

/// A random predicate from a template, whether the translation must take all of it, and a
/// name for failure messages.
private struct RandomPredicate {
  let predicate: Predicate<Row>
  let isTranslated: Bool
  let name: String
}

private func randomPredicate(_ random: inout SplitMix64) -> RandomPredicate {
  let s = Pool.string(&random)
  let t = Pool.string(&random)
  let i = Pool.pick(Pool.integers, &random)
  let d = Pool.pick(Pool.doubles, &random)
  let date = Pool.pick(Pool.dates, &random)
  let later = Pool.pick(Pool.dates, &random)
  let optionalString = Pool.maybe(s, &random)
  let optionalInt = Pool.maybe(i, &random)
  let flag = random.next() % 2 == 0
  let small = Int8(i)
  let big = random.next() % 2 == 0 ? UInt64.max - 1 : UInt64(abs(i))
  let ratio = Float(d)
  let url = Pool.maybe(Pool.pick(Pool.urls, &random), &random)
  let uid = Pool.pick(Pool.uuids, &random)
  let templates: [(String, Bool, Predicate<Row>)] = [
    ("title == \(s.debugDescription)", true, #Predicate { $0.title == s }),
    ("title != s", true, #Predicate { $0.title != s }),
    ("title < s", true, #Predicate { $0.title < s }),
    ("title <= s", true, #Predicate { $0.title <= s }),
    ("s > title", true, #Predicate { s > $0.title }),
    ("title >= s", true, #Predicate { $0.title >= s }),
    ("title.contains(s)", true, #Predicate { $0.title.contains(s) }),
    ("title.starts(with: s)", true, #Predicate { $0.title.starts(with: s) }),
    ("note == optionalString", true, #Predicate { $0.note == optionalString }),
    ("note != nil", true, #Predicate { $0.note != nil }),
    ("(note ?? t) < s", true, #Predicate { ($0.note ?? t) < s }),
    ("rank > i", true, #Predicate { $0.rank > i }),
    ("i <= rank", true, #Predicate { i <= $0.rank }),
    ("small == small", true, #Predicate { $0.small == small }),
    ("big >= big", true, #Predicate { $0.big >= big }),
    ("score < d", true, #Predicate { $0.score < d }),
    ("score == d", true, #Predicate { $0.score == d }),
    ("ratio >= ratio", true, #Predicate { $0.ratio >= ratio }),
    ("flag", true, #Predicate { $0.flag }),
    ("!flag", true, #Predicate { !$0.flag }),
    ("flag == flag", true, #Predicate { $0.flag == flag }),
    ("date range", true, #Predicate { $0.created >= date && $0.created < later }),
    ("optionalRank == optionalInt", true, #Predicate { $0.optionalRank == optionalInt }),
    ("optionalRank != nil", true, #Predicate { $0.optionalRank != nil }),
    ("(optionalRank ?? i) >= 1", true, #Predicate { ($0.optionalRank ?? i) >= 1 }),
    ("parent == nil", true, #Predicate { $0.parent == nil }),
    ("parent?.title == s", true, #Predicate { $0.parent?.title == s }),
    ("parent?.note == optionalString", true, #Predicate { $0.parent?.note == optionalString }),
    ("parent?.parent == nil", true, #Predicate { $0.parent?.parent == nil }),
    ("parent?.rank ?? i > 0", true, #Predicate { ($0.parent?.rank ?? i) > 0 }),
    (
      "children.contains(where: title.contains(s))", true,
      #Predicate { $0.children.contains(where: { $0.title.contains(s) }) }
    ),
    (
      "children.allSatisfy(rank < i)", true,
      #Predicate { $0.children.allSatisfy { $0.rank < i } }
    ),
    ("children.isEmpty", true, #Predicate { $0.children.isEmpty }),
    ("children.count > i", true, #Predicate { $0.children.count > i }),
    ("uid == uid", true, #Predicate { $0.uid == uid }),
    ("link == url", true, #Predicate { $0.link == url }),
    (
      "compound", true,
      #Predicate { ($0.title.contains(s) && $0.rank < i) || $0.parent == nil }
    ),
    ("alias == s", true, #Predicate { $0.alias == s }),
    ("shouted == s (computed)", false, #Predicate { $0.shouted == s }),
    ("title.count > i (untranslated part)", false, #Predicate { $0.title.count > i && !$0.flag }),
    ("parent!.title == s (throws)", false, #Predicate { $0.parent!.title == s || $0.flag }),
    (
      "children.contains(where: shouted) (untranslated closure)", false,
      #Predicate { $0.children.contains(where: { $0.shouted == s }) || $0.title == t }
    ),
  ]
  let (name, isTranslated, predicate) = Pool.pick(templates, &random)
  return RandomPredicate(predicate: predicate, isTranslated: isTranslated, name: name)
}

/// What Foundation's `evaluate` selects, in object identifier order, or the error it throws.
private func evaluated(_ predicate: Predicate<Row>, on rows: [Row]) -> Result<[Row], Error> {
  Result { try rows.filter { try predicate.evaluate($0) } }
}

private func fetched(_ descriptor: FetchDescriptor<Row>, in context: ObjectContext)
  -> Result<[Row], Error>
{
  Result { try context.fetch(descriptor) }
}

/// Whether two results hold the same objects in the same order, or the same error.
private func same(_ fetched: Result<[Row], Error>, _ expected: Result<[Row], Error>) -> Bool {
  switch (fetched, expected) {
  case (.success(let fetched), .success(let expected)):
    return fetched.map(ObjectIdentifier.init) == expected.map(ObjectIdentifier.init)
  case (.failure(let error as ObjectGraphError), .failure(let expected)):
    return error.code == .invalidFetch
      && error.underlying.map { String(reflecting: $0) } == String(reflecting: expected)
  default:
    return false
  }
}

/// What a fetch must return: Foundation's `evaluate` and `SortDescriptor.compare`, ties by
/// object identifier, then the offset and limit.
private func foundationPage(_ descriptor: FetchDescriptor<Row>, of rows: [Row])
  -> Result<[Row], Error>
{
  evaluated(descriptor.predicate ?? #Predicate { _ in true }, on: rows).map { matched in
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
}

@Suite struct TranslatedFetchTests {
  @Test(arguments: StoreKind.allCases)
  func translatedPredicatesSelectWhatFoundationSelects(kind: StoreKind) throws {
    for seed in 1...3 as ClosedRange<UInt64> {
      var random = SplitMix64(seed: TestScale.seed(seed &* 1_000_003))
      for _ in 0..<60 {
        // Fresh rows for each predicate: Foundation's evaluation decodes the strings it reads,
        // and the translation must meet them undecoded.
        let stack = try makeRows(kind, seed: seed)
        let model = try stack.context.table(for: Row.self).model
        let random = randomPredicate(&random)
        let translation = TranslatedPredicate(random.predicate, model: model)
        #expect(
          (translation.fallbackCount == 0) == random.isTranslated,
          "\(random.name): \(translation.fallbackCount) parts left to Foundation")
        let result = fetched(FetchDescriptor(predicate: random.predicate), in: stack.context)
        let count = Result {
          try stack.context.fetchCount(FetchDescriptor(predicate: random.predicate))
        }
        #expect(
          same(result, evaluated(random.predicate, on: try stack.rows)),
          "\(random.name) on \(kind)")
        #expect(
          (try? count.get()) == (try? result.get().count), "fetchCount of \(random.name)")
      }
    }
  }

  @Test(arguments: StoreKind.allCases)
  func stringTestsAgreeWithFoundationOnEveryPairOfTrickyStrings(kind: StoreKind) throws {
    // Every string of the pool as a title, saved and reopened (undecoded in a binary store),
    // then tested against every string of the pool: canonical equivalence (`"\u{212A}" ==
    // "K"`), decomposed accents, `"\r\n"` as one `Character`, empty strings.
    func titledRows() throws -> Stack {
      let first = try Stack(kind, models: [Row.self])
      for string in Pool.strings { first.context.insert(Row(title: string)) }
      try first.context.save()
      return try first.reopened()
    }
    let model = try titledRows().context.table(for: Row.self).model
    for s in Pool.strings {
      let predicates: [Predicate<Row>] = [
        #Predicate { $0.title == s }, #Predicate { $0.title != s }, #Predicate { $0.title < s },
        #Predicate { $0.title <= s }, #Predicate { $0.title > s }, #Predicate { $0.title >= s },
        #Predicate { $0.title.contains(s) }, #Predicate { $0.title.starts(with: s) },
      ]
      for predicate in predicates {
        #expect(TranslatedPredicate(predicate, model: model).fallbackCount == 0)
        let stack = try titledRows()
        #expect(
          same(
            fetched(FetchDescriptor(predicate: predicate), in: stack.context),
            evaluated(predicate, on: try stack.rows)), "\(predicate) with \(s.debugDescription)")
      }
    }
    for order in [SortOrder.forward, .reverse] {
      let stack = try titledRows()
      let sorted = FetchDescriptor<Row>(sortBy: [SortDescriptor(\.title, order: order)])
      #expect(same(fetched(sorted, in: stack.context), foundationPage(sorted, of: try stack.rows)))
    }
  }

  @Test(arguments: StoreKind.allCases)
  func translatedSortsOrderAsFoundationOrders(kind: StoreKind) throws {
    let descriptors: [SortDescriptor<Row>] = [
      SortDescriptor(\.title), SortDescriptor(\.title, order: .reverse), SortDescriptor(\.note),
      SortDescriptor(\.note, order: .reverse), SortDescriptor(\.rank),
      SortDescriptor(\.small, order: .reverse), SortDescriptor(\.big), SortDescriptor(\.score),
      SortDescriptor(\.ratio, order: .reverse), SortDescriptor(\.created),
      SortDescriptor(\.created, order: .reverse), SortDescriptor(\.optionalRank),
      SortDescriptor(\.optionalRank, order: .reverse), SortDescriptor(\.uid),
      SortDescriptor(\.shouted), SortDescriptor(\.title, comparator: .lexical),
    ]
    var random = SplitMix64(seed: TestScale.seed(5))
    for _ in 0..<100 {
      let stack = try makeRows(kind, seed: 11, count: 90)
      var descriptor = FetchDescriptor<Row>(
        sortBy: (0...(Int(random.next() % 3))).map { _ in Pool.pick(descriptors, &random) })
      if random.next() % 3 != 0 {
        descriptor.predicate = randomPredicate(&random).predicate
      }
      descriptor.fetchLimit = Pool.maybe(Pool.pick([0, 1, 3, 20, 200], &random), &random)
      descriptor.fetchOffset = Pool.maybe(Pool.pick([0, 1, 7, 40, 500], &random), &random)
      let result = fetched(descriptor, in: stack.context)
      #expect(
        same(result, foundationPage(descriptor, of: try stack.rows)),
        "\(descriptor.sortBy) limit \(descriptor.fetchLimit as Any) offset \(descriptor.fetchOffset as Any)"
      )
    }
  }

  @Test func sortsOfTheCommonTypesTranslate() throws {
    let model = try Stack(.memory, models: [Row.self]).context.table(for: Row.self).model
    #expect(
      TranslatedSort([SortDescriptor<Row>(\.title), SortDescriptor(\.created)], model: model) != nil
    )
    #expect(TranslatedSort([SortDescriptor<Row>(\.note, order: .reverse)], model: model) != nil)
    #expect(TranslatedSort([SortDescriptor<Row>(\.shouted)], model: model) == nil)
    #expect(
      TranslatedSort([SortDescriptor<Row>(\.title, comparator: .lexical)], model: model) == nil)
  }

  @Test(arguments: StoreKind.allCases)
  func largeSelectionsMatchAFullSort(kind: StoreKind) throws {
    // Enough objects for the selection's partitioning, with many equal keys.
    for (offset, limit) in [(0, 20), (600, 20), (1_250, 50), (0, 2_500), (300, 700), (5, nil)] {
      var page = FetchDescriptor<Row>(
        sortBy: [SortDescriptor(\.title), SortDescriptor(\.rank, order: .reverse)])
      page.fetchOffset = offset
      page.fetchLimit = limit
      let stack = try makeRows(kind, seed: 3, count: 1_200)
      let result = fetched(page, in: stack.context)
      #expect(same(result, foundationPage(page, of: try stack.rows)))
    }
  }
}
