/// A set of a context's objects that remembers insertion order and costs no hashing: each
/// object keeps its position in the set in a field of its own (one field per kind of set),
/// so inserting, removing and testing membership are O(1) array operations.
///
/// The context tracks its inserted, updated and deleted objects in three of these. Objects
/// inserted into a context get increasing identifiers, so its inserted set lists them in
/// ``ObjectID`` order without sorting.
///
/// A set holds its members unretained: every member is registered in the context, whose
/// identity map holds it, and the context takes an object out of its sets before it lets go
/// of it (or holds it in a local array meanwhile). So adding and removing 100,000 objects
/// costs no reference counting, each a cache miss on an object visited long before.
struct ObjectSet {
  /// Which position field of the objects this set uses.
  enum Kind {
    case inserted, updated, deleted
  }

  let kind: Kind
  /// The members in insertion order; a removed member leaves a hole until the next
  /// compaction.
  private var slots: [Unmanaged<ManagedObject>?] = []
  /// The number of members.
  private(set) var count = 0

  init(_ kind: Kind) {
    self.kind = kind
  }

  var isEmpty: Bool { count == 0 }

  /// The members, in the order they were inserted.
  var objects: [ManagedObject] {
    var result: [ManagedObject] = []
    result.reserveCapacity(count)
    for case let object? in slots { result.append(object.takeUnretainedValue()) }
    return result
  }

  /// Calls `body` with each object, in insertion order, without making an array of them.
  func forEach(_ body: (ManagedObject) throws -> Void) rethrows {
    for case let object? in slots { try body(object.takeUnretainedValue()) }
  }

  func contains(_ object: ManagedObject) -> Bool {
    let position = Int(object.setPosition(kind))
    return position >= 0 && position < slots.count
      && slots[position]?.toOpaque() == Unmanaged.passUnretained(object).toOpaque()
  }

  /// Adds an object; does nothing if it is a member.
  mutating func insert(_ object: ManagedObject) {
    guard !contains(object) else { return }
    object.setSetPosition(kind, to: Int32(slots.count))
    slots.append(Unmanaged.passUnretained(object))
    count += 1
  }

  /// Removes an object; does nothing if it is not a member.
  mutating func remove(_ object: ManagedObject) {
    guard contains(object) else { return }
    slots[Int(object.setPosition(kind))] = nil
    object.setSetPosition(kind, to: -1)
    count -= 1
    if count == 0 {
      slots.removeAll(keepingCapacity: slots.count <= 1_024)
    } else if slots.count > 64, count * 4 < slots.count {
      compact()
    }
  }

  /// Removes every member, first calling `body` with each (one pass over the members).
  mutating func removeAll(_ body: (ManagedObject) -> Void = { _ in }) {
    for case let member? in slots {
      member._withUnsafeGuaranteedRef { object in
        body(object)
        object.setSetPosition(kind, to: -1)
      }
    }
    slots.removeAll(keepingCapacity: slots.count <= 1_024)
    count = 0
  }

  /// Closes the holes left by removals, keeping the order.
  private mutating func compact() {
    var kept: [Unmanaged<ManagedObject>?] = []
    kept.reserveCapacity(count * 2)
    for case let member? in slots {
      member._withUnsafeGuaranteedRef { $0.setSetPosition(kind, to: Int32(kept.count)) }
      kept.append(member)
    }
    slots = kept
  }
}

extension ManagedObject {
  /// The object's position in its context's set of a kind, -1 when not a member.
  @inline(__always)
  final func setPosition(_ kind: ObjectSet.Kind) -> Int32 {
    switch kind {
    case .inserted: insertedPosition
    case .updated: updatedPosition
    case .deleted: deletedPosition
    }
  }

  @inline(__always)
  final func setSetPosition(_ kind: ObjectSet.Kind, to position: Int32) {
    switch kind {
    case .inserted: insertedPosition = position
    case .updated: updatedPosition = position
    case .deleted: deletedPosition = position
    }
  }
}
