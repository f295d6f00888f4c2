/// Maps object ids to positions in an array, without hashing for the dense ids stores hand out.
///
/// Object numbers start at 1 and grow, so most ids are small and dense: they are looked up
/// in a plain array indexed by the number. Ids far beyond the number of objects (possible,
/// never typical) go to a dictionary, so a sparse id cannot make the array huge.
struct ObjectIndex {
  /// `position + 1` for each id number below `direct.count`; 0 when absent.
  private var direct: [Int32] = []
  /// Positions of the ids kept outside `direct`.
  private var overflow: [ObjectID: Int] = [:]
  /// The number of ids held.
  private(set) var count = 0

  /// Creates an empty index with room for ids up to about `capacity`.
  init(capacity: Int = 0) {
    direct.reserveCapacity(capacity + 1)
  }

  /// The position of an id, if held.
  @inline(__always)
  subscript(id: ObjectID) -> Int? {
    if id.rawValue < UInt64(direct.count) {
      let slot = direct[Int(id.rawValue)]
      if slot != 0 { return Int(slot) - 1 }
    }
    return overflow.isEmpty ? nil : overflow[id]
  }

  /// Records the position of an id, replacing any earlier one.
  ///
  /// - Complexity: Amortized O(1).
  mutating func set(_ position: Int, for id: ObjectID) {
    let number = id.rawValue
    if number < UInt64(direct.count), direct[Int(number)] != 0 {
      direct[Int(number)] = Int32(position + 1)
      return
    }
    if !overflow.isEmpty, overflow[id] != nil {
      overflow[id] = position
      return
    }
    count += 1
    let directLimit = max(direct.count, 2 * count + 1024)
    if number < UInt64(directLimit), position < Int(Int32.max) {
      if Int(number) >= direct.count {
        // Grow geometrically, within the density limit.
        let newCount = min(max(Int(number) + 1, 2 * direct.count), directLimit)
        direct.append(contentsOf: repeatElement(0, count: newCount - direct.count))
      }
      direct[Int(number)] = Int32(position + 1)
    } else {
      overflow[id] = position
    }
  }

  /// Forgets an id.
  ///
  /// - Complexity: O(1).
  mutating func remove(_ id: ObjectID) {
    if id.rawValue < UInt64(direct.count), direct[Int(id.rawValue)] != 0 {
      direct[Int(id.rawValue)] = 0
      count -= 1
    } else if overflow.removeValue(forKey: id) != nil {
      count -= 1
    }
  }
}
