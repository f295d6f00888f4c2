import Foundation
import Testing

@testable import ObjectGraph

/// Contexts made after the second load from the contents the container keeps
/// (``SharedContents``): the saves made since applied, never the store read again, and the
/// same objects the store holds.
@MainActor
@Suite struct SharedContentsTests {
  /// A forest edited at random (new boxes, renames, moves in and between lists, cascade
  /// deletes), saved now and then: after each save a new context, made from the shared
  /// contents, holds what the saving context holds, and a relaunch reads the same.
  @Test(arguments: StoreKind.allCases)
  func laterContextsHoldWhatTheStoreHolds(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let context = stack.context
    _ = try ObjectContext(stack.container)  // a second context's load: the contents are kept
    var random = SplitMix64(seed: TestScale.seed(11))
    var boxes: [Box] = []
    func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
    for step in 0..<TestScale.steps(160, sanitized: 40) {
      let live = boxes.filter { $0.context != nil && !$0.isDeleted }
      switch random.next() % 6 {
      case 0, 1:
        let parent = live.isEmpty || random.next() % 4 == 0 ? nil : live[pick(live.count)]
        let box = Box(title: "Box \(step)", parent: parent)
        if parent == nil { context.insert(box) }
        boxes.append(box)
      case 2 where !live.isEmpty:
        live[pick(live.count)].title = "Renamed \(step)"
      case 3 where !live.isEmpty:
        let parent = live[pick(live.count)]
        let count = parent.children.count
        if count > 1 {
          parent.children.move(
            fromOffsets: [pick(count)], toOffset: pick(count + 1))
        }
      case 4 where live.count > 1:
        let box = live[pick(live.count)]
        let parent = live[pick(live.count)]
        if parent !== box, !isAncestor(box, of: parent) { box.parent = parent }
      case 5 where !live.isEmpty:
        context.delete(live[pick(live.count)])
      default:
        break
      }
      guard random.next() % 4 == 0 else { continue }
      try context.save()
      let later = try ObjectContext(stack.container)
      #expect(try forestGraph(of: later) == forestGraph(of: context), "step \(step)")
    }
    try context.save()
    let expected = try forestGraph(of: context)
    #expect(!expected.isEmpty)
    #expect(try forestGraph(of: try ObjectContext(stack.container)) == expected)
    let relaunched = try stack.reopened()
    #expect(try forestGraph(of: relaunched.context) == expected)
  }

  /// The store is read for the main context and the next two; later contexts, however
  /// many saves came between, load from memory, until the saves outgrow the contents or the
  /// data is deleted. An app with one background context keeps nothing.
  @Test(arguments: StoreKind.allCases)
  func theStoreIsReadForTheFirstThreeContextsOnly(_ kind: StoreKind) throws {
    let directory = kind == .binary ? try TemporaryDirectory() : nil
    let base: any PersistentStore =
      directory.map { BinaryStore(url: $0.file("store.ogstore")) } ?? InMemoryStore()
    let store = RecordingStore(base: base)
    let container = try ObjectContainer(for: allModels, store: store)
    #expect(store.loadCount == 1)
    let first = try container.newContext()
    #expect(store.loadCount == 2)
    #expect(container.coordinator.hasSharedContents == false)
    _ = try container.newContext()
    #expect(store.loadCount == 3)
    #expect(container.coordinator.hasSharedContents)
    let root = Box(title: "Root")
    first.insert(root)
    for number in 0..<10 { _ = Box(title: "Child \(number)", parent: root) }
    try first.save()
    root.children.move(fromOffsets: [0], toOffset: 10)
    try first.save()
    let later = try container.newContext()
    #expect(store.loadCount == 3)
    let children = try later.fetch(
      FetchDescriptor<Box>(predicate: #Predicate { $0.title == "Root" })
    ).first?.children
    #expect(children?.titles == root.children.titles)

    // Saves of more changes than half the objects (and 1,024) drop the contents: the next
    // context asks the store, which is then kept again.
    for number in 0..<1_100 { first.insert(Box(title: "Loose \(number)")) }
    try first.save()
    #expect(container.coordinator.hasSharedContents == false)
    _ = try container.newContext()
    #expect(store.loadCount == 4)
    _ = try container.newContext()
    #expect(store.loadCount == 4)

    // (A store of a kind the container does not know is emptied by deleting what it loads.)
    try container.deleteAllData()
    let loadsBefore = store.loadCount
    let afterDeletion = try container.newContext()
    #expect(store.loadCount == loadsBefore + 1)
    #expect(try afterDeletion.fetchCount(FetchDescriptor<Box>()) == 0)
  }
}
