import Foundation
import Testing

@testable import ObjectGraph

/// Three contexts on two actors (two on the main actor, one in a model actor) edit one
/// forest at random (every list operation, reparenting, cascade deletes, unique clashes) and
/// save in a random interleaving. After every step each context without changes, merged,
/// equals the store; and each title and parent a context holds as changed stays what it set
/// through every merge, and is what it and the store hold after its save: an edit is never
/// lost without an error (a conflict, or the unique clash), under the error policy and the
/// policies where this context's values win.
@MainActor
@Suite struct ThreeContextTests {
  @Test(
    arguments: StoreKind.allCases, [MergePolicy.error, .mergeByPropertyObjectTrump, .overwrite])
  func randomEditsInThreeContextsOnTwoActorsConverge(_ kind: StoreKind, _ policy: MergePolicy)
    async throws
  {
    let stack = try Stack(kind)
    let mainContexts = [stack.context, try stack.container.newContext()]
    for context in mainContexts { context.mergePolicy = policy }
    let player = try ForestPlayer(modelContainer: stack.container, policy: policy)
    var playing = [ForestPlay(label: "a", seed: 1), ForestPlay(label: "b", seed: 2)]
    var random = SplitMix64(seed: TestScale.seed(5))
    var outcomes: [ForestPlay.Outcome: Int] = [:]
    for step in 0..<240 {
      let number = Int(random.next() % 3)
      let outcome: ForestPlay.Outcome
      if number < 2 {
        outcome = try playing[number].step(mainContexts[number], store: stack.container)
      } else {
        outcome = try await player.step()
      }
      outcomes[outcome, default: 0] += 1
      // Every context without changes, merged, holds what the store holds.
      let stored = try forestGraph(of: try ObjectContext(stack.container))
      for context in mainContexts where !context.hasChanges {
        context.processPendingChanges()
        #expect(try forestGraph(of: context) == stored, "step \(step)")
      }
      if let graph = try await player.graphIfUnchanged() {
        #expect(graph == stored, "step \(step): the actor's context")
      }
    }
    #expect(outcomes[.saved, default: 0] > 20)
    if policy == .error { #expect(outcomes[.conflict, default: 0] > 0) }
    #expect(outcomes[.refused, default: 0] > 0)
  }
}

/// The third context, in an actor of its own.
private actor ForestPlayer: ModelActor {
  nonisolated let modelContainer: ObjectContainer
  nonisolated let modelExecutor: any ModelExecutor
  private var play = ForestPlay(label: "c", seed: 3)

  init(modelContainer: ObjectContainer, policy: MergePolicy) throws {
    self.modelContainer = modelContainer
    let context = try modelContainer.newContext()
    context.mergePolicy = policy
    modelExecutor = DefaultSerialModelExecutor(modelContext: context)
  }

  func step() throws -> ForestPlay.Outcome {
    try play.step(modelContext, store: modelContainer)
  }

  /// The context's graph, merged, when it has no changes of its own.
  func graphIfUnchanged() throws -> [ObjectID: String]? {
    guard !modelContext.hasChanges else { return nil }
    modelContext.processPendingChanges()
    return try forestGraph(of: modelContext)
  }
}

/// One context's random play: its edits since its last save, and one step at a time.
private struct ForestPlay {
  enum Outcome: Hashable, Sendable {
    case edited, saved, conflict, refused
  }

  let label: String
  var random: SplitMix64
  var made = 0
  /// The titles and parents of saved boxes this context changed since its last save, as it
  /// set them: noted after each of its own edits from what it holds as changed (setting a
  /// property to the value it holds, or back to its saved value, changes nothing, and
  /// another context may then change it without a conflict).
  var titles: [ObjectID: String] = [:]
  var parents: [ObjectID: ObjectID?] = [:]

  init(label: String, seed: UInt64) {
    self.label = label
    random = SplitMix64(seed: TestScale.seed(seed))
  }

  /// One random edit, or a save (a quarter of the steps).
  mutating func step(_ context: ObjectContext, store container: ObjectContainer) throws
    -> Outcome
  {
    if random.next() % 4 == 0 { return try save(context, container) }
    let boxes = (try? context.fetch(FetchDescriptor<Box>())) ?? []
    // The fetch merged the other contexts' saves: none may have changed an edit of ours.
    expectEditsKept(in: context, "after a merge")
    defer { noteEdits(in: context) }
    let pick = { (random: inout SplitMix64) -> Box? in
      boxes.isEmpty ? nil : boxes[Int(random.next() % UInt64(boxes.count))]
    }
    switch random.next() % 10 {
    case 0, 1:
      made += 1
      let box = Box(title: "\(label)\(made)")
      context.insert(box)
      if let parent = pick(&random) { box.parent = parent }
    case 2:
      guard let box = pick(&random) else { break }
      box.title += label
    case 3:
      guard let box = pick(&random), let parent = pick(&random), parent !== box,
        !isAncestor(box, of: parent)
      else { break }
      box.parent = parent
    case 4:
      guard let parent = pick(&random), parent.children.count > 1 else { break }
      let count = parent.children.count
      parent.children.move(
        fromOffsets: [Int(random.next() % UInt64(count))],
        toOffset: Int(random.next() % UInt64(count + 1)))
    case 5:
      guard let parent = pick(&random), parent.children.count > 1 else { break }
      let count = parent.children.count
      parent.children.swapAt(
        Int(random.next() % UInt64(count)), Int(random.next() % UInt64(count)))
    case 6:
      guard let parent = pick(&random), !parent.children.isEmpty else { break }
      let child = parent.children.remove(at: Int(random.next() % UInt64(parent.children.count)))
    case 7:
      guard let parent = pick(&random), let box = pick(&random), box !== parent,
        !isAncestor(box, of: parent)
      else { break }
      parent.children.insert(box, at: Int(random.next() % UInt64(parent.children.count + 1)))
    case 8:
      if let box = pick(&random), random.next() % 3 == 0 { context.delete(box) }
    default:
      // A unique clash: this save will be refused.
      guard let box = pick(&random), let other = pick(&random), box !== other else { break }
      box.id = other.id
    }
    return .edited
  }

  private mutating func save(_ context: ObjectContext, _ container: ObjectContainer) throws
    -> Outcome
  {
    defer {
      titles = [:]
      parents = [:]
    }
    do {
      try context.save()
    } catch let error as ObjectGraphError where [.conflict, .uniqueConstraint].contains(error.code)
    {
      context.rollback()
      return error.code == .conflict ? .conflict : .refused
    }
    // No edit lost: each title and parent this context changed is what it holds and what
    // the store holds.
    expectEditsKept(in: context, "after its save", store: try ObjectContext(container))
    return .saved
  }

  /// Checks that `context` (and `store`, when given) holds each title and parent this
  /// context changed since its last save.
  private func expectEditsKept(
    in context: ObjectContext, _ moment: String, store: ObjectContext? = nil
  ) {
    for (id, title) in titles {
      guard let box = context.registeredModel(for: id) as Box?, !box.isDeleted else {
        // A delete saved elsewhere wins over a change of attributes, under a policy that
        // resolves the conflict; under the error policy the save throws instead.
        #expect(context.mergePolicy != .error, "\(label), \(moment): \(id) deleted by a merge")
        continue
      }
      #expect(box.title == title, "\(label), \(moment): title of \(id)")
      if let store { #expect((store.registeredModel(for: id) as Box?)?.title == title) }
    }
    for (id, parent) in parents {
      let box = context.registeredModel(for: id) as Box?
      #expect(box?.parent?.objectID == parent, "\(label), \(moment): parent of \(id)")
      if let store { #expect((store.registeredModel(for: id) as Box?)?.parent?.objectID == parent) }
    }
  }

  /// Notes the titles and parents of saved boxes `context` holds as changed.
  private mutating func noteEdits(in context: ObjectContext) {
    titles = [:]
    parents = [:]
    for case let box as Box in context.updatedObjects {
      guard let id = box.objectID else { continue }
      let changed = context.changedValues(of: box)
      if changed["title"] != nil { titles[id] = box.title }
      if changed["parent"] != nil { parents[id] = box.parent?.objectID }
    }
  }
}
