import Foundation

extension ObjectContext {
  /// The objects of a model class that match a descriptor, pending changes included
  /// (inserted objects are found, deleted ones are not).
  ///
  /// - Throws: ``ObjectGraphError`` with code ``ObjectGraphError/Code/unknownEntity`` when
  ///   the class is not in the container's schema, or ``ObjectGraphError/Code/invalidFetch``
  ///   when the predicate cannot be evaluated.
  /// - Complexity: O(*m* log *m*) in the candidates: the matching index bucket for an
  ///   indexed equality, the index range for comparisons with an indexed attribute, all
  ///   objects of the class otherwise. Sorted first by an indexed attribute with a limit, the
  ///   results are read off its ordered index: O(log *n* + *k*) for the *k* objects visited
  ///   until offset + limit match.
  public func fetch<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
    beginUse()
    defer { endUse() }
    processPendingChanges()
    let table = try self.table(for: T.self)
    // Matching and sorting run on `[ManagedObject]`: this function is not specialized for
    // `T` (it is called from the app's module), and generic arrays of `T` would look up type
    // metadata at run time. An array of a class type has the layout of `[ManagedObject]`,
    // and every element is a `T`.
    let offset = max(descriptor.fetchOffset ?? 0, 0)
    let limit = descriptor.fetchLimit.map { max($0, 0) }
    if let limit, !descriptor.sortBy.isEmpty,
      let page = try orderedPage(of: descriptor, in: table, offset: offset, limit: limit)
    {
      return unsafeBitCast(page, to: [T].self)
    }
    let matched = try matches(of: descriptor.predicate, in: table)
    if !descriptor.sortBy.isEmpty {
      if let sort = TranslatedSort(descriptor.sortBy, model: table.model),
        let sorted = sort.sorted(matched, offset: offset, limit: limit)
      {
        return unsafeBitCast(sorted, to: [T].self)
      }
      var results = unsafeBitCast(matched, to: [T].self)
      sort(&results, by: descriptor.sortBy)
      return Self.page(of: results, offset: offset, limit: limit)
    }
    return unsafeBitCast(
      Self.page(of: sortedByID(matched), offset: offset, limit: limit), to: [T].self)
  }

  /// The results from `offset` on, at most `limit` of them.
  private static func page<Element>(of results: [Element], offset: Int, limit: Int?) -> [Element] {
    let start = min(offset, results.count)
    let end = limit.map { min(start + $0, results.count) } ?? results.count
    return start == 0 && end == results.count ? results : Array(results[start..<end])
  }

  /// The number of objects of a model class that match a descriptor's predicate (its sort
  /// descriptors are ignored; limit and offset apply).
  ///
  /// - Throws: As ``fetch(_:)``.
  /// - Complexity: O(*m*) in the candidates (see ``fetch(_:)``), with no array of the
  ///   matching objects made; O(log *n*) for a predicate made only of comparisons with one
  ///   indexed attribute (a range).
  public func fetchCount<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws -> Int {
    beginUse()
    defer { endUse() }
    mergeSavedChanges()
    let table = try self.table(for: T.self)
    var count: Int
    if let range = exactRange(of: descriptor.predicate, in: table) {
      count = range.count
    } else if let predicate = descriptor.predicate {
      count = 0
      try forEachMatch(of: predicate, in: table) { _ in count += 1 }
    } else {
      count = table.count
    }
    count -= min(max(descriptor.fetchOffset ?? 0, 0), count)
    if let limit = descriptor.fetchLimit { count = min(count, max(limit, 0)) }
    return count
  }

  /// The live objects of a table that satisfy a predicate, in no particular order.
  private func matches<T: ManagedObject>(of predicate: Predicate<T>?, in table: EntityTable)
    throws -> [ManagedObject]
  {
    guard let predicate else { return table.objects }
    var results: [ManagedObject] = []
    try forEachMatch(of: predicate, in: table) { results.append($0) }
    return results
  }

  /// Calls `body` with each live object of a table that satisfies a predicate, in no
  /// particular order: the objects of an index bucket or an index range when an index
  /// answers the predicate, otherwise the candidates (the smallest bucket or range, or every
  /// object) that its translation (see ``TranslatedPredicate``) accepts.
  private func forEachMatch<T: ManagedObject>(
    of predicate: Predicate<T>, in table: EntityTable, _ body: (ManagedObject) -> Void
  ) throws {
    let indexed = indexedCandidates(for: predicate, in: table)
    // An index that answers the whole predicate leaves nothing to evaluate.
    if let indexed, indexed.areExact {
      indexed.objects.forEach(body)
      return
    }
    var candidates = indexed?.objects
    let translated = TranslatedPredicate(predicate, model: table.model)
    // A range of an ordered index, if smaller. Only when no part of the predicate is left to
    // Foundation: such a part may throw on an object outside the range, as the scan would.
    if let range = smallestRange(of: predicate, in: table),
      range.count < candidates?.count ?? Int.max
    {
      if range.isExact {
        range.forEachObject(body)
        return
      }
      if translated.fallbackCount == 0 { candidates = range.objects() }
    }
    let test = translated.test
    do {
      if let candidates {
        for object in candidates where try test(object) { body(object) }
      } else {
        try table.forEachObject { object in if try test(object) { body(object) } }
      }
    } catch {
      throw ObjectGraphError(
        .invalidFetch, "the predicate on \(table.model.name) cannot be evaluated",
        entity: table.model.name, underlying: error)
    }
  }

  /// The smallest index bucket that a predicate's equalities select, or nil when no index
  /// applies; exact when the bucket holds precisely the objects that satisfy the predicate
  /// (a lone equality that the index compares as the predicate would), so the predicate
  /// need not be evaluated on each candidate.
  func indexedCandidates<T: ManagedObject>(for predicate: Predicate<T>?, in table: EntityTable)
    -> (objects: [ManagedObject], areExact: Bool)?
  {
    guard let expression = predicate?.expression as? any IndexTermExpression else { return nil }
    let (terms, areTheWholeExpression) = expression.indexTerms
    var best: (objects: [ManagedObject], areExact: Bool)?
    for term in terms where term.comparison == .equal {
      guard let bucket = candidates(for: term, in: table) else { continue }
      if best == nil || bucket.objects.count < best!.objects.count { best = bucket }
    }
    guard var best else { return nil }
    best.areExact = best.areExact && terms.count == 1 && areTheWholeExpression
    return best
  }

  /// The smallest range of an ordered index that a predicate's comparisons select (see
  /// ``IndexedRange``), or nil when none does.
  func smallestRange<T: ManagedObject>(of predicate: Predicate<T>?, in table: EntityTable)
    -> IndexedRange?
  {
    guard let expression = predicate?.expression as? any IndexTermExpression else { return nil }
    return IndexedRange.ranges(for: expression, in: table).min { $0.count < $1.count }
  }

  /// The range of an ordered index that holds exactly the objects satisfying a predicate
  /// (comparisons with one indexed attribute, and nothing else), or nil.
  private func exactRange<T: ManagedObject>(of predicate: Predicate<T>?, in table: EntityTable)
    -> IndexedRange?
  {
    guard let range = smallestRange(of: predicate, in: table), range.isExact else { return nil }
    return range
  }

  /// The objects of `table` that can satisfy one equality, from an index, and whether they
  /// are exactly those that do; nil when no index answers it.
  private func candidates(for term: IndexTerm, in table: EntityTable)
    -> (objects: [ManagedObject], areExact: Bool)?
  {
    guard let property = table.propertyIndex(for: term.path[0]) else { return nil }
    let value = Self.flatten(term.value)
    if term.path.count == 1 {
      if let index = table.attributeIndex(property) {
        // Stored values compare as the attribute's type does, except encoded `Codable`s: two
        // values its `==` calls equal may encode differently, so those are scanned.
        guard case .attribute(let attribute) = table.model.properties[property].kind,
          attribute.description.type != .codable
        else { return nil }
        let key = value.map { AttributeCodec.encode($0) } ?? .null
        return (index.objects(for: key), true)
      }
      if value == nil {
        return table.objects(relatedTo: nil, through: property).map { ($0, true) }
      }
      guard let target = value as? ManagedObject else { return nil }
      return table.objects(relatedTo: target, through: property).map { ($0, true) }
    }
    // `$0.relationship?.property == value`: find the related objects first.
    guard term.path.count == 2, let value, table.hasToOneIndex(property),
      let relationship = table.model.relationship(property)
    else { return nil }
    let targets: [ManagedObject]
    if relationship.destination.readsObjectID(term.path[1]) {
      guard let id = value as? ObjectID else { return nil }
      targets = registered[id].map { [$0] } ?? []
    } else {
      let destination = self.table(for: relationship.destination)
      guard let inner = destination.model.propertyIndex(for: term.path[1]),
        let innerIndex = destination.attributeIndex(inner)
      else { return nil }
      targets = innerIndex.objects(for: AttributeCodec.encode(value))
    }
    return (targets.flatMap { table.objects(relatedTo: $0, through: property) ?? [] }, false)
  }

  /// A compared value with every level of `Optional` removed; nil for nil.
  private static func flatten(_ value: Any?) -> Any? {
    guard var current = value else { return nil }
    // The usual compared values are no optionals: a cast to a concrete type is cheap, one
    // that fails to the `OptionalAttribute` existential costs a conformance lookup.
    if current is UUID || current is String || current is Int || current is Date {
      return current
    }
    while let optional = current as? any OptionalAttribute {
      guard let wrapped = optional.wrappedAny else { return nil }
      current = wrapped
    }
    return current
  }

  /// Sorts with Foundation's comparisons, for descriptors that ``TranslatedSort`` does not
  /// translate.
  func sort<T: ManagedObject>(_ results: inout [T], by descriptors: [SortDescriptor<T>]) {
    guard !descriptors.isEmpty else { return }
    results.sort { lhs, rhs in
      for descriptor in descriptors {
        switch descriptor.compare(lhs, rhs) {
        case .orderedAscending: return true
        case .orderedDescending: return false
        case .orderedSame: continue
        }
      }
      return (lhs.storedObjectID?.rawValue ?? 0) < (rhs.storedObjectID?.rawValue ?? 0)
    }
  }
}
