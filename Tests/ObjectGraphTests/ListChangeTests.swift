import Foundation
import Testing

@testable import ObjectGraph

/// `ListChange.between` of two lists of identities: applied to the old list it gives the new
/// one, its removals and insertions are exactly the lists' differences, its moves are the
/// fewest (the objects that stayed less a longest increasing run of their old positions,
/// found here by the quadratic method), and it reports what the plain method (a set of the
/// new identities, a set of the run's positions, a search at every step) reports, move for
/// move.
@Suite struct ListChangeTests {
  @Test func theChangeBetweenTwoListsIsExactAndHasTheFewestMoves() {
    var random = SplitMix64(seed: TestScale.seed(21))
    let pool = (0..<40).map { _ in ManagedObject() }
    let ids = pool.map(ObjectIdentifier.init)
    for trial in 0..<3_000 {
      let oldCount = Int(random.next() % 12)
      let newCount = Int(random.next() % 12)
      let old = Array(ids.shuffled(using: &random).prefix(oldCount))
      // The new list: some of the old objects in a new order (often mostly the old order),
      // and some others.
      var new = old.filter { _ in random.next() % 4 != 0 }
      if random.next() % 2 == 0 {
        new.shuffle(using: &random)
      } else if new.count > 1 {
        new.swapAt(Int(random.next() % UInt64(new.count)), Int(random.next() % UInt64(new.count)))
      }
      for id in ids.shuffled(using: &random) where new.count < newCount && !old.contains(id) {
        new.insert(id, at: Int(random.next() % UInt64(new.count + 1)))
      }
      let updated = Set(new.filter { _ in random.next() % 3 == 0 })
      let change = ListChange.between(old, new, updated: updated)

      #expect(
        change.apply(to: old, takingInsertionsFrom: new) == new, "trial \(trial): applies")
      #expect(change.removed == IndexSet(old.indices.filter { !new.contains(old[$0]) }))
      #expect(change.inserted == IndexSet(new.indices.filter { !old.contains(new[$0]) }))
      let stayed = new.compactMap { old.firstIndex(of: $0) }
      #expect(change.moved.count == stayed.count - longestRunLength(stayed), "trial \(trial)")
      #expect(
        change.updated
          == IndexSet(new.indices.filter { updated.contains(new[$0]) && old.contains(new[$0]) }))
      #expect(change == plainChange(old, new, updated: updated), "trial \(trial): as before")
    }
  }

  /// The length of a longest strictly increasing subsequence, by the quadratic method.
  private func longestRunLength(_ values: [Int]) -> Int {
    var lengths = [Int](repeating: 1, count: values.count)
    for i in values.indices {
      for j in 0..<i where values[j] < values[i] { lengths[i] = max(lengths[i], lengths[j] + 1) }
    }
    return lengths.max() ?? 0
  }

  /// The change by the plain method: the patience run searched at every step, its
  /// positions in a set, the new identities in a set.
  private func plainChange(
    _ old: [ObjectIdentifier], _ new: [ObjectIdentifier], updated: Set<ObjectIdentifier>
  ) -> ListChange {
    var oldPositions: [ObjectIdentifier: Int] = [:]
    for (index, id) in old.enumerated() { oldPositions[id] = index }
    var change = ListChange()
    let newIDs = Set(new)
    var stayed: [(newIndex: Int, oldIndex: Int)] = []
    for (index, id) in new.enumerated() {
      if let oldIndex = oldPositions[id] {
        stayed.append((index, oldIndex))
        if updated.contains(id) { change.updated.insert(index) }
      } else {
        change.inserted.insert(index)
      }
    }
    for (index, id) in old.enumerated() where !newIDs.contains(id) { change.removed.insert(index) }
    let values = stayed.map(\.oldIndex)
    var tails: [Int] = []
    var previous = [Int](repeating: -1, count: values.count)
    for (position, value) in values.enumerated() {
      var low = 0
      var high = tails.count
      while low < high {
        let middle = (low + high) / 2
        if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
      }
      if low > 0 { previous[position] = tails[low - 1] }
      if low == tails.count { tails.append(position) } else { tails[low] = position }
    }
    var kept = Set<Int>()
    var position = tails.last ?? -1
    while position >= 0 {
      kept.insert(position)
      position = previous[position]
    }
    for (position, pair) in stayed.enumerated() where !kept.contains(position) {
      change.moved.append(ListChange.Move(from: pair.oldIndex, to: pair.newIndex))
    }
    return change
  }
}
