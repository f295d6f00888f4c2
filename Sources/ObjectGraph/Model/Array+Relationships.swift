import Foundation

/// The mutating methods of an array of objects that edit an ordered to-many relationship in
/// place when called on it (`box.children.append(child)`), at O(1) bookkeeping besides the
/// array's own work: see ``ListModification``.
///
/// On any other array they do what `Array`'s own methods do. On a relationship they do what
/// assigning the mutated array would, including the relationship's rule that an object
/// appears once, at its first position (appending an object already there changes nothing),
/// with every inverse, observer and saved edit updated at once.
///
/// ```swift
/// box.children.append(child)            // one insert: O(1)
/// box.children.insert(note, at: 0)      // one insert: the array's shift, O(1) bookkeeping
/// box.children.remove(at: 3)            // one remove
/// box.children.swapAt(0, 1)             // two moves
/// box.children[2] = other               // a remove and an insert
/// box.children.removeAll { $0.isDone }  // one remove a removed object, one pass
/// box.children.move(fromOffsets: [4], toOffset: 0)  // one move
/// box.children.sort { $0.title < $1.title }  // any other change: compared as a whole
/// ```
extension Array where Element: ManagedObject {
  // Inlinable, so that an array that is not lent costs what `Array`'s own method costs,
  // specialized in the caller's module, besides one call that finds it is not lent.

  /// Appends an object (on a relationship: unless it is already there).
  ///
  /// - Complexity: O(1) amortized.
  @inlinable
  public mutating func append(_ newElement: Element) {
    guard let modification = ListModification.lending(&self) else {
      return PlainArray.append(newElement, to: &self)
    }
    modification.append(newElement, to: &self)
  }

  /// Appends the objects of a sequence, in order (on a relationship: but those already
  /// there).
  ///
  /// - Complexity: O(*m*) for *m* objects appended.
  @inlinable
  public mutating func append<S: Sequence>(contentsOf newElements: S)
  where S.Element == Element {
    guard let modification = ListModification.lending(&self) else {
      return PlainArray.append(contentsOf: newElements, to: &self)
    }
    modification.append(Array(newElements), to: &self)
  }

  /// Inserts an object at a position (on a relationship: an object already there moves
  /// to `i` if it stood at or after it, and stays if it stood before).
  ///
  /// - Complexity: O(*n*) for the array's shift; O(1) bookkeeping.
  @inlinable
  public mutating func insert(_ newElement: Element, at i: Int) {
    guard let modification = ListModification.lending(&self) else {
      return PlainArray.insert(newElement, at: i, into: &self)
    }
    modification.insert(newElement, at: i, into: &self)
  }

  /// Removes and returns the object at a position.
  ///
  /// - Complexity: O(*n*) for the array's shift; O(1) bookkeeping.
  @inlinable
  @discardableResult
  public mutating func remove(at i: Int) -> Element {
    guard let modification = ListModification.lending(&self) else {
      return PlainArray.remove(at: i, from: &self)
    }
    return unsafeDowncast(modification.remove(at: i, from: &self), to: Element.self)
  }

  /// Removes and returns the first object.
  @inlinable
  @discardableResult
  public mutating func removeFirst() -> Element {
    precondition(!isEmpty, "Can't remove first element from an empty collection")
    return remove(at: 0)
  }

  /// Removes and returns the last object.
  ///
  /// - Complexity: O(1).
  @inlinable
  @discardableResult
  public mutating func removeLast() -> Element {
    precondition(!isEmpty, "Can't remove last element from an empty collection")
    return remove(at: count - 1)
  }

  /// Removes every object that satisfies a predicate, keeping the others in order.
  ///
  /// - Complexity: O(*n*) in one pass; O(1) bookkeeping a removed object.
  @inlinable
  public mutating func removeAll(where shouldBeRemoved: (Element) throws -> Bool) rethrows {
    guard let modification = ListModification.lending(&self) else {
      return try PlainArray.removeAll(from: &self, where: shouldBeRemoved)
    }
    var positions: [Int] = []
    for (position, element) in enumerated() where try shouldBeRemoved(element) {
      positions.append(position)
    }
    modification.remove(atOffsets: positions, from: &self)
  }

  /// Exchanges the objects at two positions (on a relationship: two moves).
  ///
  /// - Complexity: O(*n*) for the array's shifts; O(1) bookkeeping.
  @inlinable
  public mutating func swapAt(_ i: Int, _ j: Int) {
    guard let modification = ListModification.lending(&self) else {
      return PlainArray.swapAt(i, j, in: &self)
    }
    modification.swapAt(i, j, in: &self)
  }

  /// The object at a position; set on a relationship, a remove and an insert (an object
  /// already in the list keeps its first position).
  public subscript(position: Int) -> Element {
    @inlinable get { PlainArray.element(at: position, of: self) }
    @inlinable set {
      guard let modification = ListModification.lending(&self) else {
        return PlainArray.set(newValue, at: position, in: &self)
      }
      modification.replace(at: position, with: newValue, in: &self)
    }
  }

  /// Moves the elements at `offsets` so they stand before the element that was at
  /// `destination`, as SwiftUI's `onMove` reports a drag.
  ///
  /// On a relationship property (`box.children.move(fromOffsets: [0], toOffset: 2)`) a move
  /// of one element is one move for the store.
  ///
  /// - Complexity: O(*n*); O(1) bookkeeping for one element.
  @inlinable
  public mutating func move(fromOffsets offsets: IndexSet, toOffset destination: Int) {
    if let modification = ListModification.lending(&self) {
      return modification.move(fromOffsets: offsets, toOffset: destination, in: &self)
    }
    let moving = offsets.map { self[$0] }
    let before = offsets.count(in: 0..<destination)
    for offset in offsets.reversed() { PlainArray.remove(at: offset, from: &self) }
    PlainArray.insert(contentsOf: moving, at: destination - before, into: &self)
  }
}

/// `Array`'s own methods, called from a context where the overloads above are not
/// candidates (an unconstrained element type), for arrays that are not lent.
@usableFromInline
enum PlainArray {
  @inlinable @inline(__always)
  static func append<Element>(_ element: Element, to array: inout [Element]) {
    array.append(element)
  }

  @inlinable @inline(__always)
  static func append<Element, S: Sequence>(contentsOf elements: S, to array: inout [Element])
  where S.Element == Element {
    array.append(contentsOf: elements)
  }

  @inlinable @inline(__always)
  static func insert<Element>(_ element: Element, at i: Int, into array: inout [Element]) {
    array.insert(element, at: i)
  }

  @inlinable @inline(__always) @discardableResult
  static func remove<Element>(at i: Int, from array: inout [Element]) -> Element {
    array.remove(at: i)
  }

  @inlinable @inline(__always)
  static func removeAll<Element>(
    from array: inout [Element], where shouldBeRemoved: (Element) throws -> Bool
  ) rethrows {
    try array.removeAll(where: shouldBeRemoved)
  }

  @inlinable @inline(__always)
  static func insert<Element, C: Collection>(
    contentsOf elements: C, at i: Int, into array: inout [Element]
  ) where C.Element == Element {
    array.insert(contentsOf: elements, at: i)
  }

  @inlinable @inline(__always)
  static func swapAt<Element>(_ i: Int, _ j: Int, in array: inout [Element]) {
    array.swapAt(i, j)
  }

  @inlinable @inline(__always)
  static func element<Element>(at i: Int, of array: [Element]) -> Element {
    array[i]
  }

  @inlinable @inline(__always)
  static func set<Element>(_ element: Element, at i: Int, in array: inout [Element]) {
    array[i] = element
  }
}
