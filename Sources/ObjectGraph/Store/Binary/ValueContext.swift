/// The previous value of each property index in a record, for context-based encodings.
///
/// Property indexes outside `0..<limit` (only possible in a corrupt record) have no context:
/// reading gives `nil`, writing does nothing, so encoder and decoder still agree.
///
/// One encoder or decoder owns it and reads and writes it once or twice a value: a class
/// holding its values in memory of its own, so that a write costs a bounds check and a store
/// (kept in an array, each write paid a copy-on-write check and a growth check).
final class ValueContext<Value> {
  /// The largest property index that gets a context.
  static var limit: Int { 4096 }

  // Unchecked: touched only by this class's members, which never call out while they
  // access them.
  @exclusivity(unchecked) private var values: UnsafeMutablePointer<Value?>?
  /// How many indexes ``values`` holds (all initialized, `nil` until written).
  @exclusivity(unchecked) private var capacity = 0

  init() {}

  deinit {
    guard let values else { return }
    values.deinitialize(count: capacity)
    values.deallocate()
  }

  /// The previous value of the property, if any.
  subscript(property: Int) -> Value? {
    get {
      UInt(bitPattern: property) < UInt(bitPattern: capacity)
        ? values.unsafelyUnwrapped[property] : nil
    }
    set {
      guard UInt(bitPattern: property) < UInt(bitPattern: capacity) else {
        return grow(toSet: newValue, at: property)
      }
      values.unsafelyUnwrapped[property] = newValue
    }
  }

  /// Makes room for `property` (within ``limit``) and sets its value.
  @inline(never)
  private func grow(toSet value: Value?, at property: Int) {
    guard property >= 0, property < Self.limit else { return }
    let grownCapacity = min(max(property + 1, 2 * capacity, 8), Self.limit)
    let grown = UnsafeMutablePointer<Value?>.allocate(capacity: grownCapacity)
    if let values {
      grown.moveInitialize(from: values, count: capacity)
      values.deallocate()
    }
    (grown + capacity).initialize(repeating: nil, count: grownCapacity - capacity)
    values = grown
    capacity = grownCapacity
    grown[property] = value
  }
}
