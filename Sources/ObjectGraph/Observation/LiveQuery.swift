import Foundation
import Observation

/// What a context tells its live queries.
protocol LiveQueryMaintenance: AnyObject {
  /// An object of the query's entity is about to change, be inserted or be deleted.
  func willTouch(_ object: ManagedObject)
  /// The context delivers its coalesced changes.
  func refresh(_ pending: DeliveredChanges)
}

/// The current results of a fetch, kept up to date as the context changes, with the
/// difference reported at each delivery: no view needs to re-query.
///
/// ```swift
/// let roots = try context.liveQuery(FetchDescriptor<Box>(
///   predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.created)]))
/// let token = roots.observe { change in
///   print(roots.results.map(\.title), change.inserted, change.removed)
/// }
/// ```
///
/// A change to *k* objects costs O(*k* log *n*) comparisons (plus moving array elements),
/// not a re-fetch: an object about to change is taken out of the sorted results (found by
/// binary search while its values are still those it was sorted by), and at delivery each
/// touched object is evaluated again and put back where it now belongs. The query is
/// `Observable`: SwiftUI views that read ``results`` refresh at each delivery that changes
/// them.
///
/// The predicate and sort see through to-one relationships: a query whose predicate reads a
/// related object's property (`$0.parent?.title == "Inbox"`, `$0.parent?.parent == nil`) or
/// whose sort does (`SortDescriptor(\.parent?.created)`) also watches the objects of the
/// related entities, and when one is about to change, the objects that reach it through those
/// relationships are taken out and evaluated again, as if they had changed themselves: O(*r*)
/// for the *r* objects that refer to it (found through the relationship's inverse). A part of
/// a predicate evaluated by Foundation rather than translated (see ``ObjectContext/fetch(_:)``)
/// and a sort's relationships beyond the first are not watched.
public final class LiveQuery<T: ManagedObject>: LiveQueryMaintenance, Observable {
  /// The results at the last delivery, in order, within the descriptor's offset and limit.
  public var results: [T] {
    registrar.access(self, keyPath: \.results)
    // Every element is a `T` (checked when it entered); arrays of classes share a layout.
    return unsafeBitCast(delivered, to: [T].self)
  }

  /// The difference between the previous and the current ``results``.
  public private(set) var lastChange = ListChange()

  private let context: ObjectContext
  private let descriptor: FetchDescriptor<T>
  /// The predicate, translated once (nil for none).
  private let test: ObjectTest?
  /// The model of the query's entity.
  private let model: EntityModel
  /// The to-one relationships the predicate and sort read through, each a path from a
  /// result (`[parent]` for `$0.parent?.title`): a change of an object a path reaches is a
  /// change of the results that reach it.
  private let hopPaths: [[Int]]
  private var registrationIDs: [Int] = []
  /// Every matching object, in order, as at the last delivery. Changed only while
  /// refreshing, so between deliveries it is sorted and shared with ``delivered``.
  private var sorted: [ManagedObject]
  private var members: Set<ObjectIdentifier>
  /// The window of `sorted` given out as ``results``.
  private var delivered: [ManagedObject]
  /// Objects touched since the last delivery, with their index in `sorted` then.
  private var touched: [ObjectIdentifier: (object: ManagedObject, oldIndex: Int?)] = [:]
  private var handlers: [(id: Int, handler: (ListChange) -> Void)] = []
  private var nextHandlerID = 0
  private let registrar = ObservationRegistrar()

  private var isWindowed: Bool {
    descriptor.fetchLimit != nil || (descriptor.fetchOffset ?? 0) != 0
  }

  init(context: ObjectContext, descriptor: FetchDescriptor<T>) throws {
    self.context = context
    self.descriptor = descriptor
    let model = try context.table(for: T.self).model
    self.model = model
    let translated = descriptor.predicate.map { TranslatedPredicate($0, model: model) }
    test = translated?.test
    hopPaths = Array(
      (translated?.hopPaths ?? []).union(Self.sortHops(of: descriptor.sortBy, in: model))
    ).sorted { $0.lexicographicallyPrecedes($1) }
    var unlimited = descriptor
    unlimited.fetchLimit = nil
    unlimited.fetchOffset = nil
    sorted = try context.fetch(unlimited)
    members = Set(sorted.lazy.map(ObjectIdentifier.init))
    delivered = []
    delivered = window(of: sorted)
    registrationIDs = watchedModels().map { context.register(self, for: $0) }
  }

  deinit {
    for id in registrationIDs { context.removeObserver(id) }
  }

  /// The models whose objects' changes concern the query: its own, and those its paths reach.
  private func watchedModels() -> [EntityModel] {
    var models = [model]
    for path in hopPaths {
      var reached = model
      for hop in path {
        guard let destination = reached.relationship(hop)?.destination else { break }
        reached = destination
        if !models.contains(where: { $0 === reached }) { models.append(reached) }
      }
    }
    return models
  }

  /// The to-one relationships the sort descriptors read through: one a descriptor reads a
  /// property of (`\.parent?.created`), found by probing its key path.
  private static func sortHops(of descriptors: [SortDescriptor<T>], in model: EntityModel)
    -> Set<[Int]>
  {
    var hops = Set<[Int]>()
    for descriptor in descriptors {
      guard let keyPath = descriptor.keyPath, let index = model.propertyIndex(for: keyPath),
        let relationship = model.relationship(index), !relationship.isToMany
      else { continue }
      // The relationship itself (sorted by the related object?) reads nothing of it.
      if case .toOne? = model.resolvedProperty(for: keyPath) { continue }
      hops.insert([index])
    }
    return hops
  }

  /// Calls `handler` after every delivery that changes the results.
  ///
  /// - Returns: A token; dropping it stops the calls.
  public func observe(_ handler: @escaping (ListChange) -> Void) -> ObservationToken {
    nextHandlerID += 1
    let id = nextHandlerID
    handlers.append((id, handler))
    return ObservationToken { [weak self] in self?.handlers.removeAll { $0.id == id } }
  }

  // MARK: Maintenance

  func willTouch(_ object: ManagedObject) {
    if object.model === model { touch(object) }
    guard !hopPaths.isEmpty else { return }
    // The results that reach `object` through a path read it: touched as if they changed.
    for path in hopPaths {
      var reached = model
      for (depth, hop) in path.enumerated() {
        guard let destination = reached.relationship(hop)?.destination else { break }
        reached = destination
        if destination === object.model {
          for referrer in referrers(of: [object], through: path[...depth]) { touch(referrer) }
        }
      }
    }
  }

  /// Takes `object`, of the query's entity, out of the results until the next delivery.
  private func touch(_ object: ManagedObject) {
    let id = ObjectIdentifier(object)
    guard touched[id] == nil else { return }
    touched[id] = (object, members.contains(id) ? position(of: object, in: sorted) : nil)
  }

  /// The objects that reach one of `targets` by following `path` (to-one relationships, the
  /// first from the query's entity): through each relationship's inverse, or the context's
  /// index of it, or (for neither) a scan of the entity's objects.
  private func referrers(of targets: [ManagedObject], through path: ArraySlice<Int>)
    -> [ManagedObject]
  {
    guard let hop = path.last else { return targets }
    let owners = pathModel(path.dropLast())
    guard let relationship = owners.relationship(hop) else { return [] }
    var found: [ManagedObject] = []
    for target in targets {
      if let inverse = relationship.inverse {
        found += target.slots[inverse].objects.filter { $0.slots[hop].object === target }
      } else if let related = context.table(for: owners).objects(relatedTo: target, through: hop) {
        found += related
      } else {
        found += context.table(for: owners).objects.filter { $0.slots[hop].object === target }
      }
    }
    return referrers(of: found, through: path.dropLast())
  }

  /// The model reached from the query's entity by following `path`.
  private func pathModel(_ path: ArraySlice<Int>) -> EntityModel {
    var reached = model
    for hop in path { reached = reached.relationship(hop)?.destination ?? reached }
    return reached
  }

  func refresh(_ pending: DeliveredChanges) {
    guard !touched.isEmpty else { return }
    let entries = touched.values.sorted {
      ($0.object.storedObjectID?.rawValue ?? .max) < ($1.object.storedObjectID?.rawValue ?? .max)
    }
    touched = [:]
    let oldWindow = isWindowed ? delivered : []
    delivered = []  // let `sorted` change in place
    for index in entries.compactMap(\.oldIndex).sorted(by: >) {
      members.remove(ObjectIdentifier(sorted.remove(at: index)))
    }
    for entry in entries where isMatch(entry.object) {
      sorted.insert(entry.object, at: insertionIndex(of: entry.object, in: sorted))
      members.insert(ObjectIdentifier(entry.object))
    }
    let change: ListChange
    if isWindowed {
      change = ListChange.between(
        oldWindow.map(ObjectIdentifier.init), window(of: sorted).map(ObjectIdentifier.init),
        updated: Set(
          entries.lazy.filter { pending.isUpdated($0.object) }.map { ObjectIdentifier($0.object) }))
    } else {
      change = difference(entries, pending)
    }
    registrar.withMutation(of: self, keyPath: \.results) {
      delivered = window(of: sorted)
      if !change.isEmpty { lastChange = change }
    }
    guard !change.isEmpty else { return }
    for (_, handler) in handlers { handler(change) }
  }

  /// The difference for an unlimited query, from the touched objects alone: the others keep
  /// their relative order, so an object that stayed has moved only if the number of
  /// untouched objects before it changed (or touched neighbours swapped).
  private func difference(
    _ entries: [(object: ManagedObject, oldIndex: Int?)], _ pending: DeliveredChanges
  ) -> ListChange {
    var change = ListChange()
    var stayed: [(oldIndex: Int, newIndex: Int, id: ObjectIdentifier, object: ManagedObject)] = []
    var oldTouched: [Int] = []
    var newTouched: [Int] = []
    for entry in entries {
      let newIndex =
        members.contains(ObjectIdentifier(entry.object))
        ? position(of: entry.object, in: sorted) : nil
      if let oldIndex = entry.oldIndex { oldTouched.append(oldIndex) }
      if let newIndex { newTouched.append(newIndex) }
      switch (entry.oldIndex, newIndex) {
      case (let old?, let new?):
        stayed.append((old, new, ObjectIdentifier(entry.object), entry.object))
      case (let old?, nil): change.removed.insert(old)
      case (nil, let new?): change.inserted.insert(new)
      case (nil, nil): break
      }
    }
    oldTouched.sort()
    newTouched.sort()
    stayed.sort { $0.newIndex < $1.newIndex }
    // Rank: how many untouched objects stand before the object.
    func rank(_ index: Int, among touchedIndexes: [Int]) -> Int {
      index - lowerBound(of: index, in: touchedIndexes)
    }
    var candidates: [(oldIndex: Int, newIndex: Int, id: ObjectIdentifier)] = []
    for entry in stayed {
      if rank(entry.oldIndex, among: oldTouched) != rank(entry.newIndex, among: newTouched) {
        change.moved.append(ListChange.Move(from: entry.oldIndex, to: entry.newIndex))
      } else {
        candidates.append((entry.oldIndex, entry.newIndex, entry.id))
      }
    }
    // Touched objects with equal ranks must also keep their order among themselves.
    let inOrder = ListChange.between(
      candidates.sorted { $0.oldIndex < $1.oldIndex }.map(\.id), candidates.map(\.id))
    let movedIDs = Set(inOrder.moved.map { candidates[$0.to].id })
    for entry in candidates where movedIDs.contains(entry.id) {
      change.moved.append(ListChange.Move(from: entry.oldIndex, to: entry.newIndex))
    }
    change.moved.sort { $0.to < $1.to }
    for entry in stayed where pending.isUpdated(entry.object) {
      change.updated.insert(entry.newIndex)
    }
    return change
  }

  // MARK: Order

  private func isMatch(_ object: ManagedObject) -> Bool {
    guard object.isTracked(by: context), object.lifecycle != .deleted,
      type(of: object) == T.self
    else { return false }
    guard let test else { return true }
    return (try? test(object)) ?? false
  }

  private func precedes(_ lhs: ManagedObject, _ rhs: ManagedObject) -> Bool {
    let left = unsafeDowncast(lhs, to: T.self)
    let right = unsafeDowncast(rhs, to: T.self)
    for sort in descriptor.sortBy {
      switch sort.compare(left, right) {
      case .orderedAscending: return true
      case .orderedDescending: return false
      case .orderedSame: continue
      }
    }
    return lhs.storedObjectID!.rawValue < rhs.storedObjectID!.rawValue
  }

  private func insertionIndex(of object: ManagedObject, in list: [ManagedObject]) -> Int {
    var low = 0
    var high = list.count
    while low < high {
      let middle = (low + high) / 2
      if precedes(list[middle], object) { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// The object's index, by binary search while its sort values are unchanged, else by scan.
  private func position(of object: ManagedObject, in list: [ManagedObject]) -> Int? {
    let guess = insertionIndex(of: object, in: list)
    if guess < list.count, list[guess] === object { return guess }
    return list.firstIndex { $0 === object }
  }

  private func lowerBound(of value: Int, in sorted: [Int]) -> Int {
    var low = 0
    var high = sorted.count
    while low < high {
      let middle = (low + high) / 2
      if sorted[middle] < value { low = middle + 1 } else { high = middle }
    }
    return low
  }

  private func window(of list: [ManagedObject]) -> [ManagedObject] {
    guard isWindowed else { return list }
    let offset = min(max(descriptor.fetchOffset ?? 0, 0), list.count)
    let end = descriptor.fetchLimit.map { min(offset + max($0, 0), list.count) } ?? list.count
    return Array(list[offset..<end])
  }

}
