import Foundation
import Testing

@testable import ObjectGraph

/// Several contexts of one container: a save in one reaches every other, whole and in
/// order, through the ordinary write path (observers, live queries and relationship diffs
/// included); a save of another context that changed what this one changed is a conflict
/// that writes nothing.
@MainActor
@Suite struct MergeTests {
  @Test(arguments: StoreKind.allCases)
  func aSaveInOneContextReachesAnotherWhenItIsNextUsed(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let saving = stack.context
    let other = try stack.container.newContext()
    let inbox = Box(title: "Inbox")
    saving.insert(inbox)
    for title in ["a", "b", "c"] { _ = Box(title: title, parent: inbox) }
    try saving.save()

    let seen = try other.fetch(FetchDescriptor<Box>(predicate: #Predicate { $0.title == "Inbox" }))
    let otherInbox = try #require(seen.first)
    #expect(otherInbox !== inbox && otherInbox.objectID == inbox.objectID)
    #expect(otherInbox.children.map(\.title) == ["a", "b", "c"])
    #expect(otherInbox.children.allSatisfy { $0.parent === otherInbox && $0.context === other })
    let otherC = otherInbox.children[2]

    inbox.children[0].title = "a2"
    inbox.children.move(fromOffsets: [1], toOffset: 0)
    saving.delete(inbox.children[2])
    inbox.children.append(Box(title: "d"))
    try saving.save()

    other.processPendingChanges()
    #expect(otherInbox.children.map(\.title) == ["b", "a2", "d"])
    #expect(otherInbox.children.allSatisfy { $0.parent === otherInbox })
    #expect(otherC.context == nil && otherC.parent == nil)
    #expect(try other.fetchCount(FetchDescriptor<Box>()) == 4)
    #expect(!other.hasChanges)
    try expectSameGraph(other, try stack.reopened().context)
  }

  @Test(arguments: StoreKind.allCases)
  func theOtherContextsObserversHearEveryMergedSave(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let saving = stack.context
    let wide = Box(title: "wide")
    saving.insert(wide)
    for number in 0..<40 { _ = Box(title: "b\(number)", parent: wide) }
    try saving.save()
    let other = try stack.container.newContext()
    let otherWide = try #require(other.object(with: wide.objectID!) as? Box)
    var heard = otherWide.children.map(\.title)
    let listToken = other.observe(otherWide, relationship: \.children) { change in
      heard = change.apply(to: heard, takingInsertionsFrom: otherWide.children.map(\.title))
    }
    var renamed: Set<String> = []
    let objectToken = other.observe(otherWide) { change in renamed.formUnion(change.changedKeys) }
    let sorted = FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)])
    let query = try other.liveQuery(sorted)
    var random = SplitMix64(seed: TestScale.seed(3))
    var made = 0
    for _ in 0..<60 {
      let count = wide.children.count
      switch random.next() % 5 {
      case 0:
        made += 1
        wide.children.insert(Box(title: "n\(made)"), at: Int(random.next() % UInt64(count + 1)))
      case 1 where count > 1:
        let child = wide.children.remove(at: Int(random.next() % UInt64(count)))
        wide.children.insert(child, at: Int(random.next() % UInt64(count)))
      case 2 where count > 0:
        saving.delete(wide.children[Int(random.next() % UInt64(count))])
      case 3 where count > 1:
        wide.children.swapAt(Int(random.next() % UInt64(count)), Int(random.next() % UInt64(count)))
      default:
        wide.title = "wide \(made)"
      }
      try saving.save()
      other.processPendingChanges()
      #expect(otherWide.children.map(\.title) == wide.children.map(\.title))
      #expect(heard == otherWide.children.map(\.title))
      let fetched = try other.fetch(sorted).map(\.title)
      #expect(query.results.map(\.title) == fetched)
    }
    #expect(renamed == ["title", "children"])
    withExtendedLifetime((listToken, objectToken)) {}
  }

  @Test func theMainContextMergesOnTheMainQueue() async throws {
    let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
    let main = container.mainContext
    var deliveries: [ObjectContextChanges] = []
    let token = main.observeChanges { deliveries.append($0) }
    let background = try container.newContext()
    background.insert(Box(title: "Imported"))
    try background.save()
    for _ in 0..<100 where deliveries.isEmpty {
      await withCheckedContinuation { continuation in
        DispatchQueue.main.async { continuation.resume() }
      }
    }
    #expect(deliveries.count == 1)
    #expect(deliveries.first?.inserted.map { ($0 as? Box)?.title } == ["Imported"])
    #expect(try main.fetch(FetchDescriptor<Box>()).map(\.title) == ["Imported"])
    #expect(container.coordinator.keptSaveCount == 0)
    _ = token
  }

  @Test func aMainContextNobodyAskedForIsMergedAsSavesHappenAndKeepsNoHistory() throws {
    let stack = try Stack(.memory)
    let inbox = Box(title: "Inbox")
    stack.context.insert(inbox)
    for number in 0..<20 {
      _ = Box(title: "\(number)", parent: inbox)
      try stack.context.save()
    }
    #expect(stack.container.coordinator.keptSaveCount == 0)
    let main = stack.container.mainContext
    #expect(try main.fetchCount(FetchDescriptor<Box>()) == 21)
    try expectSameGraph(main, stack.context)
    inbox.title = "Renamed"
    try stack.context.save()
    #expect(stack.container.coordinator.keptSaveCount == 1)  // the main context is awake now
    main.processPendingChanges()
    #expect(stack.container.coordinator.keptSaveCount == 0)
    #expect((main.object(with: inbox.objectID!) as? Box)?.title == "Renamed")
  }

  @Test(arguments: StoreKind.allCases)
  func aSaveOverAPropertyChangedElsewhereIsAConflictThatWritesNothing(_ kind: StoreKind) throws {
    let (stack, first, second) = try twoContexts(kind)
    let (box, theirs) = try savedBox(titled: "start", in: first, seenBy: second)
    theirs.title = "second's"
    box.title = "first's"
    try first.save()

    let error = #expect(throws: ObjectGraphError.self) { try second.save() }
    #expect(error?.code == .conflict)
    #expect(error?.entity == "Box" && error?.property == "title")
    #expect(error?.objectID == box.objectID)
    #expect(error?.message.contains("stored \"first's\"") == true)
    #expect(error?.message.contains("ours \"second's\"") == true)
    #expect(theirs.title == "second's" && second.hasChanges)
    #expect(
      try stack.container.newContext().fetch(FetchDescriptor<Box>()).map(\.title) == ["first's"])

    second.rollback()
    #expect(theirs.title == "first's" && !second.hasChanges)
    theirs.title = "second's, after"
    try second.save()
    first.processPendingChanges()
    #expect(box.title == "second's, after")
  }

  @Test(arguments: StoreKind.allCases)
  func changesOfOtherPropertiesAndObjectsMergeAroundUnsavedOnes(_ kind: StoreKind) throws {
    let (stack, first, second) = try twoContexts(kind)
    let (box, theirs) = try savedBox(titled: "box", in: first, seenBy: second)
    let other = Box(title: "other")
    first.insert(other)
    theirs.detail = "second's detail"
    box.title = "first's title"
    other.parent = box
    try first.save()
    try second.save()
    #expect(theirs.title == "first's title" && theirs.detail == "second's detail")
    #expect(theirs.children.map(\.title) == ["other"])
    try expectSameGraph(try stack.reopened().context, second)
  }

  @Test(arguments: StoreKind.allCases)
  func anObjectDeletedOnOneSideAndChangedOnTheOtherIsAConflict(_ kind: StoreKind) throws {
    let (_, first, second) = try twoContexts(kind)
    let (box, theirs) = try savedBox(titled: "box", in: first, seenBy: second)
    theirs.title = "changed"
    first.delete(box)
    try first.save()
    let error = #expect(throws: ObjectGraphError.self) { try second.save() }
    #expect(error?.code == .conflict && error?.property == nil)
    #expect(error?.message.contains("stored deleted, ours changed") == true)
    second.rollback()
    #expect(theirs.context == nil)
    #expect(try second.fetchCount(FetchDescriptor<Box>()) == 0)
  }

  /// Two contexts edit one forest at random, each saving now and then, under each merge
  /// policy; a save that conflicts is rolled back. After every save both contexts, once
  /// merged, hold what a fresh context reads from the store, with every inverse in step.
  @Test(
    arguments: StoreKind.allCases,
    [
      MergePolicy.error, .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .rollback,
      .overwrite,
    ])
  func randomEditsInTwoContextsMergeToTheStoredGraph(_ kind: StoreKind, _ policy: MergePolicy)
    throws
  {
    let stack = try Stack(kind)
    let contexts = [stack.context, try stack.container.newContext()]
    for context in contexts { context.mergePolicy = policy }
    var random = SplitMix64(seed: TestScale.seed(17))
    var made = 0
    var conflicts = 0
    for _ in 0..<300 {
      let context = contexts[Int(random.next() % 2)]
      let boxes = try context.fetch(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)]))
      let pick = { boxes.isEmpty ? nil : boxes[Int(random.next() % UInt64(boxes.count))] }
      switch random.next() % 6 {
      case 0, 1:
        made += 1
        let box = Box(title: "b\(made)")
        context.insert(box)
        box.parent = pick()
      case 2 where !boxes.isEmpty:
        // One of a few boxes, so that both contexts often edit the same one.
        let box = boxes[Int(random.next() % UInt64(min(boxes.count, 4)))]
        if random.next() % 2 == 0 { box.title += "'" } else { box.detail += "'" }
      case 3:
        if let box = pick(), let parent = pick(), parent !== box, !isAncestor(box, of: parent) {
          box.parent = parent
        }
      case 4:
        if let parent = pick(), parent.children.count > 1 {
          let count = parent.children.count
          parent.children.move(
            fromOffsets: [Int(random.next() % UInt64(count))],
            toOffset: Int(random.next() % UInt64(count + 1)))
        }
      default:
        if let box = pick() { context.delete(box) }
      }
      guard random.next() % 3 == 0 else { continue }
      do {
        try context.save()
      } catch let error as ObjectGraphError where error.code == .conflict {
        conflicts += 1
        context.rollback()
      }
      let stored = try ObjectContext(stack.container)
      for context in contexts where !context.hasChanges {
        context.processPendingChanges()
        try expectSameGraph(context, stored)
      }
    }
    if policy == .error { #expect(conflicts > 0) }
  }

  /// A stack and two contexts of its container: the stack's own, and a new one.
  private func twoContexts(_ kind: StoreKind) throws -> (Stack, ObjectContext, ObjectContext) {
    let stack = try Stack(kind)
    return (stack, stack.context, try stack.container.newContext())
  }

  /// A box saved in `first`, and `second`'s instance of it.
  private func savedBox(titled title: String, in first: ObjectContext, seenBy second: ObjectContext)
    throws -> (Box, Box)
  {
    let box = Box(title: title)
    first.insert(box)
    try first.save()
    return (box, try #require(second.object(with: box.objectID!) as? Box))
  }

  /// Both contexts hold the same boxes (by id) with the same titles, parents and children
  /// in order, every inverse in step.
  private func expectSameGraph(_ one: ObjectContext, _ other: ObjectContext) throws {
    #expect(try forestGraph(of: one) == forestGraph(of: other))
  }
}

/// Contexts on different threads saving at once: each save is based on every save before
/// it (a context that lost the race merges and saves again), and both end with everything.
@Suite struct ConcurrentMergeTests {
  @Test func contextsOnTwoThreadsSavingAtOnceBothEndWithEverySave() async throws {
    let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
    let saves = 60
    async let background: Int = Task.detached {
      let context = try container.newContext()
      let inbox = Box(title: "background inbox")
      context.insert(inbox)
      for number in 0..<saves {
        _ = Box(title: "background \(number)", parent: inbox)
        try context.save()
      }
      return try context.fetchCount(FetchDescriptor<Box>())
    }.value
    let foreground = try await Task.detached {
      let context = try container.newContext()
      for number in 0..<saves {
        context.insert(Box(title: "foreground \(number)"))
        try context.save()
      }
      return try context.fetchCount(FetchDescriptor<Box>())
    }.value
    let backgroundCount = try await background
    let total = 2 * saves + 1
    // Each saw its own saves and every save the other made before its last.
    #expect(backgroundCount > saves && backgroundCount <= total)
    #expect(foreground >= saves && foreground <= total)
    let context = try container.newContext()
    #expect(try context.fetchCount(FetchDescriptor<Box>()) == total)
    let mainCount = try await MainActor.run {
      try container.mainContext.fetchCount(FetchDescriptor<Box>())
    }
    #expect(mainCount == total)
  }
}

/// An importer written as a SwiftData `@ModelActor` is, without the macro.
private actor Importer: ModelActor {
  nonisolated let modelContainer: ObjectContainer
  nonisolated let modelExecutor: any ModelExecutor

  init(modelContainer: ObjectContainer) throws {
    self.modelContainer = modelContainer
    modelExecutor = DefaultSerialModelExecutor(modelContext: try modelContainer.newContext())
  }

  func importBoxes(titled titles: [String], into parentID: PersistentIdentifier? = nil) throws
    -> [PersistentIdentifier]
  {
    let parent = parentID.flatMap { self[$0, as: Box.self] }
    let boxes = titles.map { Box(title: $0, parent: parent) }
    for box in boxes { modelContext.insert(box) }
    try modelContext.save()
    return boxes.compactMap(\.objectID)
  }

  func titles() throws -> [String] {
    try modelContext.fetch(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)])).map(\.title)
  }
}

@Suite struct ModelActorTests {
  @Test func anImporterActorsSavesReachTheMainContextAndItsReachTheActor() async throws {
    let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
    let importer = try Importer(modelContainer: container)
    let inboxID = try await MainActor.run {
      let inbox = Box(title: "Inbox")
      container.mainContext.insert(inbox)
      try container.mainContext.save()
      return inbox.persistentModelID!
    }
    // Calls from many tasks at once run one at a time on the actor's executor.
    try await withThrowingTaskGroup(of: Void.self) { group in
      for number in 0..<20 {
        group.addTask { _ = try await importer.importBoxes(titled: ["t\(number)"], into: inboxID) }
      }
      try await group.waitForAll()
    }
    let children = await MainActor.run {
      container.mainContext.processPendingChanges()
      let inbox = container.mainContext.model(for: inboxID) as? Box
      return inbox?.children.map(\.title).sorted() ?? []
    }
    #expect(children == (0..<20).map { "t\($0)" }.sorted())
    try await MainActor.run {
      container.mainContext.insert(Box(title: "from main"))
      try container.mainContext.save()
    }
    #expect(try await importer.titles().count == 22)
    #expect(try await importer.titles().contains("from main"))
  }
}
