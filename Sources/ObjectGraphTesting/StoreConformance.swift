import Foundation
import ObjectGraph
import Testing

/// Checks that any ``PersistentStore`` follows the rules written on the protocol.
///
/// Give it a factory for a new, empty, unopened store and a `reopen` closure that takes an
/// open store, closes it, and returns an unopened store over the same data (the same
/// instance for a store that may be reopened, a new one over the same file for a durable
/// store). Each check opens stores with ``ConformanceSchema/schema`` and records failures with
/// `#expect`.
///
/// Use it from a Swift Testing test target to check your own store:
///
/// ```swift
/// import ObjectGraphTesting
///
/// @Test func myStoreConforms() throws {
///   let conformance = StoreConformance(makeStore: { MyStore() }, reopen: { $0.close(); return $0 })
///   try conformance.checkAll()
/// }
/// ```
public struct StoreConformance {
  /// Creates the checks for a kind of store.
  ///
  /// - Parameters:
  ///   - makeStore: Makes a new, empty, unopened store.
  ///   - reopen: Closes an open store and returns an unopened store holding the same data.
  public init(
    makeStore: @escaping () throws -> any PersistentStore,
    reopen: @escaping (any PersistentStore) throws -> any PersistentStore
  ) {
    self.makeStore = makeStore
    self.reopen = reopen
  }

  /// Runs every check.
  public func checkAll() throws {
    try checkRoundTripOfEveryValueType()
    try checkListEditsApplyInOrder()
    try checkDeletesRemoveObjects()
    try checkIDsAndNextObjectNumberSurviveReopen()
    try checkFailedSaveLeavesStoreUnchanged()
    try checkClosedStoreThrowsStoreClosed()
    try checkOpeningTwiceThrowsStoreInUse()
    try checkOtherSchemaIsRefused()
  }

  /// Makes a new, empty, unopened store.
  public var makeStore: () throws -> any PersistentStore
  /// Closes an open store and returns an unopened store holding the same data.
  public var reopen: (any PersistentStore) throws -> any PersistentStore

  /// Every value type, including optionals, unicode, empty and large values, survives a
  /// save, a load, and a reopen.
  public func checkRoundTripOfEveryValueType() throws {
    let store = try opened(makeStore())
    let objects =
      [
        ConformanceSchema.item(1, children: [2, 3]), ConformanceSchema.item(2, parent: 1),
        ConformanceSchema.item(3, parent: 1), ConformanceSchema.note(4, text: "", item: 1),
        ConformanceSchema.note(5, text: "orphan", item: nil),
      ] + ConformanceSchema.edgeCaseItems(startingAt: 6)
    try store.save(Changeset(inserted: objects, nextObjectNumber: 9))
    let expected = StoreContents(objects: objects, nextObjectNumber: 9).comparable
    #expect(try store.load().comparable == expected)
    let reopened = try opened(reopen(store))
    #expect(try reopened.load().comparable == expected)
    reopened.close()
  }

  /// List edits apply in order with `Array` semantics, and a set replaces the whole list.
  public func checkListEditsApplyInOrder() throws {
    let store = try opened(makeStore())
    let items = (1...6).map { ConformanceSchema.item($0) }
    try store.save(Changeset(inserted: items, nextObjectNumber: 7))
    var expected = [2, 3, 4].map { ObjectID(rawValue: $0) }
    let edits: [[ListEdit]] = [
      [.insert(ObjectID(rawValue: 2), at: 0), .insert(ObjectID(rawValue: 3), at: 1)],
      [.insert(ObjectID(rawValue: 4), at: 0), .move(from: 0, to: 2)],
      [.move(from: 2, to: 0), .move(from: 1, to: 2), .move(from: 0, to: 1)],
    ]
    for batch in edits {
      try store.save(update(1, .edit(batch)))
    }
    var list: [ObjectID] = []
    for batch in edits { try list.apply(batch) }
    expected = list
    #expect(try children(of: 1, in: store) == expected)
    try store.save(update(1, .edit([.remove(at: 1), .insert(ObjectID(rawValue: 5), at: 2)])))
    try list.apply([.remove(at: 1), .insert(ObjectID(rawValue: 5), at: 2)])
    #expect(try children(of: 1, in: store) == list)
    let reopened = try opened(reopen(store))
    #expect(try children(of: 1, in: reopened) == list)
    try reopened.save(update(1, .set(.references([ObjectID(rawValue: 6)]))))
    #expect(try children(of: 1, in: reopened) == [ObjectID(rawValue: 6)])
    reopened.close()
  }

  /// Deleted objects are gone, after a reopen too; the others stay.
  public func checkDeletesRemoveObjects() throws {
    let store = try opened(makeStore())
    try store.save(
      Changeset(inserted: (1...4).map { ConformanceSchema.item($0) }, nextObjectNumber: 5))
    try store.save(
      Changeset(deleted: [ObjectID(rawValue: 2), ObjectID(rawValue: 4)], nextObjectNumber: 5))
    #expect(try store.load().objects.map(\.id.rawValue).sorted() == [1, 3])
    let reopened = try opened(reopen(store))
    #expect(try reopened.load().objects.map(\.id.rawValue).sorted() == [1, 3])
    reopened.close()
  }

  /// Object ids and the next object number are kept exactly, across reopens.
  public func checkIDsAndNextObjectNumberSurviveReopen() throws {
    let store = try opened(makeStore())
    let ids: [UInt64] = [7, 1_000, 1 << 40, UInt64.max - 1]
    try store.save(
      Changeset(inserted: ids.map { ConformanceSchema.item($0) }, nextObjectNumber: 10_000))
    try store.save(Changeset(nextObjectNumber: 20_000))
    try store.save(Changeset(nextObjectNumber: 15_000))  // the store keeps the largest
    var reopened = try opened(reopen(store))
    #expect(try reopened.load().objects.map(\.id.rawValue).sorted() == ids)
    #expect(try reopened.load().nextObjectNumber == 20_000)
    reopened = try opened(reopen(reopened))
    #expect(try reopened.load().nextObjectNumber == 20_000)
    reopened.close()
  }

  /// A changeset that does not fit is refused whole, and the store stays usable.
  public func checkFailedSaveLeavesStoreUnchanged() throws {
    let store = try opened(makeStore())
    try store.save(
      Changeset(inserted: [ConformanceSchema.item(1, children: [])], nextObjectNumber: 2))
    let before = try store.load().comparable
    let refused = [
      // Inserts a new object, then updates one that does not exist.
      Changeset(
        inserted: [ConformanceSchema.item(2)],
        updated: [ObjectUpdate(id: ObjectID(rawValue: 99), entity: 0, changes: [])],
        nextObjectNumber: 100),
      // Changes object 1, then edits its list out of range.
      Changeset(
        updated: [
          ObjectUpdate(
            id: ObjectID(rawValue: 1), entity: 0,
            changes: [
              PropertyChange(property: ConformanceSchema.title, kind: .set(.string("changed"))),
              PropertyChange(property: ConformanceSchema.children, kind: .edit([.remove(at: 3)])),
            ])
        ], nextObjectNumber: 100),
      // Deletes object 1, then one that does not exist.
      Changeset(deleted: [ObjectID(rawValue: 1), ObjectID(rawValue: 50)], nextObjectNumber: 100),
      // Inserts an object that exists.
      Changeset(inserted: [ConformanceSchema.item(1)], nextObjectNumber: 100),
    ]
    for changeset in refused {
      #expect(throws: ObjectGraphError.self) { try store.save(changeset) }
      #expect(try store.load().comparable == before)
    }
    try store.save(update(1, .set(.string("still usable")), property: ConformanceSchema.title))
    let reopened = try opened(reopen(store))
    let title = try reopened.load().objects.first?.values[ConformanceSchema.title]
    #expect(title == .string("still usable"))
    #expect(try reopened.load().nextObjectNumber == 7)
    reopened.close()
  }

  /// After `close()`, every call throws `storeClosed`; closing again is harmless.
  public func checkClosedStoreThrowsStoreClosed() throws {
    let store = try opened(makeStore())
    try store.save(Changeset(inserted: [ConformanceSchema.item(1)], nextObjectNumber: 2))
    store.close()
    store.close()
    #expect(errorCode { _ = try store.load() } == .storeClosed)
    #expect(errorCode { try store.save(Changeset(nextObjectNumber: 3)) } == .storeClosed)
  }

  /// Opening a store that is open already throws `storeInUse`, and the store keeps working.
  public func checkOpeningTwiceThrowsStoreInUse() throws {
    let store = try opened(makeStore())
    #expect(errorCode { try store.open(schema: ConformanceSchema.schema) } == .storeInUse)
    try store.save(Changeset(inserted: [ConformanceSchema.item(1)], nextObjectNumber: 2))
    #expect(try store.load().objects.count == 1)
    store.close()
  }

  /// A store holding data of one schema refuses another, and keeps its data.
  public func checkOtherSchemaIsRefused() throws {
    let store = try opened(makeStore())
    try store.save(Changeset(inserted: [ConformanceSchema.item(1)], nextObjectNumber: 2))
    let reopened = try reopen(store)
    #expect(
      errorCode { try reopened.open(schema: ConformanceSchema.changedSchema) } == .schemaMismatch)
    let again = try opened(reopen(reopened))
    #expect(try again.load().objects.count == 1)
    again.close()
  }

  // MARK: - Helpers

  private func opened(_ store: any PersistentStore) throws -> any PersistentStore {
    try store.open(schema: ConformanceSchema.schema)
    return store
  }

  private func update(
    _ id: UInt64, _ kind: PropertyChange.Kind, property: Int = ConformanceSchema.children
  ) -> Changeset {
    ConformanceSchema.update(id, property: property, kind, nextObjectNumber: 7)
  }

  private func children(of id: UInt64, in store: any PersistentStore) throws -> [ObjectID] {
    let object = try store.load().objects.first { $0.id.rawValue == id }
    guard case .references(let ids) = object?.values[ConformanceSchema.children] else { return [] }
    return ids
  }
}
