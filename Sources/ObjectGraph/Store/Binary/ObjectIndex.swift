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

  /// Creates an empty index with room for `capacity` ids.
  ///
  /// With `largestNumber`, the array is made at once to hold every id up to that number
  /// (within the density limit), so that setting each of them is one store.
  init(capacity: Int = 0, largestNumber: UInt64? = nil) {
    guard let largestNumber, largestNumber < UInt64(Self.directLimit(count: capacity)) else {
      direct.reserveCapacity(capacity + 1)
      return
    }
    direct = Array(repeating: 0, count: Int(largestNumber) + 1)
  }

  /// The largest `direct.count` for `count` ids.
  private static func directLimit(count: Int) -> Int { 2 * count + 1024 }

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
    // A new id with room in the array (an id kept in the dictionary stays there).
    if number < UInt64(direct.count), overflow.isEmpty, position < Int(Int32.max) {
      count += 1
      direct[Int(number)] = Int32(position + 1)
      return
    }
    if !overflow.isEmpty, overflow[id] != nil {
      overflow[id] = position
      return
    }
    count += 1
    let directLimit = max(direct.count, Self.directLimit(count: count))
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

  /// Sets the position of every id of `ids` at a position where `isLive` holds, and
  /// returns the first id that is held already (stopping there), if any.
  ///
  /// One pass that writes the array in place: an index of a snapshot's 100,000 ids made by
  /// ``set(_:for:)`` paid a uniqueness check and a lookup for each.
  mutating func setNew(_ ids: [ObjectID], where isLive: (Int) -> Bool) -> ObjectID? {
    var added = 0
    var repeated: ObjectID?
    // Ids beyond the array (or with the dictionary in use) go through `set`, afterwards.
    var elsewhere: [(position: Int, id: ObjectID)] = []
    let directOnly = overflow.isEmpty
    direct.withUnsafeMutableBufferPointer { direct in
      for (position, id) in ids.enumerated() where isLive(position) {
        let number = id.rawValue
        guard directOnly, number < UInt64(direct.count), position < Int(Int32.max) else {
          elsewhere.append((position, id))
          continue
        }
        guard direct[Int(number)] == 0 else {
          repeated = id
          return
        }
        direct[Int(number)] = Int32(position + 1)
        added += 1
      }
    }
    count += added
    if let repeated { return repeated }
    for (position, id) in elsewhere {
      guard self[id] == nil else { return id }
      set(position, for: id)
    }
    return nil
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
