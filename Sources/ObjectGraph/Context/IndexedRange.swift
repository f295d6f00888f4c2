import Foundation

/// The entries of an attribute's ordered index that a predicate's comparisons on the
/// attribute select: `$0.created >= a && $0.created < b` is the ranks of the dates from `a`
/// up to `b`. Every object that satisfies the predicate is among them; when the predicate is
/// made of those comparisons only, they are exactly the objects that do.
struct IndexedRange {
  /// The attribute, by property number.
  let property: Int
  let index: OrderedIndex
  /// The selected entries' ranks in ``index``.
  let ranks: Range<Int>
  /// Whether the entries are exactly the objects that satisfy the predicate.
  let isExact: Bool

  /// The number of selected objects.
  var count: Int { ranks.count }

  /// The ranges that a predicate's index terms select, one per attribute with an ordered
  /// index that an ordering term (`<`, `<=`, `>`, `>=`) compares; the attribute's
  /// equalities narrow its range too. An attribute's ordered index made on demand is made.
  ///
  /// - Complexity: O(*t*² + *t* log *n*) for *t* terms.
  static func ranges(for expression: any IndexTermExpression, in table: EntityTable)
    -> [IndexedRange]
  {
    let (terms, areTheWholeExpression) = expression.indexTerms
    guard terms.contains(where: \.comparison.isOrdering) else { return [] }
    let properties = terms.map { term -> (property: Int, type: AttributeType)? in
      guard term.path.count == 1,
        case .attribute(let property, let description)? = table.model.resolvedProperty(
          for: term.path[0])
      else { return nil }
      return (property, description.type)
    }
    var ranges: [IndexedRange] = []
    for (position, term) in terms.enumerated() where term.comparison.isOrdering {
      guard let (property, type) = properties[position],
        !ranges.contains(where: { $0.property == property }),
        let index = table.orderedIndex(property)
      else { continue }
      var range: OrderedIndex.KeyRange?
      var convertsEveryTerm = true
      for (other, otherTerm) in terms.enumerated() where properties[other]?.property == property {
        guard let key = OrderedKey(compared: otherTerm.value, with: type),
          let termRange = OrderedIndex.KeyRange(otherTerm.comparison, key)
        else {
          convertsEveryTerm = false
          continue
        }
        range = range.map { $0.intersection(termRange) } ?? termRange
      }
      guard let range else { continue }
      let isExact =
        convertsEveryTerm && areTheWholeExpression
        && properties.allSatisfy { $0?.property == property }
      ranges.append(
        IndexedRange(
          property: property, index: index, ranks: index.ranks(in: range), isExact: isExact))
    }
    return ranges
  }

  /// Calls `body` with each selected object, in the index's order.
  func forEachObject(_ body: (ManagedObject) throws -> Void) rethrows {
    try index.forEach(in: ranks) { entry in
      try entry.object._withUnsafeGuaranteedRef(body)
      return true
    }
  }

  /// The selected objects, in the index's order.
  ///
  /// - Complexity: O(log *n* + *k*) for the *k* objects.
  func objects() -> [ManagedObject] {
    var objects: [ManagedObject] = []
    objects.reserveCapacity(count)
    forEachObject { objects.append($0) }
    return objects
  }
}
