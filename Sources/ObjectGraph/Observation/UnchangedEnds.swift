/// How many objects at the start and at the end of an observed list every write since its
/// last delivery left in place: a lower bound of the common prefix and suffix of the list
/// delivered and the list now, so that the comparison starts where the writes did.
///
/// An insert, remove or move touches the list from its lowest position to its highest; the
/// objects before the lowest and after the highest stay where they were, counted from the
/// start and from the end. The bounds of several writes are the smallest of each.
struct UnchangedEnds {
  /// Objects at the start that no write moved.
  private(set) var prefix = Int.max
  /// Objects at the end that no write moved.
  private(set) var suffix = Int.max

  /// Narrows the bounds by one edit that left the list with `count` objects.
  mutating func note(_ edit: ListEditRecord, count: Int) {
    switch edit {
    case .insert(_, let position): narrow(from: position, to: position, count: count)
    case .remove(_, let position): narrow(from: position, to: position - 1, count: count)
    case .move(let from, let to): narrow(from: min(from, to), to: max(from, to), count: count)
    }
  }

  /// Notes a write of the whole list: nothing is known to stay.
  mutating func noteWholeChange() {
    prefix = 0
    suffix = 0
  }

  /// Notes that the positions `low...high` of the new list of `count` objects changed (an
  /// empty range, `high` = `low` - 1, for a remove at `low`).
  private mutating func narrow(from low: Int, to high: Int, count: Int) {
    prefix = min(prefix, low)
    suffix = min(suffix, count - 1 - high)
  }
}
