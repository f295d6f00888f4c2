#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The UTF-8 bytes of many stored strings, one after another, that a load left undecoded.
///
/// Making a `String` costs an allocation and a UTF-8 check: for the 200,000 strings of a
/// store of 100,000 objects, a quarter of opening it, and most of them are never read (a
/// walk of a tree reads dates and children, not titles). So a load copies the strings'
/// bytes here and the objects' slots refer to them (``StoredString``); a string is made the
/// first time its attribute is read.
///
/// Unchecked sendable: only ``DeferredStrings/Builder`` writes the bytes, before anything
/// refers to them; after that they never change, and any thread may read them.
///
/// The memory comes from `malloc` so that it can grow and, once complete, shrink to fit
/// with `realloc` (a guess too large costs no copy).
@usableFromInline
final class StoredStrings: @unchecked Sendable {
  // Unchecked: written only while the builder fills it, on one thread, by methods that
  // never call out (a dynamic exclusivity check per access cost more than the copy).
  /// The bytes, every string's after the one before.
  @exclusivity(unchecked) private(set) var bytes: UnsafeMutableRawPointer
  /// The number of bytes written.
  @exclusivity(unchecked) private(set) var count = 0
  /// The number of bytes allocated.
  @exclusivity(unchecked) private(set) var capacity: Int

  /// Empty storage with room for `capacity` bytes (memory not touched yet costs nothing).
  init(capacity: Int) {
    self.capacity = max(capacity, 64)
    bytes = Self.reallocate(nil, byteCount: self.capacity)
  }

  deinit { free(bytes) }

  /// Gives back the memory allocated past the bytes written.
  func shrinkToFit() {
    guard count < capacity else { return }
    capacity = max(count, 1)
    bytes = Self.reallocate(bytes, byteCount: capacity)
  }

  private static func reallocate(_ bytes: UnsafeMutableRawPointer?, byteCount: Int)
    -> UnsafeMutableRawPointer
  {
    guard let reallocated = realloc(bytes, byteCount) else {
      fatalError("ObjectGraph: out of memory for \(byteCount) bytes of strings")
    }
    return reallocated
  }

  /// Appends the first `shared` bytes of the string at `offset` in `source`, an earlier
  /// storage, then `suffix`; returns where the new string starts.
  func append(
    sharing shared: Int, of source: StoredStrings, at offset: Int,
    then suffix: UnsafeRawBufferPointer
  ) -> Int {
    append(sharing: UnsafeRawBufferPointer(start: source.bytes + offset, count: shared), suffix)
  }

  /// Appends the first `shared` bytes of the string at `offset` here, then `suffix`;
  /// returns where the new string starts.
  func append(sharing shared: Int, at offset: Int, then suffix: UnsafeRawBufferPointer) -> Int {
    reserve(shared + suffix.count)
    // After `reserve`, which may move the bytes.
    return append(sharing: UnsafeRawBufferPointer(start: bytes + offset, count: shared), suffix)
  }

  /// Makes room for `extra` more bytes.
  private func reserve(_ extra: Int) {
    if count + extra > capacity {
      capacity = max(2 * capacity, count + extra)
      bytes = Self.reallocate(bytes, byteCount: capacity)
    }
  }

  /// Appends `prefix` (which room already made cannot move) then `suffix`.
  private func append(sharing prefix: UnsafeRawBufferPointer, _ suffix: UnsafeRawBufferPointer)
    -> Int
  {
    let start = count
    let total = prefix.count + suffix.count
    reserve(total)
    if let base = prefix.baseAddress {
      (bytes + count).copyMemory(from: base, byteCount: prefix.count)
    }
    if let base = suffix.baseAddress {
      (bytes + count + prefix.count).copyMemory(from: base, byteCount: suffix.count)
    }
    count += total
    return start
  }

  /// The string whose bytes are `count` bytes at `offset`, with any invalid UTF-8 repaired
  /// (as every string the reader decodes).
  func string(at offset: Int, count: Int) -> String {
    String(
      decoding: UnsafeBufferPointer(
        start: (bytes + offset).assumingMemoryBound(to: UInt8.self), count: count),
      as: UTF8.self)
  }
}

/// One stored string not yet decoded: where its bytes are.
///
/// It does not keep its storage alive: whoever holds it does. ``DeferredStrings`` holds its
/// storages while it hands these out, and a loaded object's deferred slots lie in its
/// ``SlotSlab``, which holds the storages of its load (``SlotSlab/keep(_:)``) while any of
/// its objects lives; a slot copied out of an object (a committed value in its
/// `ObjectChanges`) stays with that object. Retaining the storage for each of the 200,000
/// strings a load of 100,000 objects defers was two atomic operations a string.
@usableFromInline
struct StoredString: @unchecked Sendable {
  /// The storage, unretained: reading it through `_withUnsafeGuaranteedRef` retains nothing,
  /// where an `unowned(unsafe)` reference is retained and released around each read (two
  /// atomic operations per string a scan reads).
  let strings: Unmanaged<StoredStrings>
  let offset: UInt32
  let count: UInt32

  init(strings: StoredStrings, offset: UInt32, count: UInt32) {
    self.strings = Unmanaged.passUnretained(strings)
    self.offset = offset
    self.count = count
  }

  /// Calls `body` with the string's UTF-8 bytes, in place.
  func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
    try strings._withUnsafeGuaranteedRef {
      try body(UnsafeRawBufferPointer(start: $0.bytes + Int(offset), count: Int(count)))
    }
  }

  /// The string, decoded now (each call decodes it again).
  var value: String {
    strings._withUnsafeGuaranteedRef { $0.string(at: Int(offset), count: Int(count)) }
  }
}
