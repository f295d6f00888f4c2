import Foundation
import Testing

@testable import ObjectGraph

/// Every way a user edits an ordered to-many relationship, at random, against a plain array
/// model: the relationship's array operations (`append`, `insert(_:at:)`, `remove(at:)`,
/// subscript assignment, `swapAt`, `removeAll(where:)`, `move(fromOffsets:toOffset:)`, a
/// mutation the relationship does not recognize, whole-array assignment), setting a child's
/// to-one, moving a child to another list, and deleting it. After each operation the list
/// must equal the model, with every inverse in step; saves, reopens and rollbacks along the
/// way must keep the order; a relationship observer's changes must turn the list it last
/// heard into the current one.
///
/// The model applies each array operation to a plain array and then the relationship's
/// rule that an object appears once, at its first position: what assigning the mutated
/// array would do. A sanitized run takes a third of the random steps.
@MainActor
@Suite struct ListOperationTests {
  @Test(arguments: StoreKind.allCases, [(1, 300, 700), (2, 10_000, 80)] as [(UInt64, Int, Int)])
  func randomEditsOfAParentsChildrenMatchAnArray(
    _ kind: StoreKind, run: (seed: UInt64, size: Int, steps: Int)
  ) throws {
    var random = SplitMix64(seed: TestScale.seed(run.seed))
    var stack = try Stack(kind)
    var wide = Box(title: "wide")
    var other = Box(title: "other")
    stack.context.insert(wide)
    stack.context.insert(other)
    var made = 0
    func newBox() -> Box {
      made += 1
      return Box(title: "b\(made)")
    }
    for _ in 0..<run.size { wide.children.append(newBox()) }
    try stack.context.save()
    var model = wide.children.map(\.title)
    var saved = model
    var heard = HeardList(wide)
    var token = stack.context.observe(wide, relationship: \.children) { [heard] change in
      heard.hear(change)
    }
    for step in 0..<TestScale.steps(run.steps, sanitized: run.steps / 3) {
      let count = wide.children.count
      let position = { (extra: Int) in random.index(below: count + extra) }
      let described: String
      switch random.index(below: 17) {
      case 0:
        let box = newBox()
        wide.children.append(box)
        model = dedupe(model + [box.title])
        described = "append new"
      case 1 where count > 0:
        let box = wide.children[position(0)]
        wide.children.append(box)
        described = "append present"
      case 2:
        let (box, at) = (newBox(), position(1))
        wide.children.insert(box, at: at)
        model.insert(box.title, at: at)
        described = "insert new at \(at)"
      case 3 where count > 0:
        let (box, at) = (wide.children[position(0)], position(1))
        wide.children.insert(box, at: at)
        model.insert(box.title, at: at)
        model = dedupe(model)
        described = "insert present at \(at)"
      case 4 where count > 0:
        let at = position(0)
        let removed = wide.children.remove(at: at)
        #expect(removed.title == model.remove(at: at))
        described = "remove at \(at)"
      case 5 where count > 1:
        let (from, to) = (position(0), position(-1))
        let box = wide.children.remove(at: from)
        wide.children.insert(box, at: to)
        model.insert(model.remove(at: from), at: to)
        described = "move \(from) to \(to) by remove and insert"
      case 6 where count > 2:
        var offsets = IndexSet([position(0)])
        if random.index(below: 2) == 0 { offsets.insert(position(0)) }
        let to = position(1)
        wide.children.move(fromOffsets: offsets, toOffset: to)
        let moving = offsets.map { model[$0] }
        for offset in offsets.reversed() { model.remove(at: offset) }
        model.insert(contentsOf: moving, at: to - offsets.count(in: 0..<to))
        described = "move offsets \(Array(offsets)) to \(to)"
      case 7 where count > 0:
        let (i, j) = (position(0), position(0))
        wide.children.swapAt(i, j)
        model.swapAt(i, j)
        described = "swap \(i) and \(j)"
      case 8 where count > 0:
        let (at, box) = (
          position(0), random.index(below: 2) == 0 ? newBox() : wide.children[position(0)]
        )
        wide.children[at] = box
        model[at] = box.title
        model = dedupe(model)
        described = "set [\(at)]"
      case 9:
        let divisor = 5 + random.index(below: 20)
        wide.children.removeAll { $0.title.hashValue % divisor == 0 }
        model.removeAll { $0.hashValue % divisor == 0 }
        described = "remove all where hash % \(divisor) == 0"
      case 10 where count > 0:
        let child = wide.children[position(0)]
        child.parent = nil
        model.removeAll { $0 == child.title }
        described = "parent = nil"
      case 11 where count > 0:
        let child = wide.children[position(0)]
        if random.index(below: 2) == 0 {
          child.parent = other
        } else {
          other.children.append(child)
        }
        model.removeAll { $0 == child.title }
        described = "moved to other"
      case 12 where !other.children.isEmpty:
        let child = other.children[random.index(below: other.children.count)]
        child.parent = wide
        model.append(child.title)
        described = "moved from other"
      case 13 where count > 0:
        let child = wide.children[position(0)]
        stack.context.delete(child)
        model.removeAll { $0 == child.title }
        described = "delete"
      case 14:
        wide.children.sort { $0.title.count < $1.title.count }
        model = model.enumerated().sorted {
          ($0.element.count, $0.offset) < ($1.element.count, $1.offset)
        }.map(\.element)
        described = "sort (not recognized: compared whole)"
      case 15:
        var list = wide.children.filter { _ in random.index(below: 10) > 0 }
        list.insert(newBox(), at: random.index(below: list.count + 1))
        if let first = list.first { list.append(first) }
        wide.children = list
        model = dedupe(list.map(\.title))
        described = "whole-array assignment"
      default:
        if random.index(below: 2) == 0 {
          try stack.context.save()
          saved = model
          described = "save"
        } else {
          stack.context.rollback()
          model = saved
          described = "rollback"
        }
      }
      #expect(wide.children.map(\.title) == model, "step \(step): \(described)")
      for child in wide.children where child.parent !== wide {
        Issue.record("step \(step): \(child.title)'s parent is not wide after \(described)")
      }
      for child in other.children where child.parent !== other {
        Issue.record("step \(step): \(child.title)'s parent is not other after \(described)")
      }
      stack.context.processPendingChanges()
      #expect(
        heard.titles == wide.children.map(\.title), "step \(step): the observer after \(described)")
      if step % 150 == 149 {
        try stack.context.save()
        saved = model
        stack = try stack.reopened()
        let boxes = try stack.context.fetch(FetchDescriptor<Box>())
        wide = try #require(boxes.first { $0.title == "wide" })
        other = try #require(boxes.first { $0.title == "other" })
        #expect(wide.children.map(\.title) == model, "step \(step): reopened")
        heard = HeardList(wide)
        token = stack.context.observe(wide, relationship: \.children) { [heard] change in
          heard.hear(change)
        }
      }
    }
    try stack.context.save()
    let reopened = try stack.reopened()
    let boxes = try reopened.context.fetch(FetchDescriptor<Box>())
    #expect(try #require(boxes.first { $0.title == "wide" }).children.map(\.title) == model)
    withExtendedLifetime(token) {}
  }

  /// The same array operations on a to-many relationship without an inverse (whose
  /// membership is found by a search, not by the object's to-one).
  @Test(arguments: StoreKind.allCases)
  func randomEditsOfAListWithoutAnInverseMatchAnArray(_ kind: StoreKind) throws {
    var random = SplitMix64(seed: TestScale.seed(9))
    var stack = try Stack(kind)
    var item = Item(name: "item")
    stack.context.insert(item)
    var tags = (0..<60).map { Tag(name: "t\($0)") }
    for tag in tags { stack.context.insert(tag) }
    var model: [String] = []
    for step in 0..<400 {
      let count = item.tags.count
      let tag = tags[random.index(below: tags.count)]
      switch random.index(below: 6) {
      case 0:
        item.tags.append(tag)
        model = dedupe(model + [tag.name])
      case 1:
        let at = random.index(below: count + 1)
        item.tags.insert(tag, at: at)
        model.insert(tag.name, at: at)
        model = dedupe(model)
      case 2 where count > 0:
        let at = random.index(below: count)
        item.tags.remove(at: at)
        model.remove(at: at)
      case 3 where count > 0:
        let at = random.index(below: count)
        item.tags[at] = tag
        model[at] = tag.name
        model = dedupe(model)
      case 4 where count > 1:
        let (i, j) = (random.index(below: count), random.index(below: count))
        item.tags.swapAt(i, j)
        model.swapAt(i, j)
      default:
        try stack.context.save()
      }
      #expect(item.tags.map(\.name) == model, "step \(step)")
      if step % 100 == 99 {
        try stack.context.save()
        stack = try stack.reopened()
        item = try #require(try stack.context.fetch(FetchDescriptor<Item>()).first)
        tags = try stack.context.fetch(FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.name)]))
        #expect(item.tags.map(\.name) == model, "step \(step): reopened")
      }
    }
  }

  /// Between two deliveries with one edit (or one `swapAt`), an observer hears the edit's
  /// own change (found without comparing the lists): exactly what comparing the lists finds,
  /// for every kind of edit, moves by one place and to the same place included, and swaps of
  /// neighbours, of objects one apart and of objects further apart, in a list longer than
  /// the debug build's own check covers.
  @Test func oneEditBetweenDeliveriesIsHeardAsComparingTheListsFindsIt() throws {
    var random = SplitMix64(seed: TestScale.seed(4))
    let stack = try Stack(.memory)
    let parent = Box(title: "parent")
    stack.context.insert(parent)
    for number in 0..<2_000 { parent.children.append(Box(title: "c\(number)")) }
    try stack.context.save()
    var heard: [ListChange] = []
    let token = stack.context.observe(parent, relationship: \.children) { heard.append($0) }
    for step in 0..<360 {
      let before = parent.children
      let count = before.count
      let from = random.index(below: count)
      let described: String
      switch step % 6 {
      case 5:
        let other = min(count - 1, from + [0, 1, 2, 3, 700][step % 5])
        parent.children.swapAt(from, other)
        described = "swap \(from) and \(other)"
      case 0:
        parent.children.insert(Box(title: "new \(step)"), at: random.index(below: count + 1))
        described = "insert"
      case 1:
        parent.children.remove(at: from)
        described = "remove"
      case 2:
        let to = min(count, max(0, from + [-1, 1, 2, 0][step % 4]))
        parent.children.move(fromOffsets: [from], toOffset: to)
        described = "move \(from) to offset \(to)"
      case 3:
        parent.children[from].title = "renamed \(step)"
        let to = random.index(below: count + 1)
        parent.children.move(fromOffsets: [from], toOffset: to)
        described = "rename and move \(from) to offset \(to)"
      default:
        let to = random.index(below: count + 1)
        parent.children.move(fromOffsets: [from], toOffset: to)
        described = "move \(from) to offset \(to)"
      }
      heard = []
      stack.context.processPendingChanges()
      var old = before.map(ObjectIdentifier.init)
      let updated = IndexSet(
        parent.children.indices.filter { parent.children[$0].title.hasPrefix("renamed \(step)") })
      let expected = ListChange.between(&old, parent.children, updated: updated)
      #expect(heard == (expected.isEmpty ? [] : [expected]), "step \(step): \(described)")
    }
    withExtendedLifetime(token) {}
  }

  /// A relationship observer hears which children changed their own properties, found
  /// from the delivery's updated objects (of every entity) rather than by a scan of the
  /// list, and where the list changed around them.
  @Test(arguments: StoreKind.allCases)
  func anObserverHearsUpdatedChildrenAmongOtherChanges(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let parent = Box(title: "parent")
    stack.context.insert(parent)
    for number in 0..<50 { parent.children.append(Box(title: "c\(number)")) }
    let item = Item(name: "unrelated")
    stack.context.insert(item)
    try stack.context.save()
    var heard: [ListChange] = []
    let token = stack.context.observe(parent, relationship: \.children) { heard.append($0) }
    parent.children[3].title = "changed"
    parent.children[40].title = "changed too"
    item.name = "also changed"
    stack.context.processPendingChanges()
    #expect(heard == [ListChange(updated: [3, 40])])
    parent.children.remove(at: 10)
    parent.children[20].title = "after the removal"
    stack.context.processPendingChanges()
    #expect(heard.last == ListChange(removed: [10], updated: [20]))
    withExtendedLifetime(token) {}
  }

  /// A local copy of a relationship's array is a plain array: mutating it, even while the
  /// relationship itself is being mutated, leaves the relationship alone.
  @Test func aCopyOfTheListIsAPlainArray() throws {
    let stack = try Stack(.memory)
    let parent = Box(title: "parent")
    stack.context.insert(parent)
    parent.children.append(Box(title: "a"))
    var copy = parent.children
    copy.append(Box(title: "b"))
    copy.remove(at: 0)
    #expect(parent.children.map(\.title) == ["a"] && copy.map(\.title) == ["b"])
    // Inside a mutation of the relationship, another array is still its own.
    var seen: [Box] = []
    parent.children.removeAll { child in
      seen.append(child)
      var inner = parent.children
      inner.append(Box(title: "c"))
      return false
    }
    #expect(parent.children.map(\.title) == ["a"] && seen.map(\.title) == ["a"])
  }
}

/// The list a relationship observer last heard, kept by applying each change it hears to
/// the list before (new objects taken from the owner's list, as an app's view does).
@MainActor
private final class HeardList {
  private(set) var titles: [String]
  private unowned let owner: Box

  init(_ owner: Box) {
    self.owner = owner
    titles = owner.children.map(\.title)
  }

  func hear(_ change: ListChange) {
    titles = change.apply(to: titles, takingInsertionsFrom: owner.children.map(\.title))
  }
}

/// `titles` with every repeated title after its first removed.
private func dedupe(_ titles: [String]) -> [String] {
  var seen = Set<String>()
  return titles.filter { seen.insert($0).inserted }
}
