/// The lengths of the longest common prefix and suffix of two lists (not overlapping in the
/// shorter), their elements compared by `isSame`: what did not change between an old list
/// and a new one. Read through buffers, at the speed of reading the arrays.
///
/// - Complexity: O(*n*) in the shorter list.
@inline(__always)
func commonEnds<Old, New>(
  _ old: [Old], _ new: [New], isSame: (Old, New) -> Bool
) -> (prefix: Int, suffix: Int) {
  old.withUnsafeBufferPointer { old in
    new.withUnsafeBufferPointer { new in
      let limit = min(old.count, new.count)
      var prefix = 0
      while prefix < limit, isSame(old[prefix], new[prefix]) { prefix += 1 }
      var suffix = 0
      while suffix < limit - prefix,
        isSame(old[old.count - 1 - suffix], new[new.count - 1 - suffix])
      {
        suffix += 1
      }
      return (prefix, suffix)
    }
  }
}
