import Foundation
import Testing

@testable import ObjectGraph

/// Context-wide deliveries: coalesced, complete, once, by closure, stream and notification.
@Suite struct NotificationTests {
  final class Recorder {
    var deliveries: [ObjectContextChanges] = []
    var token: ObservationToken?
    init(_ context: ObjectContext) {
      token = context.observeChanges { [unowned self] in self.deliveries.append($0) }
    }
  }

  private func savedInbox() throws -> (Stack, Box) {
    let stack = try Stack()
    let inbox = Box(title: "Inbox")
    stack.context.insert(inbox)
    for title in ["A", "B", "C"] { _ = Box(title: title, parent: inbox) }
    try stack.context.save()
    return (stack, inbox)
  }

  /// A delivery of only new objects to no observer visits none of them (their flags and
  /// places in the batch are left as they were): the next batch must not be misled.
  @Test func aDeliveryThatVisitedNoObjectLeavesThemReadyForTheNext() throws {
    let stack = try Stack()
    let boxes = (0..<50).map { Box(title: "\($0)") }
    for box in boxes { stack.context.insert(box) }
    try stack.context.save()
    var seen: [ObjectContextChanges] = []
    let token = stack.context.observeChanges { seen.append($0) }
    defer { token.cancel() }
    boxes[3].title = "changed"
    stack.context.delete(boxes[7])
    let late = Box(title: "late")
    stack.context.insert(late)
    boxes[0].title = "first"
    stack.context.processPendingChanges()
    #expect(seen.count == 1)
    #expect(seen.first?.inserted == [late])
    #expect(seen.first?.updated == [boxes[0], boxes[3]])
    #expect(seen.first?.deleted == [boxes[7]])
    #expect(seen.first?.changedKeys(of: boxes[3]) == ["title"])
    // And a first-insertion batch delivered to an observer marks its objects as usual.
    let more = (0..<5).map { Box(title: "more \($0)") }
    for box in more { stack.context.insert(box) }
    stack.context.processPendingChanges()
    #expect(seen.count == 2)
    #expect(seen.last?.inserted == more)
  }

  @Test func anAttributeChangeIsDeliveredOnceWithItsKey() throws {
    let (stack, inbox) = try savedInbox()
    let recorder = Recorder(stack.context)
    inbox.title = "In"
    inbox.title = "Inbox 2"
    stack.context.processPendingChanges()
    stack.context.processPendingChanges()
    #expect(recorder.deliveries.count == 1)
    #expect(recorder.deliveries[0].updated == [inbox])
    #expect(recorder.deliveries[0].changedKeys(of: inbox) == ["title"])
    #expect(recorder.deliveries[0].summary.updated == [inbox.objectID!: ["title"]])
  }

  @Test func inverseSideEffectsAreDeliveredForBothSides() throws {
    let (stack, inbox) = try savedInbox()
    let archive = Box(title: "Archive")
    stack.context.insert(archive)
    try stack.context.save()
    let recorder = Recorder(stack.context)
    let child = inbox.children[0]
    child.parent = archive
    stack.context.processPendingChanges()
    let delivery = try #require(recorder.deliveries.first)
    #expect(Set(delivery.updated) == [inbox, archive, child])
    #expect(delivery.changedKeys(of: inbox) == ["children"])
    #expect(delivery.changedKeys(of: child) == ["parent"])
  }

  @Test func aCascadeIsDeliveredAsDeletionsAndTheParentsUpdate() throws {
    let (stack, inbox) = try savedInbox()
    let root = Box(title: "Root")
    stack.context.insert(root)
    inbox.parent = root
    try stack.context.save()
    let recorder = Recorder(stack.context)
    stack.context.delete(inbox)
    stack.context.processPendingChanges()
    let delivery = try #require(recorder.deliveries.first)
    #expect(delivery.deleted.count == 4)
    #expect(delivery.updated == [root])
    #expect(delivery.inserted.isEmpty)
  }

  @Test func tenThousandMutationsArriveAsOneDelivery() throws {
    let (stack, inbox) = try savedInbox()
    let recorder = Recorder(stack.context)
    var made: [Box] = []
    for index in 0..<10_000 {
      switch index % 4 {
      case 0: made.append(Box(title: "\(index)", parent: inbox))
      case 1: inbox.children[index % 3].detail = "\(index)"
      case 2: inbox.$children.move(from: 0, to: 1)
      default: made.last?.title = "again \(index)"
      }
    }
    let doomed = made.removeLast()
    stack.context.delete(doomed)  // inserted then deleted: in neither list
    stack.context.processPendingChanges()
    #expect(recorder.deliveries.count == 1)
    let delivery = recorder.deliveries[0]
    #expect(delivery.inserted.count == made.count)
    #expect(!delivery.inserted.contains(doomed) && !delivery.deleted.contains(doomed))
    #expect(Set(delivery.updated) == Set([inbox] + inbox.children.filter { !made.contains($0) }))
    #expect(delivery.changedKeys(of: inbox) == ["children"])
  }

  @Test func saveFetchAndRollbackDeliverPendingChanges() throws {
    let (stack, inbox) = try savedInbox()
    let recorder = Recorder(stack.context)
    var events: [String] = []
    let saves = stack.context.observeSaves { event in
      switch event {
      case .willSave: events.append("will")
      case .didSave(let changeset): events.append("did \(changeset.updated.count)")
      }
    }
    inbox.title = "1"
    try stack.context.save()
    #expect(recorder.deliveries.count == 1)
    #expect(events == ["will", "did 1"])
    inbox.title = "2"
    _ = try stack.context.fetch(FetchDescriptor<Box>())
    #expect(recorder.deliveries.count == 2)
    inbox.title = "3"
    stack.context.rollback()
    #expect(recorder.deliveries.count == 3)
    #expect(recorder.deliveries[2].changedKeys(of: inbox) == ["title"])
    _ = saves
  }

  @Test func rollingBackAnInsertBeforeDeliveryShowsNothing() throws {
    let (stack, inbox) = try savedInbox()
    let recorder = Recorder(stack.context)
    _ = Box(title: "Draft", parent: inbox)
    stack.context.rollback()
    // The parent's children were changed and restored: it is reported, the draft is not.
    #expect(recorder.deliveries.allSatisfy { $0.inserted.isEmpty && $0.deleted.isEmpty })
  }

  @Test func droppingTheTokenStopsDelivery() throws {
    let (stack, inbox) = try savedInbox()
    let recorder = Recorder(stack.context)
    recorder.token = nil
    inbox.title = "changed"
    stack.context.processPendingChanges()
    #expect(recorder.deliveries.isEmpty)
  }

  @Test func anObserverMayCancelItselfOrChangeTheContextDuringDelivery() throws {
    let (stack, inbox) = try savedInbox()
    final class Holder { var token: ObservationToken? }
    let holder = Holder()
    var calls = 0
    holder.token = stack.context.observeChanges { _ in
      calls += 1
      holder.token = nil  // the observer drops itself
    }
    var mutated = false
    let mutating = stack.context.observeChanges { _ in
      if !mutated {
        mutated = true
        inbox.detail = "changed by an observer"
      }
    }
    let recorder = Recorder(stack.context)
    inbox.title = "changed"
    stack.context.processPendingChanges()
    stack.context.processPendingChanges()
    #expect(calls == 1)
    #expect(recorder.deliveries.count == 2)
    #expect(recorder.deliveries[1].changedKeys(of: inbox) == ["detail"])
    _ = mutating
  }

  @Test func laterObserversOfADeliveryStillSeeItWhenAnEarlierOneChangesTheSameObjects()
    throws
  {
    let (stack, inbox) = try savedInbox()
    let child = Box(title: "Child", parent: inbox)
    try stack.context.save()
    // The first observer changes both objects again while the delivery is under way.
    var changedAgain = false
    let first = stack.context.observeChanges { _ in
      guard !changedAgain else { return }
      changedAgain = true
      inbox.title = "changed again"
      child.title = "changed again"
    }
    var objectChanges: [Set<String>] = []
    let second = stack.context.observe(inbox) { objectChanges.append($0.changedKeys) }
    var listChanges: [ListChange] = []
    let third = stack.context.observe(inbox, relationship: \.children) { listChanges.append($0) }
    inbox.detail = "changed"
    child.detail = "changed"
    stack.context.processPendingChanges()
    // This delivery's own changes, as they were when it started.
    #expect(objectChanges == [["detail"]])
    #expect(listChanges.count == 1)
    #expect(listChanges.first?.updated == [3])  // the child, after A, B and C
    // The observer's changes come in the next delivery.
    stack.context.processPendingChanges()
    #expect(objectChanges == [["detail"], ["title"]])
    #expect(listChanges.count == 2)
    _ = (first, second, third)
  }

  @Test func notificationCenterCarriesTheSameChanges() throws {
    let (stack, inbox) = try savedInbox()
    let received = LockedBox<[ChangeSummary]>([])
    let observer = NotificationCenter.default.addObserver(
      forName: .objectContextObjectsDidChange, object: stack.context, queue: nil
    ) { note in
      if let summary = note.userInfo?[ObjectContext.changeSummaryKey] as? ChangeSummary {
        received.withLock { $0.append(summary) }
      }
    }
    defer { NotificationCenter.default.removeObserver(observer) }
    inbox.title = "posted"
    stack.context.processPendingChanges()
    #expect(
      received.withLock { $0 } == [
        ChangeSummary(inserted: [], updated: [inbox.objectID!: ["title"]], deleted: [])
      ])
  }

  @Test func anAsyncSequenceDeliversSummaries() async throws {
    let (stack, inbox) = try savedInbox()
    let summaries = stack.context.changeSummaries()
    inbox.title = "streamed"
    stack.context.processPendingChanges()
    var iterator = summaries.makeAsyncIterator()
    let first = await iterator.next()
    #expect(first?.updated[inbox.objectID!] == ["title"])
  }

  @Test func anObjectObserverHearsOnlyItsKeys() throws {
    let (stack, inbox) = try savedInbox()
    var changes: [ObjectChange] = []
    let token = stack.context.observe(inbox, keyPaths: [\.title]) { changes.append($0) }
    inbox.detail = "not observed"
    stack.context.processPendingChanges()
    #expect(changes.isEmpty)
    inbox.title = "observed"
    stack.context.processPendingChanges()
    #expect(changes.map(\.changedKeys) == [["title"]])
    stack.context.delete(inbox)
    stack.context.processPendingChanges()
    #expect(changes.last?.isDeleted == true)
    _ = token
  }
}

/// The main context delivers by itself, once per turn of the main queue.
@Suite struct MainQueueDeliveryTests {
  @MainActor
  @Test func theMainContextDeliversOnTheNextTurnOfTheMainQueue() async throws {
    let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
    let context = container.mainContext
    let inbox = Box(title: "Inbox")
    context.insert(inbox)
    try context.save()
    var deliveries: [ObjectContextChanges] = []
    let token = context.observeChanges { deliveries.append($0) }
    inbox.title = "One"
    inbox.title = "Two"
    #expect(deliveries.isEmpty)  // not delivered synchronously
    for _ in 0..<100 where deliveries.isEmpty {
      await withCheckedContinuation { continuation in
        DispatchQueue.main.async { continuation.resume() }
      }
    }
    #expect(deliveries.count == 1)
    #expect(deliveries.first?.changedKeys(of: inbox) == ["title"])
    _ = token
  }
}
