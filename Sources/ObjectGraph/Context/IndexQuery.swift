import Foundation

/// An equality that an index can answer, found in a predicate's expression tree:
/// `$0.property == value`, `$0.relationship?.property == value` (either way round), possibly
/// inside `&&`.
struct IndexTerm {
  /// The key path read on the fetched object, then (for optional chaining) on its related
  /// object.
  let path: [AnyKeyPath]
  /// The compared value, or nil for a `nil` literal.
  let value: Any?
}

/// Expressions that can yield index terms. Conformances are on Foundation's predicate
/// expression types, so the tree is inspected without evaluating it.
protocol IndexTermExpression {
  /// Equalities all of which must hold for the expression to be true.
  var indexTerms: [IndexTerm] { get }
  /// Whether the expression is one equality and nothing else: its index term then holds
  /// exactly when the expression does.
  var isSingleEquality: Bool { get }
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

extension PredicateExpressions.Equal: IndexTermExpression {
  var isSingleEquality: Bool { true }

  var indexTerms: [IndexTerm] {
    guard let left = (lhs as? any OperandExpression)?.operand,
      let right = (rhs as? any OperandExpression)?.operand
    else { return [] }
    switch (left, right) {
    case (.keyPath(let path), .value(let value)), (.value(let value), .keyPath(let path)):
      return [IndexTerm(path: path, value: value)]
    default:
      return []
    }
  }
}

extension PredicateExpressions.Conjunction: IndexTermExpression {
  var isSingleEquality: Bool { false }

  var indexTerms: [IndexTerm] {
    ((lhs as? any IndexTermExpression)?.indexTerms ?? [])
      + ((rhs as? any IndexTermExpression)?.indexTerms ?? [])
  }
}
