/// One allocation holding the slots of many objects, one object's after another's: the
/// objects loaded together, or the objects created one after another on a thread.
///
/// Loading a store's objects this way costs no allocation per object, and lays the slots
/// out in the store's order, so walking the loaded graph reads them in order. The memory is
/// the one the store decoded the objects' values into (see ``PackedValues``): each object's
/// run of values becomes its slots in place, a `Slot` taking what a `PersistentValue` takes
/// (``fitsInPlace``). Runs of objects removed before the load stay there as values that
/// need no destruction. Objects the app creates take their slots from a slab of
/// ``creationCapacity`` slots that their thread carves one object's run at a time
/// (``carve(_:)``): a pointer bump instead of a `malloc` and a `free` for each object (about
/// 240 and 150 instructions for a box's six slots). Each object keeps its slab alive and
/// destroys its own slots in its `deinit`; the slab frees the memory when its last object
/// is gone, and keeps the storage of the stored strings its slots defer until then.
final class SlotSlab {
  /// The memory, which this slab frees; nil for a share of another slab.
  private let memory: UnsafeMutableRawPointer?
  /// The slab this one is a share of (see ``share()``).
  private let whole: SlotSlab?
  /// The storages of the stored strings the slots defer (see ``StoredString``).
  private var strings: [StoredStrings] = []
  /// For a slab objects are created from: where the next object's slots go, and how many
  /// slots are left after it.
  private var nextSlots: UnsafeMutablePointer<Slot>?
  private var room = 0

  /// The slots of a slab that created objects' slots are carved from: 1,024 (24 KB, the
  /// slots of about 170 objects of six properties). An object the app keeps keeps its
  /// slab, so at most that much stays for one object kept out of all those created with it.
  static let creationCapacity = 1024

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

  /// A slab of room for `capacity` slots, which ``carve(_:)`` hands out in runs.
  init(roomFor capacity: Int) {
    precondition(capacity > 0, "ObjectGraph: a slab of no slots")
    let slots = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
    memory = UnsafeMutableRawPointer(slots)
    whole = nil
    nextSlots = slots
    room = capacity
  }

  /// Room for `count` slots of one object, uninitialized, after the runs carved before it;
  /// nil when the slab has less room left. The object initializes them, keeps the slab and
  /// destroys them in its `deinit`.
  ///
  /// - Complexity: O(1).
  func carve(_ count: Int) -> UnsafeMutablePointer<Slot>? {
    assert(count > 0, "ObjectGraph: carving no slots")
    guard count <= room, let slots = nextSlots else { return nil }
    nextSlots = slots + count
    room -= count
    return slots
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
