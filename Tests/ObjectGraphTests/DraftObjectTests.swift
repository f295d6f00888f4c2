import Foundation
import Testing

@testable import ObjectGraph

/// Objects related to each other before any is inserted (a tree built first, inserted
/// later, or thrown away) behave as related objects in a context do, and are freed when
/// the app lets go of them: no relationship keeps a cycle alive.
@Suite struct DraftObjectTests {
  @Test func aTreeNeverInsertedIsFreedWhenTheAppLetsGoOfIt() {
    weak var weakRoot: Box?
    weak var weakChild: Box?
    weak var weakGrandchild: Box?
    do {
      let root = Box(title: "root")
      let child = Box(title: "child", parent: root)
      root.children.append(Box(title: "appended"))
      let grandchild = Box(title: "grandchild")
      child.children.insert(grandchild, at: 0)
      #expect(root.children.map(\.title) == ["child", "appended"])
      #expect(grandchild.parent?.parent === root)
      (weakRoot, weakChild, weakGrandchild) = (root, child, grandchild)
    }
    #expect(weakRoot == nil)
    #expect(weakChild == nil)
    #expect(weakGrandchild == nil)
  }

  /// Dropping a deep chain frees it one level at a time, not by a recursion as deep as the
  /// chain (which would overflow a thread's stack).
  @Test func aDeepChainIsFreedWithoutARecursionPerLevel() async throws {
    let freed = LockedBox(false)
    let thread = Thread {
      weak var weakRoot: Box?
      weak var weakLeaf: Box?
      do {
        let root = Box(title: "0")
        var last = root
        for level in 1..<20_000 { last = Box(title: "\(level)", parent: last) }
        (weakRoot, weakLeaf) = (root, last)
      }
      freed.withLock { $0 = weakRoot == nil && weakLeaf == nil }
    }
    thread.stackSize = 256 * 1024  // a small stack, as a background thread's
    thread.start()
    while !thread.isFinished { try await Task.sleep(for: .milliseconds(5)) }
    #expect(freed.withLock { $0 })
  }

  @Test func everyKindOfRelationshipLetsItsDraftsGo() {
    weak var weakPerson: Person?
    weak var weakClub: Club?
    weak var weakPassport: Passport?
    weak var weakItem: Item?
    weak var weakNote: Note?
    weak var weakTag: Tag?
    do {
      let person = Person(name: "Ada")
      let club = Club(name: "Chess")
      person.clubs.append(club)  // many-to-many
      let passport = Passport()
      passport.owner = person  // one-to-one
      let item = Item(name: "Checking")
      let note = Note("rent")
      item.notes.append(note)
      let tag = Tag(name: "bank")
      item.tags = [tag]  // no inverse, to an object without relationships
      #expect(club.members.first === person && person.passport === passport)
      #expect(note.item === item && item.tags.first === tag)
      (weakPerson, weakClub, weakPassport) = (person, club, passport)
      (weakItem, weakNote, weakTag) = (item, note, tag)
    }
    #expect(weakPerson == nil && weakClub == nil && weakPassport == nil)
    #expect(weakItem == nil && weakNote == nil && weakTag == nil)
  }

  /// The app keeps one child of a tree it built: the rest of the tree stays readable
  /// through it, with the values each object had (the other instances are made again).
  @Test func aKeptChildStillReachesItsWholeTree() {
    weak var weakRoot: Box?
    let kept: Box
    do {
      let root = Box(title: "root")
      root.detail = "changed after init"
      for title in ["a", "b", "c"] { _ = Box(title: title, parent: root) }
      kept = root.children[1]
      _ = Box(title: "b1", parent: kept)
      weakRoot = root
    }
    #expect(weakRoot == nil, "the root instance is freed; its values are kept")
    let root = try! #require(kept.parent)
    #expect(root.title == "root" && root.detail == "changed after init")
    #expect(root.children.map(\.title) == ["a", "b", "c"])
    #expect(root.children[1] === kept)
    #expect(kept.children.map(\.title) == ["b1"])
    #expect(root.children.allSatisfy { $0.parent === root })
    // Changed through an instance made again, and read back after it is freed too.
    root.children[0].title = "A"
    root.children.move(fromOffsets: [2], toOffset: 0)
    #expect(kept.parent?.children.map(\.title) == ["c", "A", "b"])
  }

  @Test(arguments: StoreKind.allCases)
  func insertingAnyObjectOfATreeInsertsEveryObjectItReaches(_ kind: StoreKind) throws {
    var stack = try Stack(kind)
    do {
      let root = Box(title: "root")
      for title in ["a", "b", "c"] {
        let child = Box(title: title, parent: root)
        for number in 0..<2 { child.children.append(Box(title: "\(title)\(number)")) }
      }
      let leaf = root.children[2].children[1]
      stack.context.insert(leaf)  // the app held only the root, and inserts a leaf
      #expect(root.context === stack.context)
      #expect(root.children.allSatisfy { $0.context === stack.context })
      #expect(!root.isDraft && !leaf.isDraft)
    }
    try stack.context.save()
    stack = try stack.reopened()
    let boxes = try stack.context.fetch(FetchDescriptor<Box>())
    #expect(boxes.count == 10)
    let root = try #require(boxes.first { $0.title == "root" })
    #expect(root.children.map(\.title) == ["a", "b", "c"])
    #expect(
      root.children.map { $0.children.map(\.title) } == [
        ["a0", "a1"], ["b0", "b1"], ["c0", "c1"],
      ])
  }

  /// Relating a draft to an object in a context brings in every draft it reaches; drafts
  /// it no longer reaches stay out (and are freed).
  @Test func relatingADraftToAnInsertedObjectInsertsWhatItReaches() throws {
    let stack = try Stack()
    let saved = Box(title: "saved")
    stack.context.insert(saved)
    try stack.context.save()
    weak var weakDropped: Box?
    do {
      let branch = Box(title: "branch")
      _ = Box(title: "leaf", parent: branch)
      let dropped = Box(title: "dropped", parent: branch)
      dropped.parent = nil  // in the same graph, related to nothing now
      weakDropped = dropped
      branch.parent = saved
    }
    #expect(weakDropped == nil)
    #expect(saved.children.map(\.title) == ["branch"])
    #expect(saved.children[0].children.map(\.title) == ["leaf"])
    #expect(stack.context.insertedObjects.count == 2)
    // And from the other side: a list of drafts assigned to a saved object.
    let item = Item(name: "saved item")
    stack.context.insert(item)
    let notes = [Note("one"), Note("two")]
    let draftItem = Item(name: "draft item")
    notes[1].item = draftItem  // a draft, with the next one
    draftItem.tags = [Tag(name: "t")]
    item.notes = notes
    #expect(notes.allSatisfy { $0.context === stack.context && $0.item === item })
    #expect(stack.context.insertedObjects.count == 5, "branch, leaf, item and its notes")
    #expect(draftItem.context == nil && draftItem.notes.isEmpty)
    #expect(draftItem.tags.map(\.name) == ["t"] && draftItem.tags[0].context == nil)
    try stack.context.save()
  }

  /// An object inserted from a tree, deleted and saved, then related again to a draft of
  /// the tree it came from, is a draft again: freed with it, and reading as it should.
  @Test func anObjectBackFromAContextIsADraftAgain() throws {
    let stack = try Stack()
    weak var weakLeft: Box?
    weak var weakStayed: Box?
    do {
      let root = Box(title: "root")
      let stayed = Box(title: "stayed", parent: root)
      let left = Box(title: "left", parent: root)
      stayed.parent = nil  // in the graph, related to nothing
      stack.context.insert(root)
      #expect(left.context === stack.context && stayed.context == nil)
      stack.context.delete(left)
      try stack.context.save()
      #expect(left.context == nil)
      left.parent = stayed
      #expect(stayed.children.map(\.title) == ["left"] && left.isDraft)
      (weakLeft, weakStayed) = (left, stayed)
    }
    #expect(weakLeft == nil && weakStayed == nil)
  }

  /// A draft loaded from a store (its slots in its load's memory), deleted there and saved,
  /// keeps its values when freed and made again: its slots are copied, its stored strings
  /// decoded, since that memory goes with it.
  @Test(arguments: StoreKind.allCases)
  func aDraftOnceLoadedKeepsItsValuesWhenMadeAgain(_ kind: StoreKind) throws {
    var stack = try Stack(kind)
    let title = "A loaded box with a title longer than a small string"
    stack.context.insert(Box(title: title))
    try stack.context.save()
    stack = try stack.reopened()
    let child = Box(title: "child")
    weak var weakLoaded: Box?
    do {
      let loaded = try #require(try stack.context.fetch(FetchDescriptor<Box>()).first)
      #expect(!loaded.ownsSlots)
      stack.context.delete(loaded)
      try stack.context.save()
      child.parent = loaded
      #expect(loaded.isDraft && !loaded.ownsSlots)
      weakLoaded = loaded
    }
    #expect(weakLoaded == nil, "the child does not hold its parent")
    let remade = try #require(child.parent)
    #expect(remade.title == title)
    #expect(remade.children.first === child)
  }

  /// Two trees built apart are joined when an object of one is related to one of the other.
  @Test func twoDraftTreesJoinWhenRelated() throws {
    let first = Box(title: "first")
    let second = Box(title: "second")
    for number in 0..<3 {
      _ = Box(title: "f\(number)", parent: first)
      _ = Box(title: "s\(number)", parent: second)
    }
    second.children[1].parent = first.children[0]
    first.children.append(second)
    #expect(second.parent === first)
    #expect(first.children.map(\.title) == ["f0", "f1", "f2", "second"])
    #expect(first.children[0].children.map(\.title) == ["s1"])
    #expect(second.children.map(\.title) == ["s0", "s2"])
    let stack = try Stack()
    stack.context.insert(first)
    try stack.context.save()
    #expect(try stack.context.fetchCount(FetchDescriptor<Box>()) == 8)
  }

  @Test func anObserverOfADraftHearsItsInverseChange() {
    let root = Box(title: "root")
    let child = Box(title: "child", parent: root)
    #expect(observes({ _ = root.children }) { _ = Box(title: "second", parent: root) })
    #expect(observes({ _ = child.parent }) { root.children.removeFirst() })
    #expect(child.parent == nil)
  }

  /// Random edits of a never-inserted parent's children, in every form a list is edited,
  /// against an array of titles; then the parent is inserted and the list saved. The
  /// objects the lists drop are freed.
  @Test(arguments: StoreKind.allCases)
  func randomEditsOfADraftListMatchAnArray(_ kind: StoreKind) throws {
    var random = SplitMix64(seed: TestScale.seed(7))
    let wide = Box(title: "wide")
    let other = Box(title: "other")
    var made = 0
    var dropped: [WeakBox] = []
    func newBox() -> Box {
      made += 1
      return Box(title: "b\(made)")
    }
    for _ in 0..<40 { wide.children.append(newBox()) }
    var model = wide.children.map(\.title)
    for step in 0..<600 {
      let count = wide.children.count
      let position = { (extra: Int) in random.index(below: count + extra) }
      let described: String
      switch random.index(below: 12) {
      case 0:
        let box = newBox()
        wide.children.append(box)
        model.append(box.title)
        described = "append"
      case 1:
        let (box, at) = (newBox(), position(1))
        wide.children.insert(box, at: at)
        model.insert(box.title, at: at)
        described = "insert at \(at)"
      case 2 where count > 0:
        let at = position(0)
        let removed = wide.children.remove(at: at)
        dropped.append(WeakBox(removed))
        #expect(removed.title == model.remove(at: at))
        described = "remove at \(at)"
      case 3 where count > 2:
        let (from, to) = (position(0), position(1))
        wide.children.move(fromOffsets: [from], toOffset: to)
        model.insert(model.remove(at: from), at: to > from ? to - 1 : to)
        described = "move \(from) to \(to)"
      case 4 where count > 0:
        let (i, j) = (position(0), position(0))
        wide.children.swapAt(i, j)
        model.swapAt(i, j)
        described = "swap \(i) and \(j)"
      case 5 where count > 0:
        let (at, box) = (position(0), newBox())
        dropped.append(WeakBox(wide.children[at]))
        wide.children[at] = box
        model[at] = box.title
        described = "set [\(at)]"
      case 6:
        let divisor = 5 + random.index(below: 20)
        wide.children.removeAll { Int($0.title.dropFirst())! % divisor == 0 }
        model.removeAll { Int($0.dropFirst())! % divisor == 0 }
        described = "remove all where number % \(divisor) == 0"
      case 7 where count > 0:
        let child = wide.children[position(0)]
        child.parent = nil
        dropped.append(WeakBox(child))
        model.removeAll { $0 == child.title }
        described = "parent = nil"
      case 8 where count > 0:
        let child = wide.children[position(0)]
        if random.index(below: 2) == 0 {
          child.parent = other
        } else {
          other.children.append(child)
        }
        model.removeAll { $0 == child.title }
        described = "moved to other"
      case 9 where !other.children.isEmpty:
        let child = other.children[random.index(below: other.children.count)]
        child.parent = wide
        model.append(child.title)
        described = "moved from other"
      case 10:
        var list = wide.children.filter { _ in random.index(below: 10) > 0 }
        list.insert(newBox(), at: random.index(below: list.count + 1))
        wide.children = list
        model = list.map(\.title)
        described = "whole-array assignment"
      default:
        wide.children.sort { $0.title < $1.title }
        model.sort()
        described = "sort"
      }
      #expect(wide.children.map(\.title) == model, "step \(step): \(described)")
      #expect(wide.children.allSatisfy { $0.parent === wide }, "step \(step): \(described)")
      #expect(other.children.allSatisfy { $0.parent === other }, "step \(step): \(described)")
    }
    let held = Set(wide.children.map(ObjectIdentifier.init))
    #expect(dropped.allSatisfy { $0.box == nil || held.contains(ObjectIdentifier($0.box!)) })
    var stack = try Stack(kind)
    stack.context.insert(wide)
    #expect(other.context == nil, "other shares no relation with wide")
    try stack.context.save()
    stack = try stack.reopened()
    let reopened = try #require(
      try stack.context.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.title == "wide" }))
        .first)
    #expect(reopened.children.map(\.title) == model)
  }
}

extension DraftObjectTests {
  /// Random edits of a many-to-many list of a never-inserted person: both sides are kept
  /// as numbers only, so the clubs, which nothing holds, are made again at every read.
  @Test(arguments: StoreKind.allCases)
  func randomEditsOfADraftManyToManyMatchAnArray(_ kind: StoreKind) throws {
    var random = SplitMix64(seed: TestScale.seed(11))
    let person = Person(name: "Ada")
    var made = 0
    func newClub() -> Club {
      made += 1
      return Club(name: "c\(made)")
    }
    var model: [String] = []
    for step in 0..<400 {
      let count = person.clubs.count
      let position = { (extra: Int) in random.index(below: count + extra) }
      let described: String
      switch random.index(below: 9) {
      case 0:
        let club = newClub()
        person.clubs.append(club)
        model.append(club.name)
        described = "append"
      case 1:
        let (club, at) = (newClub(), position(1))
        person.clubs.insert(club, at: at)
        model.insert(club.name, at: at)
        described = "insert at \(at)"
      case 2 where count > 0:
        let at = position(0)
        #expect(person.clubs.remove(at: at).name == model.remove(at: at))
        described = "remove at \(at)"
      case 3 where count > 2:
        let (from, to) = (position(0), position(1))
        person.clubs.move(fromOffsets: [from], toOffset: to)
        model.insert(model.remove(at: from), at: to > from ? to - 1 : to)
        described = "move \(from) to \(to)"
      case 4 where count > 0:
        let (i, j) = (position(0), position(0))
        person.clubs.swapAt(i, j)
        model.swapAt(i, j)
        described = "swap \(i) and \(j)"
      case 5 where count > 0:
        let (at, club) = (position(0), newClub())
        person.clubs[at] = club
        model[at] = club.name
        described = "set [\(at)]"
      case 6 where count > 0:
        let at = position(0)
        person.clubs[at].members.removeAll()
        model.remove(at: at)
        described = "the club at \(at) lets the person go"
      case 7:
        var list = person.clubs.filter { _ in random.index(below: 8) > 0 }
        list.append(newClub())
        person.clubs = list
        model = list.map(\.name)
        described = "whole-array assignment"
      default:
        person.clubs.sort { $0.name > $1.name }
        model.sort(by: >)
        described = "sort"
      }
      #expect(person.clubs.map(\.name) == model, "step \(step): \(described)")
      #expect(
        person.clubs.allSatisfy { $0.members.count == 1 && $0.members[0] === person },
        "step \(step): \(described)")
    }
    var stack = try Stack(kind)
    stack.context.insert(person)
    try stack.context.save()
    stack = try stack.reopened()
    let reopened = try #require(try stack.context.fetch(FetchDescriptor<Person>()).first)
    #expect(reopened.clubs.map(\.name) == model)
  }
}

private struct WeakBox {
  weak var box: Box?
  init(_ box: Box) { self.box = box }
}
