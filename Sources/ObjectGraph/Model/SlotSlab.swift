/// One allocation holding the slots of many objects loaded together, one object's after
/// another's.
///
/// Loading a store's objects this way costs no allocation per object, and lays the slots
/// out in the store's order, so walking the loaded graph reads them in order. The memory is
/// the one the store decoded the objects' values into (see ``PackedValues``): each object's
/// run of values becomes its slots in place, a `Slot` taking what a `PersistentValue` takes
/// (``fitsInPlace``). Runs of objects removed before the load stay there as values that
/// need no destruction. Each object keeps its slab alive and destroys its own slots in its
/// `deinit`; the slab frees the memory when its last object is gone, and keeps the storage
/// of the stored strings its slots defer until then.
final class SlotSlab {
  /// The memory, which this slab frees; nil for a share of another slab.
  private let memory: UnsafeMutableRawPointer?
  /// The slab this one is a share of (see ``share()``).
  private let whole: SlotSlab?
  /// The storages of the stored strings the slots defer (see ``StoredString``).
  private var strings: [StoredStrings] = []

  /// Whether a slot fits in the memory of a value, so runs of values can become slots in
  /// place. True wherever the package builds (both take 24 bytes on 64-bit platforms); a
  /// test keeps it so.
  static var fitsInPlace: Bool {
    MemoryLayout<Slot>.stride == MemoryLayout<PersistentValue>.stride
      && MemoryLayout<Slot>.alignment <= MemoryLayout<PersistentValue>.alignment
  }

  /// Adopts memory taken from decoded values (``PackedValues/takeMemory()``), which the slab
  /// frees when it goes.
  init(adopting values: UnsafeMutablePointer<PersistentValue>) {
    precondition(Self.fitsInPlace, "ObjectGraph: a slot does not fit in a value's memory")
    memory = UnsafeMutableRawPointer(values)
    whole = nil
  }

  private init(sharing whole: SlotSlab) {
    memory = nil
    self.whole = whole
  }

  /// A slab standing for this one, which it keeps: the objects loaded on one thread keep a
  /// share of their own, so that the reference count they all write (one each) is one
  /// thread's, not a cache line bounced between cores.
  func share() -> SlotSlab { SlotSlab(sharing: self) }

  /// Turns the memory of the value at `value` (in the adopted memory, moved out and now
  /// uninitialized) into room for a slot.
  @inline(__always)
  static func slot(replacing value: UnsafeMutablePointer<PersistentValue>)
    -> UnsafeMutablePointer<Slot>
  {
    UnsafeMutableRawPointer(value).bindMemory(to: Slot.self, capacity: 1)
  }

  /// The `count` slots that replaced the values at `values` (``slot(replacing:)``).
  @inline(__always)
  static func slots(of values: UnsafeMutablePointer<PersistentValue>, count: Int)
    -> UnsafeMutablePointer<Slot>
  {
    UnsafeMutableRawPointer(values).bindMemory(to: Slot.self, capacity: count)
  }

  /// Keeps the storages of the stored strings that deferred slots here refer to.
  func keep(_ strings: [StoredStrings]) {
    self.strings += strings
  }

  deinit {
    memory?.deallocate()
  }
}
