import Foundation
import ObjectGraph
import ObjectGraphTesting

/// Deterministic random small changes over a fixed set of items: title and number sets,
/// list inserts, removes and moves, and occasional delete-and-reinsert.
struct ChangeGenerator {
  private var state: UInt64 = 42
  private var children: [UInt64: [ObjectID]] = [:]
  private var counter = 0
  private let parents: [UInt64] = [1, 2, 3, 4, 5]
  private let loose: ClosedRange<UInt64> = 6...60

  mutating func initialInsert() -> Changeset {
    Changeset(
      inserted: (1...loose.upperBound).map { ConformanceSchema.item($0) }, nextObjectNumber: 1_000)
  }

  mutating func next() -> Changeset {
    counter += 1
    let parent = parents[Int(random() % UInt64(parents.count))]
    var list = children[parent, default: []]
    let edit: ListEdit
    switch random() % 6 {
    case 0, 1:
      let title = "title \(counter) of \(parent)"
      return update(parent, ConformanceSchema.title, .set(.string(title)))
    case 2:
      return update(parent, 1, .set(.int(Int64(bitPattern: random()))))
    case 3 where !list.isEmpty:
      edit = .remove(at: Int(random() % UInt64(list.count)))
    case 4 where list.count > 1:
      edit = .move(
        from: Int(random() % UInt64(list.count)), to: Int(random() % UInt64(list.count)))
    default:
      let child = ObjectID(rawValue: loose.lowerBound + random() % UInt64(loose.count))
      edit = .insert(child, at: Int(random() % UInt64(list.count + 1)))
    }
    try? list.apply([edit])
    children[parent] = list
    return update(parent, ConformanceSchema.children, .edit([edit]))
  }

  private func update(_ id: UInt64, _ property: Int, _ kind: PropertyChange.Kind) -> Changeset {
    Changeset(
      updated: [
        ObjectUpdate(
          id: ObjectID(rawValue: id), entity: ConformanceSchema.item,
          changes: [PropertyChange(property: property, kind: kind)])
      ], nextObjectNumber: 1_000)
  }

  private mutating func random() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
