/// The previous value of each property index in a record, for context-based encodings.
///
/// Property indexes outside `0..<limit` (only possible in a corrupt record) have no context:
/// reading gives `nil`, writing does nothing, so encoder and decoder still agree.
struct ValueContext<Value> {
  /// The largest property index that gets a context.
  static var limit: Int { 4096 }

  private var values: [Value?] = []

  /// The previous value of the property, if any.
  subscript(property: Int) -> Value? {
    get { values.indices.contains(property) ? values[property] : nil }
    set {
      guard property >= 0, property < Self.limit else { return }
      if property >= values.count {
        values.append(contentsOf: repeatElement(nil, count: property - values.count + 1))
      }
      values[property] = newValue
    }
  }
}
