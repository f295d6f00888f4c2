import Foundation

/// An attribute value made when it is first needed, not when its slot is filled.
///
/// Two kinds:
/// - **A `UUID` default.** `UUID()` costs about 2.2 µs on Linux, more than everything else a
///   new object costs, and `@Attribute var id = UUID()` is usually overwritten at once (or
///   never read before the object is inserted). So a `UUID` default is kept as its closure
///   and evaluated on the first read, or when the object is inserted into a context; never
///   if the value is set first. Other defaults are evaluated when the object is created. It
///   keeps the wrapper's own `() -> UUID` closure: for `= UUID()`, which captures nothing,
///   deferring allocates nothing.
/// - **A stored string** a load left as bytes (see ``StoredStrings``), decoded on the first
///   read. Loaded objects may hold these; they are never in a context's indexes (a loader
///   decodes the strings of indexed attributes at once).
@usableFromInline
enum DeferredValue {
  case uuid(() -> UUID)
  case storedString(StoredString)

  /// Makes the value: a new one each time for a default, the same one for a stored string.
  func make() -> PersistentValue {
    switch self {
    case .uuid(let makeUUID): .uuid(makeUUID())
    case .storedString(let string): .string(string.value)
    }
  }

  /// The stored value, or `nil` for a default (which has none until it is made).
  var storedValue: PersistentValue? {
    if case .storedString(let string) = self { return .string(string.value) }
    return nil
  }
}

extension ManagedObject {
  /// Makes every deferred value of the object, so all its slots hold values.
  final func resolveDeferredValues() {
    for index in 0..<slotCount { resolveDeferredValue(index) }
  }

  /// Makes the deferred value of slot `index`, if it holds one.
  @inline(__always)
  final func resolveDeferredValue(_ index: Int) {
    if case .deferred(let pending) = slots[index] { slots[index] = .value(pending.make()) }
  }
}
