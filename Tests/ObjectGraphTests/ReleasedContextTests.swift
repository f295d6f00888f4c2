import Foundation
import Testing

@testable import ObjectGraph

/// Objects outlive the context that fetched them: an export fetches accounts on a
/// temporary context, the context goes away, and the accounts still answer their
/// transactions, in order, with their values. Nothing is kept once the app lets go.
@Suite struct ReleasedContextTests {
  /// Saves an item with three ordered notes and two tags, then fetches it in a temporary
  /// context that is released before the item is returned.
  private static func itemOutlivingItsContext(_ stack: Stack) throws -> Item {
    let item = Item(name: "Checking")
    stack.context.insert(item)
    for text in ["rent", "salary", "coffee"] { item.notes.append(Note(text)) }
    item.tags = [Tag(name: "bank"), Tag(name: "monthly")]
    try stack.context.save()
    let temporary = try ObjectContext(stack.container)
    return try #require(try temporary.fetch(FetchDescriptor<Item>()).first)
  }

  @Test(arguments: StoreKind.allCases)
  func aFetchedObjectKeepsItsRelationshipsAfterItsContextIsReleased(kind: StoreKind) throws {
    let stack = try Stack(kind)
    let item = try Self.itemOutlivingItsContext(stack)
    #expect(item.context == nil)
    #expect(item.name == "Checking")
    let notes = item.notes
    #expect(notes.map(\.text) == ["rent", "salary", "coffee"])
    #expect(notes.allSatisfy { $0.item === item })
    #expect(item.tags.map(\.name) == ["bank", "monthly"])
    // While the app holds the notes, reading again answers the same instances.
    #expect(zip(item.notes, notes).allSatisfy { $0 === $1 })
    #expect(item.notes[1].item?.notes[2] === notes[2])
  }

  /// A survivor loaded with others keeps none of their memory: its slots move out of the
  /// load's shared allocation, its stored strings decoded first (ASan would catch a read
  /// of their freed bytes).
  @Test func aSurvivorKeepsNoMemoryOfTheObjectsLoadedWithIt() throws {
    let stack = try Stack(.binary)
    let item = Item(name: "A checking account with a long name")
    stack.context.insert(item)
    for number in 0..<100 { stack.context.insert(Item(name: "Other account \(number)")) }
    try stack.context.save()
    var kept: Item?
    try {
      let temporary = try ObjectContext(stack.container)
      let fetched = try temporary.fetch(
        FetchDescriptor<Item>(predicate: #Predicate { $0.name.starts(with: "A checking") }))
      kept = fetched.first
      #expect(kept?.ownsSlots == false)
    }()
    #expect(kept?.ownsSlots == true)
    #expect(kept?.name == "A checking account with a long name")
  }

  @Test func everyObjectIsFreedWhenTheAppLetsGoOfTheSurvivors() throws {
    let stack = try Stack()
    weak var weakItem: Item?
    weak var weakNote: Note?
    weak var weakTag: Tag?
    try {
      let item = try Self.itemOutlivingItsContext(stack)
      let note = item.notes[0]
      let tag = item.tags[0]
      (weakItem, weakNote, weakTag) = (item, note, tag)
      #expect(note.text == "rent")
      #expect(tag.name == "bank")
    }()
    #expect(weakItem == nil)
    #expect(weakNote == nil)
    #expect(weakTag == nil)
  }

  @Test func aSurvivorHeldAloneKeepsNoOtherInstanceAlive() throws {
    let stack = try Stack()
    let item = try Self.itemOutlivingItsContext(stack)
    weak var weakNote: Note?
    try {
      let note = try #require(item.notes.first)
      weakNote = note
      #expect(note.item === item)
    }()
    // The note was made for the read, and freed with it: the item refers to it weakly.
    #expect(weakNote == nil)
    #expect(item.notes.first?.text == "rent")
  }

  @Test func attributeChangesAfterTheReleaseSurviveTheirInstance() throws {
    let stack = try Stack()
    let item = try Self.itemOutlivingItsContext(stack)
    item.notes[1].text = "bonus"
    #expect(item.notes.map(\.text) == ["rent", "bonus", "coffee"])
    item.name = "Savings"
    #expect(item.notes[0].item?.name == "Savings")
  }

  @Test(arguments: StoreKind.allCases)
  func aLeafOfADeepTreeWalksUpAndDownAfterTheRelease(kind: StoreKind) throws {
    let stack = try Stack(kind)
    var parent = Box(title: "0")
    stack.context.insert(parent)
    for depth in 1...20 {
      let child = Box(title: "\(depth)", parent: parent)
      _ = Box(title: "\(depth) sibling", parent: parent)
      parent = child
    }
    try stack.context.save()
    var leaf: Box?
    try {
      let temporary = try ObjectContext(stack.container)
      leaf = try temporary.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.title == "20" }))
        .first
    }()
    var titles: [String] = []
    var box = try #require(leaf)
    while let up = box.parent {
      titles.append(up.title)
      #expect(up.children.contains { $0 === box })
      box = up
    }
    #expect(titles == (0..<20).reversed().map(String.init))
    #expect(box.children.map(\.title) == ["1", "1 sibling"])
  }

  @Test func withoutSurvivorsNothingIsKept() throws {
    let stack = try Stack()
    _ = try Self.itemOutlivingItsContext(stack)
    weak var weakNote: Note?
    try {
      let temporary = try ObjectContext(stack.container)
      weakNote = try temporary.fetch(FetchDescriptor<Note>()).first
      #expect(weakNote != nil)
    }()
    #expect(weakNote == nil)
  }

  /// A model test: random forests, a random few boxes held through the release, then random
  /// walks up and down from held boxes (holding some of the boxes met, letting go of
  /// others, renaming some) agree with what the context held; and when the app lets go of
  /// everything, every box it ever held is freed.
  @Test(arguments: [1, 2, 3, 4])
  func randomWalksAfterTheReleaseAgreeWithTheSavedForest(seed: UInt64) throws {
    var random = SplitMix64(seed: TestScale.seed(seed))
    let stack = try Stack()
    var boxes: [Box] = []
    for number in 0..<200 {
      let parent =
        boxes.isEmpty || Int.random(in: 0..<8, using: &random) == 0
        ? nil : boxes.randomElement(using: &random)
      let box = Box(title: "\(number)", parent: parent)
      if parent == nil { stack.context.insert(box) }
      boxes.append(box)
    }
    try stack.context.save()
    // The forest by title: each box's parent and children, in order.
    var parentOf: [String: String] = [:]
    var childrenOf: [String: [String]] = [:]
    for box in boxes {
      parentOf[box.title] = box.parent?.title
      childrenOf[box.title] = box.children.map(\.title)
    }
    var renamed: [String: String] = [:]  // title at the release → title now
    var held: [Box] = []
    try {
      let temporary = try ObjectContext(stack.container)
      let all = try temporary.fetch(FetchDescriptor<Box>())
      held = (0..<3).map { _ in all.randomElement(using: &random)! }
    }()
    var everHeld: [() -> Box?] = []
    func original(_ box: Box) -> String {
      renamed.first { $0.value == box.title }?.key ?? box.title
    }
    for step in 0..<300 {
      let box = held.randomElement(using: &random)!
      let title = original(box)
      #expect(box.parent.map(original) == parentOf[title])
      #expect(box.children.map(original) == childrenOf[title])
      let neighbours = (box.parent.map { [$0] } ?? []) + box.children
      switch Int.random(in: 0..<4, using: &random) {
      case 0 where held.count > 1:
        held.remove(at: held.firstIndex { $0 === box }!)
      case 1:
        let renamedTitle = "renamed \(step)"
        renamed[title] = renamedTitle
        box.title = renamedTitle
      default:
        if let next = neighbours.randomElement(using: &random) {
          held.append(next)
          weak let weakNext = next
          everHeld.append { weakNext }
        }
      }
    }
    held = []
    #expect(everHeld.allSatisfy { $0() == nil })
  }
}
