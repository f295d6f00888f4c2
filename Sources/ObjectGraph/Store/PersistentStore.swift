/// The seam between an ``ObjectContext`` and where its objects are kept.
///
/// The context never knows which store it talks to: everything it reads comes from
/// ``load()``, everything it writes goes through ``save(_:)`` as a ``Changeset``.
/// ObjectGraph ships ``InMemoryStore`` and `BinaryStore`; you may write your own.
///
/// ## Rules for implementers
///
/// A conforming store MUST:
/// - In ``open(schema:)``, check that what it holds was written with the same ``Schema`` (or
///   hold nothing yet and record it), and throw ``ObjectGraphError`` with code
///   ``ObjectGraphError/Code/schemaMismatch`` otherwise, changing nothing.
/// - In ``load()``, return every stored object with all its values, exactly as last saved:
///   attribute values unchanged, to-one references, and to-many references in their saved
///   order; and the ``StoreContents/nextObjectNumber`` it was last given.
/// - Apply a ``save(_:)`` atomically: after it returns, ``load()`` (in this process or after a
///   restart, for a durable store) shows all of the changeset; if it throws, nothing of it.
///   A durable store makes the changes durable before returning.
/// - Keep ``ObjectID``s as given: the store never invents or renumbers identifiers.
/// - Apply ``ListEdit``s in order, with Swift `Array` semantics, to the list stored before
///   the save, and ``PropertyChange/Kind/set(_:)`` as a replacement of the whole value.
/// - Be safe to call from any thread (it is `Sendable`); the container serializes saves of
///   one context but contexts on different actors may save concurrently.
/// - After ``close()``, throw ``ObjectGraphError/Code/storeClosed`` from every other call,
///   and release what it holds (files, locks), so the store can be opened again.
///
/// A store MAY keep its data in any form, compact it at any time, and refuse a changeset
/// that is inconsistent with what it holds (an update of an unknown object, an edit out of
/// range) by throwing ``ObjectGraphError/Code/corruptStore`` without applying any of it.
///
/// The store conformance tests in `Tests/ObjectGraphTests/StoreConformance` check these rules
/// and can be run against any store.
public protocol PersistentStore: AnyObject, Sendable {
  /// Opens the store for a schema.
  ///
  /// - Throws: ``ObjectGraphError`` naming the store and what differs when the stored data
  ///   was written with another schema, or when the store cannot be opened.
  func open(schema: Schema) throws

  /// Everything the store holds.
  ///
  /// - Complexity: O(*n*) in the number of stored objects and values.
  func load() throws -> StoreContents

  /// The stored objects among `ids` (an id not stored is left out), in increasing id
  /// order, with the next object number: a part of what ``load()`` answers, for a reader
  /// that needs a few objects of a large store.
  ///
  /// A store that can find objects by id answers without reading the others; the default
  /// loads everything and keeps these. Later partial reads (the objects an index term of a
  /// predicate names) will come the same way: a requirement that answers ``StoreContents``
  /// for part of the store, with a default built on ``load()``, so every store keeps
  /// working.
  ///
  /// ```swift
  /// let contents = try store.load(ids: [ObjectID(rawValue: 42)])
  /// contents.packed.forEach { id, entity, values in print(id, values.count) }
  /// ```
  ///
  /// - Complexity: by default that of ``load()``, plus O(*k*) in the values kept.
  func load(ids: Set<ObjectID>) throws -> StoreContents

  /// Applies a changeset atomically (and durably, for a durable store).
  ///
  /// - Throws: ``ObjectGraphError``; when it throws, the store is unchanged.
  func save(_ changeset: Changeset) throws

  /// Releases the store's resources. Idempotent.
  func close()
}

extension PersistentStore {
  /// The default partial read: everything loaded, the objects among `ids` kept.
  public func load(ids: Set<ObjectID>) throws -> StoreContents {
    let all = try load()
    var kept: [ObjectSnapshot] = []
    all.packed.forEach { id, entity, values in
      if ids.contains(id) {
        kept.append(ObjectSnapshot(id: id, entity: entity, values: Array(values)))
      }
    }
    kept.sort { $0.id < $1.id }
    return StoreContents(packed: PackedObjects(kept), nextObjectNumber: all.nextObjectNumber)
  }
}

/// What a store holds: every object and the next unused object number.
///
/// The binary store hands its objects over packed, their values in one buffer, which is how
/// a context loads them fastest; ``objects`` presents them as snapshots (made on each read;
/// a change turns the contents into snapshots once, so building contents object by object
/// stays linear).
public struct StoreContents: Sendable {
  /// The stored objects, as snapshots or packed.
  var list: ObjectList
  /// The smallest object number never handed out by this store's contexts.
  public var nextObjectNumber: UInt64

  /// Every stored object, in no particular order.
  ///
  /// - Complexity: O(1) for contents made from snapshots; O(*n*) in the number of values
  ///   for a store's packed contents, on every read.
  public var objects: [ObjectSnapshot] {
    get { list.snapshots }
    _modify { yield &list.snapshots }
    set { list.snapshots = newValue }
  }

  /// Creates store contents.
  public init(objects: [ObjectSnapshot], nextObjectNumber: UInt64) {
    self.init(list: ObjectList(objects), nextObjectNumber: nextObjectNumber)
  }

  /// Creates store contents from packed objects: the fastest a context loads (it takes
  /// the values' buffer as its objects' memory).
  ///
  /// ```swift
  /// var objects = PackedObjects()
  /// for row in rows { objects.append(ObjectSnapshot(id: row.id, entity: 0, values: row.values)) }
  /// return StoreContents(packed: objects, nextObjectNumber: next)
  /// ```
  public init(packed: PackedObjects, nextObjectNumber: UInt64) {
    self.init(list: ObjectList(packed: packed), nextObjectNumber: nextObjectNumber)
  }

  init(list: ObjectList, nextObjectNumber: UInt64) {
    self.list = list
    self.nextObjectNumber = nextObjectNumber
  }

  /// Every stored object, packed.
  ///
  /// - Complexity: O(1) for packed contents (a store's, or made with
  ///   ``init(packed:nextObjectNumber:)``); O(*n*) in the number of values, on every read,
  ///   for contents made from snapshots.
  public var packed: PackedObjects { list.packed }
}
