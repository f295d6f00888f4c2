/// A small map from property numbers to values, kept as an array of pairs.
///
/// An object's changes since the last save touch a property or two, so a linear search of a
/// few pairs beats hashing, and an empty map allocates nothing. Iterates in insertion order.
struct PropertyMap<Value>: Sequence {
  private var pairs: [(key: Int, value: Value)] = []

  init() {}

  var isEmpty: Bool { pairs.isEmpty }
  var count: Int { pairs.count }

  /// The property numbers with a value, in insertion order.
  var keys: [Int] { pairs.map { $0.key } }

  /// The value of `property`; setting nil removes it.
  ///
  /// - Complexity: O(*k*) in the properties with a value.
  subscript(property: Int) -> Value? {
    get {
      for pair in pairs where pair.key == property { return pair.value }
      return nil
    }
    set {
      if let position = pairs.firstIndex(where: { $0.key == property }) {
        if let newValue { pairs[position].value = newValue } else { pairs.remove(at: position) }
      } else if let newValue {
        pairs.append((key: property, value: newValue))
      }
    }
  }

  func makeIterator() -> IndexingIterator<[(key: Int, value: Value)]> {
    pairs.makeIterator()
  }
}
