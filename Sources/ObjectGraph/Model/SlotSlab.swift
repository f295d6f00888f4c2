/// One allocation holding the slots of many objects loaded together, one object's after
/// another's.
///
/// Loading a store's objects this way costs one allocation instead of one per object, and
/// lays the slots out in the store's order, so walking the loaded graph reads them in order.
/// Each object keeps its slab alive and destroys its own slots in its `deinit`; the slab
/// frees the memory when its last object is gone.
final class SlotSlab {
  /// The first slot; `capacity` slots follow, uninitialized until an object takes them.
  let base: UnsafeMutablePointer<Slot>
  let capacity: Int

  init(capacity: Int) {
    self.capacity = capacity
    base = UnsafeMutablePointer<Slot>.allocate(capacity: max(capacity, 1))
  }

  deinit {
    base.deallocate()
  }
}
