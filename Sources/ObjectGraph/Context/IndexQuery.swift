import Foundation

/// A comparison that an index can answer, found in a predicate's expression tree:
/// `$0.property == value`, `$0.relationship?.property == value`, `$0.property < value` (and
/// `<=`, `>`, `>=`; either way round), possibly inside `&&`.
struct IndexTerm {
  /// The key path read on the fetched object, then (for optional chaining) on its related
  /// object.
  let path: [AnyKeyPath]
  /// The compared value, or nil for a `nil` literal.
  let value: Any?
  /// How the read value compares with ``value`` when the term holds, the read on the left
  /// (`5 < $0.n` is `$0.n > 5`): ``ComparisonTest/equal`` for an equality (the equality
  /// indexes answer those), an order for a range (the ordered indexes answer those).
  var comparison: ComparisonTest = .equal
}

/// Expressions that can yield index terms. Conformances are on Foundation's predicate
/// expression types, so the tree is inspected without evaluating it.
protocol IndexTermExpression {
  /// Comparisons all of which must hold for the expression to be true, and whether the
  /// expression is made of them and nothing else (one term, or a conjunction of them): it
  /// then holds exactly when all of them do.
  var indexTerms: (terms: [IndexTerm], areTheWholeExpression: Bool) { get }
}

/// One side of an equality.
private enum Operand {
  case keyPath([AnyKeyPath])
  case value(Any?)
}

private protocol OperandExpression {
  var operand: Operand? { get }
}

private protocol VariableExpression {}

extension PredicateExpressions.Variable: VariableExpression {}

extension PredicateExpressions.KeyPath: OperandExpression {
  fileprivate var operand: Operand? {
    root is any VariableExpression ? .keyPath([keyPath]) : nil
  }
}

extension PredicateExpressions.OptionalFlatMap: OperandExpression {
  fileprivate var operand: Operand? {
    guard case .keyPath(let outer)? = (wrapped as? any OperandExpression)?.operand,
      case .keyPath(let inner)? = (transform as? any OperandExpression)?.operand
    else { return nil }
    return .keyPath(outer + inner)
  }
}

extension PredicateExpressions.Value: OperandExpression {
  fileprivate var operand: Operand? { .value(value) }
}

extension PredicateExpressions.NilLiteral: OperandExpression {
  fileprivate var operand: Operand? { .value(nil) }
}

/// The index term of a comparison of two operands, if one reads a key path and the other
/// is a value.
private func indexTerm(
  _ lhs: some PredicateExpression, _ comparison: ComparisonTest, _ rhs: some PredicateExpression
) -> IndexTerm? {
  guard let left = (lhs as? any OperandExpression)?.operand,
    let right = (rhs as? any OperandExpression)?.operand
  else { return nil }
  switch (left, right) {
  case (.keyPath(let path), .value(let value)):
    return IndexTerm(path: path, value: value, comparison: comparison)
  case (.value(let value), .keyPath(let path)):
    return IndexTerm(path: path, value: value, comparison: comparison.swapped)
  default:
    return nil
  }
}

extension PredicateExpressions.Equal: IndexTermExpression {
  var indexTerms: (terms: [IndexTerm], areTheWholeExpression: Bool) {
    guard let term = indexTerm(lhs, .equal, rhs) else { return ([], false) }
    return ([term], true)
  }
}

extension PredicateExpressions.Comparison: IndexTermExpression {
  var indexTerms: (terms: [IndexTerm], areTheWholeExpression: Bool) {
    guard let term = indexTerm(lhs, ComparisonTest(op), rhs) else { return ([], false) }
    return ([term], true)
  }
}

extension PredicateExpressions.Conjunction: IndexTermExpression {
  var indexTerms: (terms: [IndexTerm], areTheWholeExpression: Bool) {
    guard let left = (lhs as? any IndexTermExpression)?.indexTerms else {
      return ((rhs as? any IndexTermExpression)?.indexTerms.terms ?? [], false)
    }
    guard let right = (rhs as? any IndexTermExpression)?.indexTerms else {
      return (left.terms, false)
    }
    return (left.terms + right.terms, left.areTheWholeExpression && right.areTheWholeExpression)
  }
}
