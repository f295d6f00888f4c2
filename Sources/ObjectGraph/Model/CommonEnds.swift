/// The lengths of the longest common prefix and suffix of two lists (not overlapping in the
/// shorter), their elements compared by `isSame`: what did not change between an old list
/// and a new one. Read through buffers, at the speed of reading the arrays.
///
/// `known` gives lengths of a common prefix and suffix known already (capped to the lists):
/// the comparison starts after them.
///
/// - Complexity: O(*n*) in the shorter list, less what `known` covers.
@inline(__always)
func commonEnds<Old, New>(
  _ old: [Old], _ new: [New], atLeast known: (prefix: Int, suffix: Int) = (0, 0),
  isSame: (Old, New) -> Bool
) -> (prefix: Int, suffix: Int) {
  old.withUnsafeBufferPointer { old in
    new.withUnsafeBufferPointer { new in
      let limit = min(old.count, new.count)
      var prefix = min(known.prefix, limit)
      while prefix < limit, isSame(old[prefix], new[prefix]) { prefix += 1 }
      var suffix = min(known.suffix, limit - prefix)
      while suffix < limit - prefix,
        isSame(old[old.count - 1 - suffix], new[new.count - 1 - suffix])
      {
        suffix += 1
      }
      return (prefix, suffix)
    }
  }
}
