import Foundation
import Synchronization

/// An in-place mutation of an ordered to-many relationship in progress:
/// `box.children.append(child)`, `box.children.remove(at: 3)`, `box.children[2] = other`.
///
/// Swift runs such a statement as one `_modify` access of the property: the relationship
/// lends the caller its list (``Relationship``'s `_modify`), the caller mutates it, and the
/// relationship takes the result. Done with a plain array, that costs what a whole-list
/// assignment costs: the lent array shares its storage with the relationship's, so the first
/// change copies all *n* objects, and the relationship then has to compare old and new to
/// find what changed (O(*n*) each time, quadratic over a list built by appending).
///
/// Instead, while the list is lent, the mutating methods of `Array where Element:
/// ManagedObject` that a relationship edit needs (`append`, `insert(_:at:)`, `remove(at:)`,
/// subscript assignment, `swapAt`, `removeAll(where:)`, `move(fromOffsets:toOffset:)`, ...)
/// recognize the lent array by its address and make the change through the relationship's own
/// index edits: inverse, change tracking, observation and the store's edit all in O(1)
/// besides the array's own work; then they lend the updated list again. Any other mutation
/// (`sort()`, a generic algorithm) copies the lent array, as it shares its storage, so when the
/// access ends the relationship sees storage it does not hold and takes the result as a
/// whole-list assignment (``ManagedObject/setToMany(_:to:)``): exact, at the cost of the
/// comparison. An array that is not lent (a local copy, an unrelated array) behaves as
/// `Array` does, at the cost of one atomic load.
@usableFromInline
final class ListModification {
  /// The object whose relationship is lent (kept alive by the access).
  unowned(unsafe) let owner: ManagedObject
  /// The relationship's property number.
  let index: Int
  /// The address of the lent array: only a mutating method called on that variable edits
  /// the relationship.
  let address: UnsafeMutableRawPointer
  /// The modification this one is nested in (a closure given to the outer mutation that
  /// mutates another relationship), restored when this one ends.
  private let outer: ListModification?

  private init(owner: ManagedObject, index: Int, address: UnsafeMutableRawPointer) {
    self.owner = owner
    self.index = index
    self.address = address
    outer = Self.current
  }

  /// How many modifications are in progress on all threads: when none is, a mutating method
  /// knows at once, inlined into its caller, that its array is not lent.
  @usableFromInline static let inProgress = Atomic<Int>(0)
  /// The innermost modification in progress on this thread.
  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }()

  private static var current: ListModification? {
    guard let pointer = pthread_getspecific(key) else { return nil }
    return Unmanaged<ListModification>.fromOpaque(pointer).takeUnretainedValue()
  }

  /// Starts lending relationship `index` of `owner` as `list` (the variable the
  /// relationship's `_modify` yields): until ``end()``, the mutating methods called on that
  /// variable edit the relationship.
  @usableFromInline
  static func begin<Value>(_ index: Int, of owner: ManagedObject, lending list: inout Value)
    -> ListModification
  {
    let address = withUnsafeMutablePointer(to: &list) { UnsafeMutableRawPointer($0) }
    let modification = ListModification(owner: owner, index: index, address: address)
    pthread_setspecific(key, Unmanaged.passUnretained(modification).toOpaque())
    inProgress.add(1, ordering: .relaxed)
    return modification
  }

  /// Ends the lending, restoring the modification it was nested in.
  @usableFromInline
  func end() {
    Self.inProgress.subtract(1, ordering: .relaxed)
    pthread_setspecific(Self.key, outer.map { Unmanaged.passUnretained($0).toOpaque() })
  }

  /// Takes the lent array back at the end of the access: when something other than
  /// ``edit(_:_:)`` changed it, as a whole-list assignment.
  @usableFromInline
  func finish(_ list: [ManagedObject]) {
    end()
    if !Self.holdsStorage(list, of: owner, index) { owner.setToMany(index, to: list) }
  }

  /// The modification lending `list`, if it is the lent array.
  ///
  /// Inlined: the check that no modification is in progress is all that an array no
  /// relationship lent pays (a user's own `[Box]`), where a call cost it 50 instructions.
  @inlinable @inline(__always)
  static func lending(_ list: inout [some ManagedObject]) -> ListModification? {
    guard inProgress.load(ordering: .relaxed) > 0 else { return nil }
    return lendingInProgress(&list)
  }

  /// The modification lending `list` among those in progress on this thread.
  @usableFromInline
  static func lendingInProgress(_ list: inout [some ManagedObject]) -> ListModification? {
    let address = withUnsafeMutablePointer(to: &list) { UnsafeMutableRawPointer($0) }
    var modification = current
    while let candidate = modification {
      if candidate.address == address { return candidate }
      modification = candidate.outer
    }
    return nil
  }

  // The edits of the array methods (`Array+Relationships.swift`), out of line.

  @usableFromInline
  func append<Element: ManagedObject>(_ object: Element, to list: inout [Element]) {
    edit(&list) { owner, index in owner.appendRelated(object, to: index) }
  }

  @usableFromInline
  func append<Element: ManagedObject>(_ objects: [Element], to list: inout [Element]) {
    edit(&list) { owner, index in
      for object in objects { owner.appendRelated(object, to: index) }
    }
  }

  @usableFromInline
  func insert<Element: ManagedObject>(_ object: Element, at i: Int, into list: inout [Element]) {
    edit(&list) { owner, index in owner.insertRelatedKeepingFirst(object, at: i, into: index) }
  }

  @usableFromInline
  func remove<Element: ManagedObject>(at i: Int, from list: inout [Element]) -> ManagedObject {
    edit(&list) { owner, index in owner.removeRelated(at: i, from: index) }
  }

  @usableFromInline
  func remove<Element: ManagedObject>(atOffsets positions: [Int], from list: inout [Element]) {
    edit(&list) { owner, index in owner.removeRelated(atOffsets: positions, from: index) }
  }

  @usableFromInline
  func swapAt<Element: ManagedObject>(_ i: Int, _ j: Int, in list: inout [Element]) {
    edit(&list) { owner, index in owner.swapRelated(i, j, in: index) }
  }

  @usableFromInline
  func replace<Element: ManagedObject>(
    at position: Int, with object: Element, in list: inout [Element]
  ) {
    edit(&list) { owner, index in owner.replaceRelated(at: position, with: object, in: index) }
  }

  @usableFromInline
  func move<Element: ManagedObject>(
    fromOffsets offsets: IndexSet, toOffset destination: Int, in list: inout [Element]
  ) {
    edit(&list) { owner, index in
      RelatedObjects<[ManagedObject]>(owner: owner, index: index)
        .move(fromOffsets: offsets, toOffset: destination)
    }
  }

  /// Makes an edit of the relationship through `edit`, with the lent array `list` letting
  /// go of the storage meanwhile (so that the relationship's list is its only holder and
  /// changes in place), then lends the result again.
  private func edit<Element: ManagedObject, Result>(
    _ list: inout [Element], _ edit: (ManagedObject, Int) -> Result
  ) -> Result {
    list = []
    let result = edit(owner, index)
    list = unsafeBitCast(owner.slots[index].objects, to: [Element].self)
    return result
  }

  /// Whether `list` holds the relationship's storage, as it does when every change was
  /// made through ``edit(_:_:)``.
  private static func holdsStorage(_ list: [ManagedObject], of owner: ManagedObject, _ index: Int)
    -> Bool
  {
    let current = owner.slots[index].objects
    guard list.count == current.count else { return false }
    return list.withUnsafeBufferPointer { lent in
      current.withUnsafeBufferPointer { held in
        UnsafeRawPointer(lent.baseAddress) == UnsafeRawPointer(held.baseAddress)
      }
    }
  }
}
