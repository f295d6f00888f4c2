/// A small map from property numbers to values: the first pair kept inline, any others in
/// an array.
///
/// An object's changes since the last save touch a property or two, so a linear search of a
/// few pairs beats hashing, an empty map allocates nothing, and neither does a map of one
/// pair: the first change of an object (the common case, one property written) costs no
/// array. Iterates in insertion order.
struct PropertyMap<Value>: Sequence {
  /// The first pair, if any.
  private var first: (key: Int, value: Value)?
  /// The pairs after the first, in insertion order; empty while `first` is nil.
  private var rest: [(key: Int, value: Value)] = []

  init() {}

  /// A map of one pair.
  init(_ property: Int, _ value: Value) {
    first = (key: property, value: value)
  }

  var isEmpty: Bool { first == nil }
  var count: Int { first == nil ? 0 : 1 + rest.count }

  /// The property numbers with a value, in insertion order.
  var keys: [Int] { map { $0.key } }

  /// The value of `property`; setting nil removes it.
  ///
  /// - Complexity: O(*k*) in the properties with a value.
  subscript(property: Int) -> Value? {
    get {
      if let first, first.key == property { return first.value }
      for pair in rest where pair.key == property { return pair.value }
      return nil
    }
    set {
      if first?.key == property {
        if let newValue {
          first!.value = newValue
        } else {
          first = rest.isEmpty ? nil : rest.removeFirst()
        }
      } else if let position = rest.firstIndex(where: { $0.key == property }) {
        if let newValue { rest[position].value = newValue } else { rest.remove(at: position) }
      } else if let newValue {
        if first == nil {
          first = (key: property, value: newValue)
        } else {
          rest.append((key: property, value: newValue))
        }
      }
    }
  }

  func makeIterator() -> Iterator {
    Iterator(first: first, rest: rest.makeIterator())
  }

  /// The pairs in insertion order: the first, then the others.
  struct Iterator: IteratorProtocol {
    fileprivate var first: (key: Int, value: Value)?
    fileprivate var rest: IndexingIterator<[(key: Int, value: Value)]>

    mutating func next() -> (key: Int, value: Value)? {
      if let pair = first {
        first = nil
        return pair
      }
      return rest.next()
    }
  }
}
