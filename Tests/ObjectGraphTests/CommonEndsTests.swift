import Testing

@testable import ObjectGraph

/// `commonEnds` compares lists of identities as memory, a block of words at a time: it must
/// find exactly the common prefix and suffix an element-by-element comparison finds, for
/// every length around the block size, every kind of edit, and every known length given.
@Suite struct CommonEndsTests {
  @Test func findsWhatComparingElementByElementFinds() {
    var random = SplitMix64(seed: TestScale.seed(11))
    let pool = (0..<2_000).map { _ in ManagedObject() }
    for count in [0, 1, 2, 63, 64, 65, 127, 128, 129, 300, 1_500] {
      let old = Array(pool.prefix(count))
      for _ in 0..<60 {
        var new = old
        switch random.next() % 5 {
        case 0:  // one object replaced
          if !new.isEmpty { new[Int(random.next() % UInt64(new.count))] = pool[1_999] }
        case 1:  // one inserted
          new.insert(pool[1_998], at: Int(random.next() % UInt64(new.count + 1)))
        case 2:  // one removed
          if !new.isEmpty { new.remove(at: Int(random.next() % UInt64(new.count))) }
        case 3:  // one moved
          if !new.isEmpty {
            let object = new.remove(at: Int(random.next() % UInt64(new.count)))
            new.insert(object, at: Int(random.next() % UInt64(new.count + 1)))
          }
        default:  // unchanged
          break
        }
        let expected = elementByElement(old, new)
        #expect(commonEnds(old, new) == expected, "\(count) objects")
        // As identities against objects, as a relationship observer compares them.
        #expect(commonEnds(old.map(ObjectIdentifier.init), new) == expected, "\(count) ids")
        // A known part of the ends is where the comparison starts.
        let known = (
          prefix: Int(random.next() % UInt64(expected.prefix + 1)),
          suffix: Int(random.next() % UInt64(expected.suffix + 1))
        )
        #expect(commonEnds(old, new, atLeast: known) == expected, "\(count), known \(known)")
      }
    }
  }

  /// Objects replaced at every pair of places of lists around the block size: each word of
  /// a block, scanning from the front and from the back, is the first that differs once.
  @Test func findsDifferencesAtEveryPlace() {
    let pool = (0..<202).map { _ in ManagedObject() }
    for count in [1, 2, 63, 64, 65, 128, 130, 200] {
      let old = Array(pool.prefix(count))
      for first in 0..<count {
        for last in first..<count {
          var new = old
          new[first] = pool[200]
          new[last] = pool[201]
          let ends = commonEnds(old, new)
          #expect(
            ends.prefix == first && ends.suffix == count - 1 - last,
            "\(count) objects, replaced at \(first) and \(last)")
        }
      }
    }
  }

  private func elementByElement(_ old: [ManagedObject], _ new: [ManagedObject]) -> (
    prefix: Int, suffix: Int
  ) {
    let limit = min(old.count, new.count)
    var prefix = 0
    while prefix < limit, old[prefix] === new[prefix] { prefix += 1 }
    var suffix = 0
    while suffix < limit - prefix, old[old.count - 1 - suffix] === new[new.count - 1 - suffix] {
      suffix += 1
    }
    return (prefix, suffix)
  }
}
