import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A test of one object, which a translated predicate runs instead of Foundation's
/// `Predicate.evaluate`. It throws only what Foundation's `evaluate` of an untranslated part
/// throws.
typealias ObjectTest = (ManagedObject) throws -> Bool

/// A `Predicate` translated, once per fetch, into a test that reads the objects' slots: no key
/// path is read, no access registered with Observation, no stored string decoded where its
/// bytes answer.
///
/// The translation walks the predicate's expression tree through conformances of Foundation's
/// `PredicateExpressions` types to ``TranslatableTest`` and ``TranslatableOperand`` (as
/// ``IndexTermExpression`` does). A part it cannot translate is evaluated by Foundation, on the
/// same object, with the same bindings: the whole predicate, or the least subexpression of
/// type `Bool` around what is not translated (outside closures such as `contains(where:)`'s,
/// whose variables need their own bindings). Results and errors are those of `evaluate`.
struct TranslatedPredicate {
  /// The test.
  let test: ObjectTest
  /// The number of subexpressions left to Foundation (0 when all is translated).
  let fallbackCount: Int
  /// The to-one relationships the translated parts read through, each path from the tested
  /// object (`$0.parent?.title` reads through `[parent]`): a live query watches the objects
  /// they reach (see ``LiveQuery``).
  let hopPaths: Set<[Int]>

  init<T: ManagedObject>(_ predicate: Predicate<T>, model: EntityModel) {
    let variable = predicate.variable
    let report = TranslationReport()
    let scope = TranslationScope(
      variable: variable.key,
      variableRead: StoredRead(target: .object(nil), model: model),
      bindings: { PredicateBindings((variable, unsafeDowncast($0, to: T.self))) },
      report: report)
    test = scope.test(for: predicate.expression)!
    fallbackCount = report.fallbacks
    hopPaths = report.hopPaths
  }
}

/// Counts what a translation left to Foundation, and notes what it reads through relationships.
final class TranslationReport {
  var fallbacks = 0
  var hopPaths: Set<[Int]> = []
}

/// What a translation knows where it is in the tree.
struct TranslationScope {
  /// The variable the scope's expressions name the tested object by.
  let variable: PredicateExpressions.VariableID
  /// What the variable stands for: the tested object, or (inside an optional chain's
  /// closure) an object read from it.
  let variableRead: StoredRead
  /// The bindings under which Foundation evaluates an untranslated part; nil inside a
  /// closure, where a part that is not translated leaves the whole closure untranslated.
  let bindings: ((ManagedObject) -> PredicateBindings)?
  let report: TranslationReport

  /// A scope for a closure's body, whose variable stands for `read`.
  func nested(_ variable: PredicateExpressions.VariableID, standingFor read: StoredRead)
    -> TranslationScope
  {
    TranslationScope(variable: variable, variableRead: read, bindings: nil, report: report)
  }

  /// The test of a `Bool` expression: translated, or Foundation's `evaluate` of it (nil
  /// inside a closure, where there is no binding for it).
  func test<Expression: PredicateExpression>(for expression: Expression) -> ObjectTest?
  where Expression.Output == Bool {
    if let test = (expression as? any TranslatableTest)?.test(in: self) { return test }
    guard let bindings else { return nil }
    report.fallbacks += 1
    return { object in try expression.evaluate(bindings(object)) }
  }

  /// What an operand expression is, if translated.
  func operand(_ expression: some PredicateExpression) -> TranslatedOperand? {
    let operand = (expression as? any TranslatableOperand)?.operand(in: self)
    // A read from the tested object (not from a closure's variable) through to-one
    // relationships: each object it reaches on the way is read too.
    if bindings != nil, case .read(let read)? = operand, !read.hops.isEmpty {
      report.hopPaths.insert(read.hops)
    }
    return operand
  }
}

/// A translated operand.
enum TranslatedOperand {
  /// A value the predicate captured (every level of `Optional` removed; nil for nil).
  case constant(Any?)
  /// A value read from the tested object.
  case read(StoredRead)
}

/// A `Bool` expression that translates into an ``ObjectTest``.
protocol TranslatableTest {
  /// The test, or nil when some part is not translated (the scope then evaluates it).
  func test(in scope: TranslationScope) -> ObjectTest?
}

/// An expression that translates into an ``TranslatedOperand``.
protocol TranslatableOperand {
  func operand(in scope: TranslationScope) -> TranslatedOperand?
}

// MARK: Operands

extension PredicateExpressions.Variable: TranslatableOperand {
  func operand(in scope: TranslationScope) -> TranslatedOperand? {
    key == scope.variable ? .read(scope.variableRead) : nil
  }
}

extension PredicateExpressions.KeyPath: TranslatableOperand {
  func operand(in scope: TranslationScope) -> TranslatedOperand? {
    guard case .read(let read)? = scope.operand(root),
      let appended = read.appending(keyPath) ?? read.appendingAggregate(keyPath)
    else { return nil }
    return .read(appended)
  }
}

extension PredicateExpressions.Value: TranslatableOperand {
  func operand(in scope: TranslationScope) -> TranslatedOperand? { .constant(flattened(value)) }
}

extension PredicateExpressions.NilLiteral: TranslatableOperand {
  func operand(in scope: TranslationScope) -> TranslatedOperand? { .constant(nil) }
}

extension PredicateExpressions.OptionalFlatMap: TranslatableOperand {
  func operand(in scope: TranslationScope) -> TranslatedOperand? {
    guard case .read(let outer)? = scope.operand(wrapped), outer.objectModel != nil,
      case .object = outer.target,
      case .read(let inner)? = scope.nested(
        variable.key, standingFor: StoredRead(target: .object(nil), model: outer.objectModel!)
      ).operand(transform)
    else { return nil }
    return outer.chained(with: inner).map(TranslatedOperand.read)
  }
}

extension PredicateExpressions.NilCoalesce: TranslatableOperand {
  func operand(in scope: TranslationScope) -> TranslatedOperand? {
    guard case .read(var read)? = scope.operand(lhs), read.coalesced == nil,
      case .attribute = read.target, case .constant(let fallback?)? = scope.operand(rhs),
      let native = fallback as? any AttributeValue
    else { return nil }
    read.coalesced = native.persistentValue
    return .read(read)
  }
}

/// A captured value with every level of `Optional` removed; nil for nil.
private func flattened(_ value: Any?) -> Any? {
  guard var current = value else { return nil }
  while let optional = current as? any OptionalAttribute {
    guard let wrapped = optional.wrappedAny else { return nil }
    current = wrapped
  }
  return current
}

// MARK: Comparisons

/// The test `lhs <comparison> rhs`, where one side reads the object and the other is captured.
private func comparisonTest(
  _ lhs: some PredicateExpression, _ comparison: ComparisonTest, _ rhs: some PredicateExpression,
  in scope: TranslationScope
) -> ObjectTest? {
  switch (scope.operand(lhs), scope.operand(rhs)) {
  case (.read(let read)?, .constant(let constant)?):
    read.test(comparison, constant)
  case (.constant(let constant)?, .read(let read)?):
    read.test(comparison.swapped, constant)
  default:
    nil
  }
}

extension PredicateExpressions.Equal: TranslatableTest {
  func test(in scope: TranslationScope) -> ObjectTest? {
    comparisonTest(lhs, .equal, rhs, in: scope)
  }
}

extension PredicateExpressions.NotEqual: TranslatableTest {
  func test(in scope: TranslationScope) -> ObjectTest? {
    comparisonTest(lhs, .notEqual, rhs, in: scope)
  }
}

extension PredicateExpressions.Comparison: TranslatableTest {
  func test(in scope: TranslationScope) -> ObjectTest? {
    comparisonTest(lhs, ComparisonTest(op), rhs, in: scope)
  }
}

// MARK: Logic

extension PredicateExpressions.Conjunction: TranslatableTest {
  func test(in scope: TranslationScope) -> ObjectTest? {
    guard let left = scope.test(for: lhs), let right = scope.test(for: rhs) else { return nil }
    return { try left($0) && right($0) }
  }
}

extension PredicateExpressions.Disjunction: TranslatableTest {
  func test(in scope: TranslationScope) -> ObjectTest? {
    guard let left = scope.test(for: lhs), let right = scope.test(for: rhs) else { return nil }
    return { try left($0) || right($0) }
  }
}

extension PredicateExpressions.Negation: TranslatableTest {
  func test(in scope: TranslationScope) -> ObjectTest? {
    guard let wrapped = scope.test(for: wrapped) else { return nil }
    return { try !wrapped($0) }
  }
}

extension PredicateExpressions.KeyPath: TranslatableTest where Output == Bool {
  func test(in scope: TranslationScope) -> ObjectTest? {
    guard case .read(let read)? = operand(in: scope) else { return nil }
    return read.test(.equal, true)
  }
}

extension PredicateExpressions.Value: TranslatableTest where Output == Bool {
  func test(in scope: TranslationScope) -> ObjectTest? {
    let value = value
    return { _ in value }
  }
}

// MARK: Strings

/// A string test that ``stringTest(_:_:in:)`` translates: how it answers on ASCII bytes, when
/// the bytes may answer, and Foundation's own answer on strings. Static requirements: a
/// test calls its kind's functions directly, with no closure context to retain per object.
private protocol StringMatch {
  /// The answer for `count` ASCII bytes at `start` against ASCII `target`.
  static func bytes(_ start: UnsafePointer<UInt8>, _ count: Int, _ target: UTF8Bytes) -> Bool
  /// Whether the bytes answer as the strings would, for this (ASCII) target.
  static func canUseBytes(_ target: UTF8Bytes) -> Bool
  /// The answer as Foundation's `evaluate` gives it.
  static func strings(_ value: String, _ target: String) -> Bool
}

/// `base.contains(other)`, as Foundation's `CollectionContainsCollection` calls it.
private enum ContainsMatch: StringMatch {
  static func bytes(_ start: UnsafePointer<UInt8>, _ count: Int, _ target: UTF8Bytes) -> Bool {
    containsBytes(start, count, target)
  }

  // In ASCII without line breaks every byte is one `Character`; an empty string is left to
  // the collection algorithm.
  static func canUseBytes(_ target: UTF8Bytes) -> Bool { !target.hasLineBreak && target.count > 0 }

  static func strings(_ value: String, _ target: String) -> Bool {
    collectionContains(value, target)
  }
}

/// `base.starts(with: prefix)`, as Foundation's `SequenceStartsWith` calls it.
private enum PrefixMatch: StringMatch {
  static func bytes(_ start: UnsafePointer<UInt8>, _ count: Int, _ target: UTF8Bytes) -> Bool {
    count >= target.count && memcmp(start, target.start, target.count) == 0
  }

  // A prefix ending in a carriage return would match half of a `"\r\n"`.
  static func canUseBytes(_ target: UTF8Bytes) -> Bool {
    target.count == 0 || target.start[target.count - 1] != 0x0D
  }

  static func strings(_ value: String, _ target: String) -> Bool {
    sequenceStarts(value, with: target)
  }
}

/// A string test of a stored string attribute (`$0.title.contains("42")`) against a captured
/// string, with Foundation's semantics: `Character` by `Character`, as
/// `Collection.contains(_:)` and `Sequence.starts(with:)` compare in `evaluate`.
///
/// The slot is read in place: a scan of 100,000 objects retains none of them, nor copies a
/// slot (each retain wrote to an object's header, a cache line the scan only needs to read).
private func stringTest<Match: StringMatch>(
  _ match: Match.Type, _ base: some PredicateExpression, _ other: some PredicateExpression,
  in scope: TranslationScope
) -> ObjectTest? {
  guard case .read(let read)? = scope.operand(base), read.coalesced == nil,
    case .attribute(let property, let description) = read.target,
    description.type == .string, !description.isOptional,
    case .constant(let constant as String)? = scope.operand(other)
  else { return nil }
  let target = UTF8Bytes(constant)
  let byBytes = target.isASCII && Match.canUseBytes(target)
  let test: (UnsafeMutablePointer<Slot>) -> Bool = { slot in
    if let stored = slot.storedString {
      let (start, count) = stored.bytes
      if byBytes && isASCII(start, count) { return Match.bytes(start, count, target) }
      return Match.strings(stored.value, constant)
    }
    switch slot.pointee {
    case .value(.string(var value)):
      if byBytes,
        let answer = value.withUTF8({ utf8 -> Bool? in
          guard let start = utf8.baseAddress, isASCII(start, utf8.count) else {
            return utf8.isEmpty ? Match.bytes(target.start, 0, target) : nil
          }
          return Match.bytes(start, utf8.count, target)
        })
      {
        return answer
      }
      return Match.strings(value, constant)
    case .deferred(.storedString(let stored)):
      let (start, count) = stored.bytes
      if byBytes && isASCII(start, count) { return Match.bytes(start, count, target) }
      return Match.strings(stored.value, constant)
    default:
      return false
    }
  }
  guard read.hops.isEmpty else {
    return { object in read.reached(from: object).map { test($0.slots + property) } ?? false }
  }
  return { object in test(object.slots + property) }
}

/// `base.contains(other)` as Foundation's `CollectionContainsCollection` calls it.
private func collectionContains<Base: Collection, Other: Collection>(_ base: Base, _ other: Other)
  -> Bool
where Base.Element == Other.Element, Base.Element: Equatable {
  base.contains(other)
}

/// `base.starts(with: prefix)` as Foundation's `SequenceStartsWith` calls it.
private func sequenceStarts<Base: Sequence, Prefix: Sequence>(_ base: Base, with prefix: Prefix)
  -> Bool
where Base.Element == Prefix.Element, Base.Element: Equatable {
  base.starts(with: prefix)
}

extension PredicateExpressions.CollectionContainsCollection: TranslatableTest {
  func test(in scope: TranslationScope) -> ObjectTest? {
    stringTest(ContainsMatch.self, base, other, in: scope)
  }
}

extension PredicateExpressions.SequenceStartsWith: TranslatableTest {
  func test(in scope: TranslationScope) -> ObjectTest? {
    stringTest(PrefixMatch.self, base, prefix, in: scope)
  }
}

// MARK: To-many relationships

/// The read of a to-many relationship `sequence` and the translated test of a closure over its
/// objects (`$0.children.contains { $0.title == x }`), if both translate.
private func objectsAndTest<Sequence: PredicateExpression, Test: PredicateExpression<Bool>>(
  _ sequence: Sequence, _ variable: PredicateExpressions.VariableID, _ test: Test,
  in scope: TranslationScope
) -> (read: StoredRead, test: ObjectTest)? {
  guard case .read(let read)? = scope.operand(sequence), case .objects = read.target,
    let destination = read.objectModel,
    let test = scope.nested(
      variable, standingFor: StoredRead(target: .object(nil), model: destination)
    ).test(for: test)
  else { return nil }
  return (read, test)
}

extension PredicateExpressions.SequenceContainsWhere: TranslatableTest {
  func test(in scope: TranslationScope) -> ObjectTest? {
    guard let (read, test) = objectsAndTest(sequence, variable.key, self.test, in: scope) else {
      return nil
    }
    return { object in try read.objects(of: object)?.contains(where: test) ?? false }
  }
}

extension PredicateExpressions.SequenceAllSatisfy: TranslatableTest {
  func test(in scope: TranslationScope) -> ObjectTest? {
    guard let (read, test) = objectsAndTest(sequence, variable.key, self.test, in: scope) else {
      return nil
    }
    return { object in try read.objects(of: object)?.allSatisfy(test) ?? true }
  }
}

extension PredicateExpressions.SequenceContains: TranslatableTest {
  func test(in scope: TranslationScope) -> ObjectTest? {
    guard case .read(let read)? = scope.operand(sequence), case .objects = read.target,
      case .constant(let constant)? = scope.operand(element),
      let target = constant as? ManagedObject
    else { return nil }
    return { object in read.objects(of: object)?.contains { $0 === target } ?? false }
  }
}

/// Whether `count` bytes at `start` contain the bytes of `target` (not empty).
private func containsBytes(_ start: UnsafePointer<UInt8>, _ count: Int, _ target: UTF8Bytes)
  -> Bool
{
  guard count >= target.count else { return false }
  let first = target.start[0]
  for offset in 0...(count - target.count)
  where start[offset] == first && memcmp(start + offset, target.start, target.count) == 0 {
    return true
  }
  return false
}
