import Synchronization

/// The changes made in a context since the last delivery to its observers, coalesced: an
/// object inserted and deleted before a delivery is in neither list, an inserted object's
/// later edits are part of its insertion, and an updated object's keys accumulate.
///
/// Each object carries its own flags for the batch (``ManagedObject/pendingFlags``) and its
/// place in the list of touched objects, so noting a change costs no hashing: the keys of an
/// updated saved object are bits at its place too, gathered by object when delivered.
struct PendingChanges {
  /// What happened to an object since the last delivery.
  struct Flags: OptionSet {
    let rawValue: UInt8
    static let inserted = Flags(rawValue: 1)
    static let updated = Flags(rawValue: 2)
    static let deleted = Flags(rawValue: 4)
  }

  /// Every object touched since the last delivery, once each, in the order first touched.
  private var touched: [ManagedObject] = []
  /// The changed properties of the touched objects, by place in ``touched``; only as long
  /// as the last place an update was noted at (a batch of insertions keeps none).
  private var touchedKeys: [ChangedProperties] = []
  /// The number of touched objects whose flags are not empty.
  private var newsCount = 0
  /// The identifiers of the objects noted as inserted, in order, as long as nothing but
  /// first insertions was noted (`onlyFirstInsertions`): a delivery of a new graph then
  /// needs to visit none of its objects.
  private var insertedIDs: [ObjectID] = []
  private var onlyFirstInsertions = true

  var isEmpty: Bool { newsCount == 0 }

  mutating func noteInsert(_ object: ManagedObject) {
    let touchedBefore = touched.count
    var flags = touch(object)
    if onlyFirstInsertions {
      if touched.count > touchedBefore, let id = object.storedObjectID {
        insertedIDs.append(id)
      } else {
        onlyFirstInsertions = false
      }
    }
    // Deleted and brought back (rollback) before anyone heard of the deletion: no news.
    if flags.contains(.deleted) {
      flags.remove(.deleted)
    } else {
      flags.insert(.inserted)
    }
    setFlags(flags, of: object)
  }

  mutating func noteUpdate(_ object: ManagedObject, property: Int) {
    var flags = touch(object)
    if flags.contains(.inserted) || flags.contains(.deleted) { return }
    onlyFirstInsertions = false
    flags.insert(.updated)
    setFlags(flags, of: object)
    let position = Int(object.pendingPosition)
    while touchedKeys.count <= position { touchedKeys.append(ChangedProperties()) }
    touchedKeys[position].insert(property)
  }

  mutating func noteDelete(_ object: ManagedObject) {
    onlyFirstInsertions = false
    var flags = touch(object)
    if flags.contains(.inserted) {
      flags.remove(.inserted)  // inserted and deleted before a delivery: no news
    } else {
      if flags.contains(.updated) { touchedKeys[Int(object.pendingPosition)] = ChangedProperties() }
      flags.remove(.updated)
      flags.insert(.deleted)
    }
    setFlags(flags, of: object)
  }

  /// Takes the batch for delivery, leaving this empty; marks each object with the batch's
  /// number so the delivered view answers membership without hashing, even if observers
  /// change objects (into the next batch) while it is delivered.
  ///
  /// - Parameter marking: Whether observers will ask the delivered view about objects
  ///   (``DeliveredChanges/isInserted(_:)`` and the like). When none will and only first
  ///   insertions were noted, no object is visited: their flags and places are left stale,
  ///   which ``touch(_:)`` recognizes.
  mutating func take(marking: Bool = true) -> DeliveredChanges {
    let batch = DeliveredChanges.nextBatch()
    if !marking && onlyFirstInsertions {
      let delivered = DeliveredChanges(
        batch: batch, inserted: touched, insertedIDs: insertedIDs, updated: [], deleted: [],
        updatedKeys: [:])
      self = PendingChanges()
      return delivered
    }
    var insertedIDs: [ObjectID] = []
    var onlyInserted = true
    for object in touched {
      let flags = Flags(rawValue: object.pendingFlags)
      object.pendingFlags = 0
      object.pendingPosition = -1
      object.deliveredFlags = flags.rawValue
      object.deliveredBatch = batch
      if flags == .inserted {
        // Read here, while the object is in the cache: 100,000 new objects would otherwise
        // be visited again to check their order and to list their identifiers.
        if let id = object.storedObjectID { insertedIDs.append(id) }
      } else {
        onlyInserted = false
      }
    }
    var inserted: [ManagedObject] = []
    var updated: [ManagedObject] = []
    var deleted: [ManagedObject] = []
    var updatedKeys: [ObjectIdentifier: ChangedProperties] = [:]
    if onlyInserted {
      // A new graph: the touched objects are the inserted ones, handed over as they are
      // rather than copied one by one (a retain each, a cache miss each).
      inserted = touched
    } else {
      insertedIDs = []
      for (position, object) in touched.enumerated() {
        let flags = Flags(rawValue: object.deliveredFlags)
        if flags.contains(.inserted) {
          inserted.append(object)
          if let id = object.storedObjectID { insertedIDs.append(id) }
        }
        if flags.contains(.updated) {
          updated.append(object)
          updatedKeys[ObjectIdentifier(object)] = touchedKeys[position]
        }
        if flags.contains(.deleted) { deleted.append(object) }
      }
    }
    let delivered = DeliveredChanges(
      batch: batch, inserted: inserted, insertedIDs: insertedIDs, updated: updated,
      deleted: deleted, updatedKeys: updatedKeys)
    self = PendingChanges()
    return delivered
  }

  /// The object's flags in this batch, adding it to the touched list if it is not there.
  /// Its place may be left over from an earlier batch: it then points past the end or at
  /// another object.
  private mutating func touch(_ object: ManagedObject) -> Flags {
    let position = Int(object.pendingPosition)
    if position >= 0, position < touched.count, touched[position] === object {
      return Flags(rawValue: object.pendingFlags)
    }
    object.pendingPosition = Int32(touched.count)
    object.pendingFlags = 0
    touched.append(object)
    return []
  }

  private mutating func setFlags(_ flags: Flags, of object: ManagedObject) {
    let hadNews = object.pendingFlags != 0
    object.pendingFlags = flags.rawValue
    newsCount += (flags.isEmpty ? 0 : 1) - (hadNews ? 1 : 0)
  }
}

/// One batch of coalesced changes being delivered to observers.
struct DeliveredChanges {
  /// Numbers batches across every context, so an object's marks never match another batch.
  private static let batchCounter = Atomic<UInt64>(0)

  static func nextBatch() -> UInt64 {
    batchCounter.add(1, ordering: .relaxed).newValue
  }

  let batch: UInt64
  /// Inserted objects, in the order first touched (identifier order when all of them were
  /// inserted since the last delivery: see ``insertedAreInIDOrder``).
  let inserted: [ManagedObject]
  /// The identifiers of `inserted`, in the same order.
  let insertedIDs: [ObjectID]
  /// Updated saved objects, in the order first changed.
  let updated: [ManagedObject]
  /// Deleted objects, in the order deleted.
  let deleted: [ManagedObject]
  /// The changed properties of each updated object.
  let updatedKeys: [ObjectIdentifier: ChangedProperties]

  private func flags(of object: ManagedObject) -> PendingChanges.Flags {
    object.deliveredBatch == batch ? PendingChanges.Flags(rawValue: object.deliveredFlags) : []
  }

  func isInserted(_ object: ManagedObject) -> Bool { flags(of: object).contains(.inserted) }
  func isUpdated(_ object: ManagedObject) -> Bool { flags(of: object).contains(.updated) }
  func isDeleted(_ object: ManagedObject) -> Bool { flags(of: object).contains(.deleted) }

  /// Whether `inserted` is in identifier order: numbers are handed out increasing, so it
  /// is unless an object inserted before was deleted and brought back.
  var insertedAreInIDOrder: Bool {
    insertedIDs.count == inserted.count
      && zip(insertedIDs, insertedIDs.dropFirst()).allSatisfy { $0 < $1 }
  }

  /// The changed properties of an updated object; nil for any other object.
  func updatedKeys(of object: ManagedObject) -> ChangedProperties? {
    isUpdated(object) ? updatedKeys[ObjectIdentifier(object)] : nil
  }
}
