import Foundation
import Testing

@testable import ObjectGraph

/// Three contexts on two actors (two on the main actor, one in a model actor) edit one
/// forest at random (every list operation, reparenting, cascade deletes, unique clashes) and
/// save in a random interleaving. After every step each context without changes, merged,
/// equals the store; and every save that returns has kept each title and parent its context
/// set since its last save: an edit is never lost without an error (a conflict, or the
/// unique clash), under the error policy and the policies where this context's values win.
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
    var random = SplitMix64(seed: 5)
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
  /// The title and parent this context last set for each saved box since its last save.
  var titles: [ObjectID: String] = [:]
  var parents: [ObjectID: ObjectID?] = [:]

  init(label: String, seed: UInt64) {
    self.label = label
    random = SplitMix64(seed: seed)
  }

  /// One random edit, or a save (a quarter of the steps).
  mutating func step(_ context: ObjectContext, store container: ObjectContainer) throws
    -> Outcome
  {
    if random.next() % 4 == 0 { return try save(context, container) }
    let boxes = (try? context.fetch(FetchDescriptor<Box>())) ?? []
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
      note(title: box)
    case 3:
      guard let box = pick(&random), let parent = pick(&random), parent !== box,
        !isAncestor(box, of: parent)
      else { break }
      box.parent = parent
      note(parentOf: box)
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
      note(parentOf: child)
    case 7:
      guard let parent = pick(&random), let box = pick(&random), box !== parent,
        !isAncestor(box, of: parent)
      else { break }
      parent.children.insert(box, at: Int(random.next() % UInt64(parent.children.count + 1)))
      note(parentOf: box)
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
    do {
      try context.save()
    } catch let error as ObjectGraphError where [.conflict, .uniqueConstraint].contains(error.code)
    {
      context.rollback()
      titles = [:]
      parents = [:]
      return error.code == .conflict ? .conflict : .refused
    }
    // No edit lost: what this context set is what it holds and what the store holds.
    let stored = try ObjectContext(container)
    for (id, title) in titles {
      guard let box = context.registeredModel(for: id) as Box?, !box.isDeleted else { continue }
      #expect(box.title == title, "\(label): title of \(id)")
      #expect((stored.registeredModel(for: id) as Box?)?.title == title)
    }
    for (id, parent) in parents {
      guard let box = context.registeredModel(for: id) as Box?, !box.isDeleted else { continue }
      #expect(box.parent?.objectID == parent, "\(label): parent of \(id)")
      #expect((stored.registeredModel(for: id) as Box?)?.parent?.objectID == parent)
    }
    titles = [:]
    parents = [:]
    return .saved
  }

  private mutating func note(title box: Box) {
    if let id = box.objectID, !box.isInserted { titles[id] = box.title }
  }

  private mutating func note(parentOf box: Box) {
    if let id = box.objectID, !box.isInserted { parents[id] = box.parent?.objectID }
  }
}
