/// The previous string of each property index in a record, for prefix-shared strings.
///
/// Each property keeps the UTF-8 bytes of its previous string in a buffer of its own that
/// is reused from string to string, so the writer compares a new string with the previous
/// one, and the reader copies the shared prefix, without retaining, releasing or
/// allocating a `String` (that bookkeeping cost more than the copy itself).
///
/// Like ``ValueContext``, property indexes outside `0..<ValueContext.limit` (only possible
/// in a corrupt record) have no context: their previous string is empty and remembering
/// does nothing, so encoder and decoder still agree. One context serves one record.
final class StringContext {
  private struct Buffer {
    var bytes: UnsafeMutableRawPointer?
    var count = 0
    var capacity = 0
  }

  // Unchecked: touched only by this class's methods, which never call out while they
  // access it (the runtime check cost more than the rest of `remember`).
  @exclusivity(unchecked) private var buffers: [Buffer] = []

  deinit {
    for buffer in buffers { buffer.bytes?.deallocate() }
  }

  /// The bytes of the property's previous string (empty if none), valid until the next
  /// call of ``remember(keepingPrefix:then:for:)`` for the property.
  func previous(_ property: Int) -> UnsafeRawBufferPointer {
    guard buffers.indices.contains(property) else {
      return UnsafeRawBufferPointer(start: nil, count: 0)
    }
    return UnsafeRawBufferPointer(start: buffers[property].bytes, count: buffers[property].count)
  }

  /// Makes the first `shared` bytes of the property's previous string followed by `suffix`
  /// its previous string. `shared` must not exceed the previous string's length.
  func remember(
    keepingPrefix shared: Int = 0, then suffix: UnsafeRawBufferPointer, for property: Int
  ) {
    guard property >= 0, property < ValueContext<Int>.limit else { return }
    if property >= buffers.count {
      buffers.append(contentsOf: repeatElement(Buffer(), count: property - buffers.count + 1))
    }
    precondition(shared <= buffers[property].count, "a shared prefix longer than the string")
    let count = shared + suffix.count
    if count > buffers[property].capacity {
      let capacity = max(count, 2 * buffers[property].capacity, 32)
      let bytes = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
      if let old = buffers[property].bytes {
        bytes.copyMemory(from: old, byteCount: shared)
        old.deallocate()
      }
      buffers[property].bytes = bytes
      buffers[property].capacity = capacity
    }
    if let source = suffix.baseAddress, let bytes = buffers[property].bytes {
      (bytes + shared).copyMemory(from: source, byteCount: suffix.count)
    }
    buffers[property].count = count
  }
}
