import Foundation

/// The projection of a relationship (`box.$children`): index operations on an ordered
/// to-many relationship, each recorded as one list edit for the store.
///
/// ```swift
/// box.$children.insert(task, at: 0)
/// box.$children.move(fromOffsets: [2], toOffset: 0)
/// box.$children.remove(at: 1)
/// ```
///
/// Each operation keeps the inverse side up to date and costs O(1) bookkeeping besides the
/// array operation itself. Assigning or mutating `box.children` directly works too: a single
/// insert, remove or move is recognized and recorded as such.
public struct RelatedObjects<Value: RelationshipValue> {
  @usableFromInline let owner: ManagedObject
  @usableFromInline let index: Int

  @usableFromInline
  init(owner: ManagedObject, index: Int) {
    self.owner = owner
    self.index = index
  }
}

extension RelatedObjects {
  /// The related objects, in order.
  public func objects<Element>() -> [Element] where Value == [Element] {
    unsafeBitCast(owner.readObjects(index), to: [Element].self)
  }

  /// The number of related objects.
  public var count: Int { owner.readObjects(index).count }

  /// Inserts an object at a position; an object already related is moved there instead.
  ///
  /// - Precondition: `position` is in `0...count`; otherwise the program stops with a message
  ///   naming the object and relationship (in release builds too).
  /// - Complexity: O(*n*) for the array operation; O(1) bookkeeping.
  public func insert<Element>(_ object: Element, at position: Int) where Value == [Element] {
    owner.insertRelated(object, at: position, into: index)
  }

  /// Appends an object (or moves it to the end if already related).
  ///
  /// - Complexity: Amortized O(1) bookkeeping.
  public func append<Element>(_ object: Element) where Value == [Element] {
    let count = owner.slots[index].objects.count
    let isRelated = owner.slots[index].objects.contains { $0 === object }
    owner.insertRelated(object, at: isRelated ? count - 1 : count, into: index)
  }

  /// Removes the object at a position, and returns it.
  ///
  /// - Precondition: `position` is in `0..<count`, as for ``move(from:to:)``.
  /// - Complexity: O(*n*) for the array operation; O(1) bookkeeping.
  @discardableResult
  public func remove<Element>(at position: Int) -> Element where Value == [Element] {
    // Reads the list without holding it, so that removing from it copies nothing.
    let count = owner.slots[index].objects.count
    guard position >= 0 && position < count else {
      fatalError(
        MisuseMessage.indexOutOfRange(position, "position", of: owner, index, count: count))
    }
    let object = owner.slots[index].objects[position]
    owner.removeRelated(at: position, from: index)
    return unsafeDowncast(object, to: Element.self)
  }

  /// The most offsets ``move(fromOffsets:toOffset:)`` makes as single moves.
  static var largestMoveByMoves: Int { 64 }

  /// Moves one object: removes it at `from` and inserts it at `to` (`Array` semantics).
  ///
  /// - Precondition: `from` and `to` are in `0..<count`; otherwise the program stops with a
  ///   message naming the object and relationship (in release builds too).
  /// - Complexity: O(*n*) for the array operation; O(1) bookkeeping.
  public func move<Element>(from: Int, to: Int) where Value == [Element] {
    let count = owner.slots[index].objects.count
    guard from >= 0 && from < count else {
      fatalError(MisuseMessage.indexOutOfRange(from, "move source", of: owner, index, count: count))
    }
    guard to >= 0 && to < count else {
      fatalError(
        MisuseMessage.indexOutOfRange(to, "move destination", of: owner, index, count: count))
    }
    owner.moveRelated(from: from, to: to, in: index)
  }

  /// Moves objects the way SwiftUI's `onMove` reports it: the objects at `offsets` go before
  /// the object that was at `destination`, in their order.
  ///
  /// Made as one ``move(from:to:)`` per object (up to 64 objects; more become one
  /// assignment of the reordered list), so the store records a drag of *k* rows as *k*
  /// moves, not a rewrite of the rows between.
  ///
  /// - Precondition: Every offset is in `0..<count` and `destination` in `0...count`, as
  ///   for ``move(from:to:)``.
  /// - Complexity: O(*k*) bookkeeping for *k* offsets, besides the array's own work.
  public func move<Element>(fromOffsets offsets: IndexSet, toOffset destination: Int)
  where Value == [Element] {
    let count = owner.slots[index].objects.count
    if let last = offsets.last, last >= count {
      fatalError(MisuseMessage.indexOutOfRange(last, "offset", of: owner, index, count: count))
    }
    if let first = offsets.first, first < 0 {
      fatalError(MisuseMessage.indexOutOfRange(first, "offset", of: owner, index, count: count))
    }
    guard destination >= 0 && destination <= count else {
      fatalError(
        MisuseMessage.indexOutOfRange(
          destination, "destination offset", of: owner, index, count: count, endIsValid: true))
    }
    if offsets.count <= Self.largestMoveByMoves {
      // The rows above the destination, in order, each to just above it (each shifts the
      // ones moved before it up by one), then the rows below it, in order, each just after
      // the rows placed so far.
      let above = offsets.filter { $0 < destination }
      for (moved, from) in above.enumerated() where from - moved != destination - 1 {
        owner.moveRelated(from: from - moved, to: destination - 1, in: index)
      }
      var target = destination
      for from in offsets where from >= destination {
        if from != target { owner.moveRelated(from: from, to: target, in: index) }
        target += 1
      }
      return
    }
    var list = owner.slots[index].objects
    list.move(fromOffsets: offsets, toOffset: destination)
    owner.setToMany(index, to: list)
  }
}
