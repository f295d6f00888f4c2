/// The per-thread stack of slots that wrappers push while an object is initialized.
///
/// A hand-managed buffer: taking an object's frame moves its slots into the object's own
/// allocation and pops them, with no copy-on-write check and no reallocation in the steady
/// state.
struct SlotStack {
  private var base = UnsafeMutablePointer<Slot>.allocate(capacity: 16)
  private var capacity = 16
  private(set) var count = 0

  mutating func push(_ slot: consuming Slot) {
    if count == capacity {
      let grown = UnsafeMutablePointer<Slot>.allocate(capacity: capacity * 2)
      grown.moveInitialize(from: base, count: count)
      base.deallocate()
      base = grown
      capacity *= 2
    }
    (base + count).initialize(to: slot)
    count += 1
  }

  /// Frees the buffer and the slots in it; the stack must not be used afterwards.
  mutating func deallocate() {
    base.deinitialize(count: count)
    base.deallocate()
    count = 0
    capacity = 0
  }

  /// Moves the slots from `start` to the top into a new allocation the caller owns.
  mutating func popFrame(from start: Int) -> (slots: UnsafeMutablePointer<Slot>, count: Int) {
    let storage = UnsafeMutablePointer<Slot>.allocate(capacity: max(count - start, 1))
    return (storage, popFrame(from: start, into: storage))
  }

  /// Moves the slots from `start` to the top into `storage` (uninitialized room for them),
  /// returning how many there were.
  mutating func popFrame(from start: Int, into storage: UnsafeMutablePointer<Slot>) -> Int {
    let frameCount = count - start
    storage.moveInitialize(from: base + start, count: frameCount)
    count = start
    return frameCount
  }
}
