import Foundation

extension ObjectContext {
  /// Whether walking an ordered index of `total` entries for `needed` matches beats testing
  /// `candidates` from another index: a walk visits about `needed × total / candidates`
  /// entries if the candidates' terms select independently of the sort key.
  private static func walkIsWorthIt(candidates: Int, needed: Int, total: Int) -> Bool {
    let visits = needed.multipliedReportingOverflow(by: total)
    return !visits.overflow && candidates * candidates > visits.partialValue
  }

  /// A page of a fetch whose first sort descriptor reads an attribute with an ordered index,
  /// read off the index in the descriptor's order: the predicate is tested on the way, and
  /// the walk stops once `offset + limit` objects match (a predicate that the index answers
  /// exactly, or none, skips the offset in O(log *n*)). Nil when the index cannot give the
  /// scan's answer, or another index's candidates are few: the caller then scans.
  ///
  /// Objects whose first keys are equal come in the order of the other descriptors, then of
  /// object identifier: each group of equal keys is read whole and sorted as the scan would
  /// sort it. So every other descriptor must be a strict order: a floating-point one only
  /// on an indexed attribute that holds no NaN.
  ///
  /// - Complexity: O(log *n* + *k*) for the *k* objects visited, and O(*g* log *g*) to sort
  ///   each group of *g* equal first keys by the other descriptors.
  func orderedPage<T: ManagedObject>(
    of descriptor: FetchDescriptor<T>, in table: EntityTable, offset: Int, limit: Int
  ) throws -> [ManagedObject]? {
    let descriptors = descriptor.sortBy
    guard let first = descriptors.first, first.stringComparator == nil,
      let keyPath = first.keyPath,
      case .attribute(let property, _)? = table.model.resolvedProperty(for: keyPath),
      let index = table.orderedIndex(property), index.unorderedCount == 0,
      descriptors.dropFirst().allSatisfy({ isStrictOrder($0, in: table) })
    else { return nil }
    let (sum, overflow) = offset.addingReportingOverflow(limit)
    let needed = overflow ? Int.max : sum
    var ranks = 0..<index.count
    var test: ObjectTest?
    if let predicate = descriptor.predicate {
      let translated = TranslatedPredicate(predicate, model: table.model)
      guard translated.fallbackCount == 0 else { return nil }
      test = translated.test
      if let bucket = indexedCandidates(for: predicate, in: table),
        !Self.walkIsWorthIt(
          candidates: bucket.objects.count, needed: needed, total: index.count)
      {
        return nil
      }
      if let expression = predicate.expression as? any IndexTermExpression {
        for range in IndexedRange.ranges(for: expression, in: table) {
          if range.property == property {
            ranks = range.ranks
            if range.isExact { test = nil }
          } else if !Self.walkIsWorthIt(candidates: range.count, needed: needed, total: index.count)
          {
            return nil
          }
        }
      }
    }
    guard limit > 0, let direction = Self.direction(of: first, in: index) else {
      return limit > 0 ? nil : []
    }
    var walk = OrderedWalk(
      index: index, test: test, skipping: offset, needed: needed,
      sortGroup: groupSort(for: descriptors, in: table))
    let nils = index.nilRanks.clamped(to: ranks)
    let values = (nils.upperBound..<index.count).clamped(to: ranks)
    do {
      if direction.nilFirst { try walk.visit(nils, reversed: false) }
      try walk.visit(values, reversed: direction.isReversed)
      if !direction.nilFirst { try walk.visit(nils, reversed: false) }
    } catch {
      throw ObjectGraphError(
        .invalidFetch, "the predicate on \(table.model.name) cannot be evaluated",
        entity: table.model.name, underlying: error)
    }
    return walk.page(limit: limit)
  }

  /// Whether a descriptor orders any two objects strictly (a plain sort of them then does
  /// not depend on the algorithm): an attribute whose values have no NaN.
  private func isStrictOrder<T: ManagedObject>(
    _ descriptor: SortDescriptor<T>, in table: EntityTable
  ) -> Bool {
    guard let keyPath = descriptor.keyPath,
      case .attribute(let property, let description)? = table.model.resolvedProperty(
        for: keyPath)
    else { return false }
    switch description.type {
    case .double, .float, .date: return table.existingOrderedIndex(property)?.unorderedCount == 0
    default: return true
    }
  }

  /// How a descriptor orders its attribute's index, asked of the descriptor itself on the
  /// least and greatest keys and on a nil one (as ``TranslatedSort`` does: a descriptor's
  /// `order` does not always say how it compares); nil if it contradicts the index's order.
  private static func direction<T: ManagedObject>(
    of descriptor: SortDescriptor<T>, in index: OrderedIndex
  ) -> (isReversed: Bool, nilFirst: Bool)? {
    func compare(_ left: Int, _ right: Int) -> ComparisonResult {
      descriptor.compare(
        unsafeDowncast(index[left].object.takeUnretainedValue(), to: T.self),
        unsafeDowncast(index[right].object.takeUnretainedValue(), to: T.self))
    }
    let nils = index.nilRanks
    let (least, greatest) = (nils.upperBound, index.count - 1)
    var isReversed = false
    if least < greatest && index[least].key != index[greatest].key {
      switch compare(least, greatest) {
      case .orderedAscending: isReversed = false
      case .orderedDescending: isReversed = true
      case .orderedSame: return nil
      }
    }
    var nilFirst = true
    if !nils.isEmpty && least <= greatest {
      switch compare(nils.lowerBound, least) {
      case .orderedAscending: nilFirst = true
      case .orderedDescending: nilFirst = false
      case .orderedSame: return nil
      }
    }
    return (isReversed, nilFirst)
  }

  /// How a group of objects with equal first keys is put in the descriptors' order: by the
  /// other descriptors, then by identifier (which is the index's order within a group).
  private func groupSort<T: ManagedObject>(
    for descriptors: [SortDescriptor<T>], in table: EntityTable
  ) -> (([ManagedObject]) -> [ManagedObject])? {
    guard descriptors.count > 1 else { return nil }
    let translated = TranslatedSort(descriptors, model: table.model)
    return { group in
      if let sorted = translated?.sorted(group, offset: 0, limit: nil) { return sorted }
      var results = unsafeBitCast(group, to: [T].self)
      self.sort(&results, by: descriptors)
      return unsafeBitCast(results, to: [ManagedObject].self)
    }
  }
}

/// A walk of an ordered index's ranks in a sort's order, collecting the objects that pass a
/// test until enough do (see
/// ``ObjectContext/orderedPage(of:in:offset:limit:)``).
private struct OrderedWalk {
  let index: OrderedIndex
  /// The predicate's test; nil when every visited object matches.
  let test: ObjectTest?
  /// The objects of the walk to skip before the page.
  let skipping: Int
  /// The objects of the walk up to the page's end.
  let needed: Int
  /// Orders a group of equal keys; nil when the identifier does (one descriptor).
  let sortGroup: (([ManagedObject]) -> [ManagedObject])?
  /// The matching objects visited, in the walk's order.
  private(set) var collected: [ManagedObject] = []
  /// The matching objects passed over before ``collected`` without being visited.
  private var skipped = 0

  init(
    index: OrderedIndex, test: ObjectTest?, skipping: Int, needed: Int,
    sortGroup: (([ManagedObject]) -> [ManagedObject])?
  ) {
    self.index = index
    self.test = test
    self.skipping = skipping
    self.needed = needed
    self.sortGroup = sortGroup
  }

  private var isDone: Bool { skipped + collected.count >= needed }

  /// Visits `ranks` in one pass, ascending or descending, until enough objects match;
  /// each group of equal keys is put in the sort's order (ascending identifier, or the other
  /// descriptors) as it ends.
  mutating func visit(_ ranks: Range<Int>, reversed: Bool) throws {
    guard !ranks.isEmpty, !isDone else { return }
    var walked = ranks
    if test == nil && collected.isEmpty {
      // Every object matches: the offset is skipped by rank, to the start of its group.
      let toSkip = skipping - skipped
      if toSkip >= ranks.count {
        skipped += ranks.count
        return
      }
      if toSkip > 0 {
        let rank = reversed ? ranks.upperBound - 1 - toSkip : ranks.lowerBound + toSkip
        let group = index.ranksOfKey(at: rank).clamped(to: ranks)
        if reversed {
          skipped += ranks.upperBound - group.upperBound
          walked = ranks.lowerBound..<group.upperBound
        } else if sortGroup == nil {
          // Within a group ordered by identifier alone, ranks are the order: skip on.
          skipped += toSkip
          walked = rank..<ranks.upperBound
        } else {
          skipped += group.lowerBound - ranks.lowerBound
          walked = group.lowerBound..<ranks.upperBound
        }
      }
    }
    // Ascending and ordered by identifier alone, a group's objects are in order as visited.
    let collectsAsVisited = !reversed && sortGroup == nil
    var groupKey: OrderedKey?
    var members: [ManagedObject] = []
    let test = test
    try index.forEach(in: walked, reversed: reversed) { entry in
      if let key = groupKey, key != entry.key {
        endGroup(&members, reversed: reversed)
        if isDone { return false }
      }
      groupKey = entry.key
      let object = entry.object.takeUnretainedValue()
      guard try test?(object) ?? true else { return true }
      if collectsAsVisited {
        collected.append(object)
        return !isDone
      }
      members.append(object)
      return true
    }
    endGroup(&members, reversed: reversed)
  }

  /// Appends the matching objects of a group of equal keys, visited in ascending or
  /// descending rank order, in the sort's order; `members` ends empty.
  private mutating func endGroup(_ members: inout [ManagedObject], reversed: Bool) {
    guard !members.isEmpty else { return }
    if reversed { members.reverse() }
    if let sortGroup, members.count > 1 {
      collected += sortGroup(members)
    } else {
      collected += members
    }
    members.removeAll(keepingCapacity: true)
  }

  /// The page: the collected objects after the offset, at most `limit` of them.
  func page(limit: Int) -> [ManagedObject] {
    let start = min(max(skipping - skipped, 0), collected.count)
    let end = start + min(limit, collected.count - start)
    return Array(collected[start..<end])
  }
}
