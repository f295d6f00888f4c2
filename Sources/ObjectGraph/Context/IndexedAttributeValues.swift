/// The values of a loaded entity's indexed attributes, a column per attribute, each in the
/// order of the entity table's members: noted by the loader as it makes each object, while
/// the object's values are in the cache, so that the build of the attribute indexes reads
/// no object.
///
/// Reading every object's indexed attribute again, through the object to its slots, was a
/// quarter of that build, and two cache misses an object on the core the app was walking
/// its objects with.
///
/// Each piece of a load fills the places of its own objects (``prepare(members:)`` before
/// it makes any, then ``set(_:attribute:member:)``), so every place is initialized once
/// every piece has run, as ``deinit`` requires. Unchecked sendable: the pieces write
/// disjoint places, and the index build reads the columns only after the load.
final class IndexedAttributeValues: @unchecked Sendable {
  /// The indexed attributes, by property number, in column order.
  let properties: [Int]
  /// The number of members, the length of each column.
  let memberCount: Int
  private let values: UnsafeMutablePointer<PersistentValue>

  /// Room for the values of `properties` of `memberCount` objects, not yet initialized.
  init(properties: [Int], memberCount: Int) {
    self.properties = properties
    self.memberCount = memberCount
    values = .allocate(capacity: max(properties.count * memberCount, 1))
  }

  deinit {
    values.deinitialize(count: properties.count * memberCount)
    values.deallocate()
  }

  /// Initializes the places of the members at `members` in every column, to `.null`.
  func prepare(members: Range<Int>) {
    for column in properties.indices {
      (values + column * memberCount + members.lowerBound).initialize(
        repeating: .null, count: members.count)
    }
  }

  /// Notes the value of attribute number `attribute` (a column) of member `member`.
  @inline(__always)
  func set(_ value: PersistentValue, attribute: Int, member: Int) {
    values[attribute * memberCount + member] = value
  }

  /// The values of property `property`, in member order, in place (valid while this
  /// object lives); nil if it has no column.
  func column(for property: Int) -> UnsafeBufferPointer<PersistentValue>? {
    guard let column = properties.firstIndex(of: property) else { return nil }
    return UnsafeBufferPointer(start: values + column * memberCount, count: memberCount)
  }
}
