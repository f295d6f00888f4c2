import Foundation

/// A default attribute value that is made when it is first needed, not when the object is
/// created.
///
/// `UUID()` costs about 2.2 µs on Linux, more than everything else a new object costs, and
/// `@Attribute var id = UUID()` is usually overwritten at once (or never read before the
/// object is inserted). So a `UUID` default is kept as its closure and evaluated on the
/// first read, or when the object is inserted into a context; never if the value is set
/// first. Other defaults are evaluated when the object is created.
///
/// It keeps the wrapper's own `() -> UUID` closure: for `= UUID()`, which captures
/// nothing, deferring allocates nothing.
@usableFromInline
struct DeferredDefault {
  private let makeUUID: () -> UUID

  @usableFromInline
  init(_ makeUUID: @escaping () -> UUID) {
    self.makeUUID = makeUUID
  }

  /// Makes the value.
  func make() -> PersistentValue {
    .uuid(makeUUID())
  }
}

extension ManagedObject {
  /// Makes every deferred default of the object, so all its slots hold values.
  final func resolveDeferredDefaults() {
    for index in 0..<slotCount {
      if case .deferred(let pending) = slots[index] { slots[index] = .value(pending.make()) }
    }
  }
}
