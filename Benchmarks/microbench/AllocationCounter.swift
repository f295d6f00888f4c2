import Foundation

#if canImport(Glibc)
  // Counting heap allocations on Linux (glibc) with neither a C target nor LD_PRELOAD.
  //
  // This file defines `objectgraph_counting_malloc` and its siblings, which count each call
  // and forward to glibc's own entry points (`__libc_malloc`, ...). The `microbench` target's
  // linker flags alias them to `malloc`, `calloc`, `realloc`, `free`, `posix_memalign` and
  // `aligned_alloc` (`--defsym`) and export those names (`--export-dynamic-symbol`), so they
  // replace glibc's for the whole process: the Swift runtime, Foundation and ObjectGraph.
  // Without the flags nothing is replaced, and `AllocationCounter.isActive` is false.
  //
  // Bytes in use are tracked with `malloc_usable_size` (what glibc really handed out); glibc's
  // own `mallinfo2()` is not visible to Swift (its header is not in the Glibc module).
  // The counters are plain integers: exact for this single-threaded benchmark, approximate if
  // another thread allocates at the same time. The functions are public so that dead-code
  // stripping keeps them: only the linker's aliases refer to them.

  nonisolated(unsafe) private var allocationCalls = 0
  nonisolated(unsafe) private var requestedBytes = 0
  nonisolated(unsafe) private var bytesInUse = 0

  @_silgen_name("__libc_malloc")
  private func libcMalloc(_ size: Int) -> UnsafeMutableRawPointer?

  @_silgen_name("__libc_calloc")
  private func libcCalloc(_ count: Int, _ size: Int) -> UnsafeMutableRawPointer?

  @_silgen_name("__libc_realloc")
  private func libcRealloc(_ pointer: UnsafeMutableRawPointer?, _ size: Int)
    -> UnsafeMutableRawPointer?

  @_silgen_name("__libc_memalign")
  private func libcMemalign(_ alignment: Int, _ size: Int) -> UnsafeMutableRawPointer?

  @_silgen_name("__libc_free")
  private func libcFree(_ pointer: UnsafeMutableRawPointer?)

  @_silgen_name("malloc_usable_size")
  private func usableSize(_ pointer: UnsafeMutableRawPointer?) -> Int

  /// Records one allocation of `size` requested bytes that returned `pointer`.
  @inline(__always)
  private func recordAllocation(_ pointer: UnsafeMutableRawPointer?, requested size: Int) {
    allocationCalls &+= 1
    requestedBytes &+= size
    bytesInUse &+= usableSize(pointer)
  }

  @_cdecl("objectgraph_counting_malloc")
  public func countingMalloc(_ size: Int) -> UnsafeMutableRawPointer? {
    let pointer = libcMalloc(size)
    recordAllocation(pointer, requested: size)
    return pointer
  }

  @_cdecl("objectgraph_counting_calloc")
  public func countingCalloc(_ count: Int, _ size: Int) -> UnsafeMutableRawPointer? {
    let pointer = libcCalloc(count, size)
    recordAllocation(pointer, requested: count &* size)
    return pointer
  }

  @_cdecl("objectgraph_counting_realloc")
  public func countingRealloc(_ old: UnsafeMutableRawPointer?, _ size: Int)
    -> UnsafeMutableRawPointer?
  {
    bytesInUse &-= usableSize(old)
    let pointer = libcRealloc(old, size)
    recordAllocation(pointer, requested: size)
    return pointer
  }

  @_cdecl("objectgraph_counting_free")
  public func countingFree(_ pointer: UnsafeMutableRawPointer?) {
    bytesInUse &-= usableSize(pointer)
    libcFree(pointer)
  }

  @_cdecl("objectgraph_counting_posix_memalign")
  public func countingPosixMemalign(
    _ result: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ alignment: Int, _ size: Int
  ) -> Int32 {
    guard let pointer = libcMemalign(alignment, size) else { return ENOMEM }
    recordAllocation(pointer, requested: size)
    result.pointee = pointer
    return 0
  }

  @_cdecl("objectgraph_counting_aligned_alloc")
  public func countingAlignedAlloc(_ alignment: Int, _ size: Int) -> UnsafeMutableRawPointer? {
    let pointer = libcMemalign(alignment, size)
    recordAllocation(pointer, requested: size)
    return pointer
  }
#endif

/// Reads the process's heap counters, kept by the counting `malloc` family above.
enum AllocationCounter {
  /// A reading of the counters.
  struct Reading {
    /// Calls to `malloc`, `calloc`, `realloc`, `posix_memalign` and `aligned_alloc`.
    var calls: Int
    /// Bytes requested by those calls.
    var bytes: Int
    /// Bytes allocated and not yet freed (usable sizes).
    var inUse: Int
  }

  /// The counters now (all zero when allocations are not counted).
  static func read() -> Reading {
    #if canImport(Glibc)
      return Reading(calls: allocationCalls, bytes: requestedBytes, inUse: bytesInUse)
    #else
      return Reading(calls: 0, bytes: 0, inUse: 0)
    #endif
  }

  /// Whether allocations are being counted (the counting `malloc` replaced glibc's): the
  /// process has made allocations before `main` runs, so the count is positive if so.
  static var isActive: Bool { read().calls > 0 }
}
