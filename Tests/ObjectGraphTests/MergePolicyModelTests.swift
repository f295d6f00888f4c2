import Foundation
import Testing

@testable import ObjectGraph

/// Two contexts edit the attributes of a few boxes and delete some, saving now and then,
/// under each merge policy; a plain model of the store and of each context (its values, its
/// committed values, what it changed and deleted, the saves it merged) says, save by save,
/// what the policy makes of each conflict. After every step both contexts and the store
/// hold what the model holds; under ``MergePolicy/error`` a conflicting save throws and is
/// rolled back, so no edit is lost without an error.
@MainActor
@Suite struct MergePolicyModelTests {
  @Test(
    arguments: StoreKind.allCases,
    [
      MergePolicy.error, .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .rollback,
      .overwrite,
    ])
  func randomEditsFollowTheModelOfThePolicy(_ kind: StoreKind, _ policy: MergePolicy) throws {
    var random = SplitMix64(seed: TestScale.seed(29))
    var conflicts = 0
    // Rounds on fresh stores, so that deletes do not empty the store for good.
    for _ in 0..<TestScale.steps(8, sanitized: 3) {
      conflicts += try runRound(kind, policy, &random)
    }
    if policy == .error { #expect(conflicts > 0) }
  }

  /// One round of 80 random steps on a fresh store of five boxes; returns the conflicts.
  private func runRound(_ kind: StoreKind, _ policy: MergePolicy, _ random: inout SplitMix64)
    throws -> Int
  {
    let stack = try Stack(kind)
    let boxCount = 5
    var ids: [ObjectID] = []
    for number in 0..<boxCount {
      let box = Box(title: "t\(number)")
      box.detail = "d\(number)"
      stack.context.insert(box)
      try stack.context.save()
      ids.append(box.objectID!)
    }
    let contexts = [stack.context, try stack.container.newContext()]
    for context in contexts { context.mergePolicy = policy }
    var model = StoreModel(
      values: (0..<boxCount).map { ["t\($0)", "d\($0)"] }, policy: policy, contexts: 2)
    var conflicts = 0
    for step in 0..<80 {
      let number = Int(random.next() % 2)
      let context = contexts[number]
      let box = Int(random.next() % UInt64(boxCount))
      switch random.next() % 50 {
      case 0..<35:
        let property = Int(random.next() % 2)
        guard model.contexts[number].view[box] != nil,
          !model.contexts[number].deleted.contains(box),
          let object = context.registered[ids[box]] as? Box, !object.isDeleted
        else { break }
        let value = "\(property == 0 ? "t" : "d")\(box).\(step)"
        if property == 0 { object.title = value } else { object.detail = value }
        model.edit(number, box, property, value)
      case 35:
        guard let object = context.registered[ids[box]] as? Box, !object.isDeleted,
          model.contexts[number].view[box] != nil
        else { break }
        context.delete(object)
        model.delete(number, box)
      case 36..<43:
        if model.save(number) {
          try context.save()
        } else {
          #expect(throws: ObjectGraphError.self) { try context.save() }
          conflicts += 1
          context.rollback()
          model.rollback(number)
        }
      default:
        context.processPendingChanges()
        model.merge(number)
      }
      for (number, context) in contexts.enumerated() {
        let state = model.contexts[number]
        let live = state.view.filter { !state.deleted.contains($0.key) }
        try expectContext(context, equals: live, ids, step: step)
      }
      let stored = try ObjectContext(stack.container)
      try expectContext(stored, equals: model.store, ids, step: step)
    }
    return conflicts
  }

  /// The context holds exactly the boxes and values of `view` (title, detail by box), read
  /// without merging (``ObjectContext/object(with:)`` would merge first).
  private func expectContext(
    _ context: ObjectContext, equals view: [Int: [String]], _ ids: [ObjectID], step: Int
  ) throws {
    for (box, id) in ids.enumerated() {
      let object = context.registered[id] as? Box
      let live = object.flatMap { $0.isDeleted ? nil : [$0.title, $0.detail] }
      #expect(live == view[box], "step \(step): box \(box)")
    }
  }
}

/// The store and each context as plain values, with the merge policies' rules.
private struct StoreModel {
  /// One save: the new values by box and property, and the boxes deleted.
  struct Save {
    var values: [Int: [Int: String]] = [:]
    var deleted: Set<Int> = []
  }

  /// One context: its values, its committed values, what it changed and deleted, and how
  /// many saves it merged.
  struct Context {
    var view: [Int: [String]]
    var committed: [Int: [String]]
    var changed: [Int: Set<Int>] = [:]
    var deleted: Set<Int> = []
    var merged: Int

    var hasChanges: Bool { changed.values.contains { !$0.isEmpty } || !deleted.isEmpty }
  }

  var store: [Int: [String]]
  let policy: MergePolicy
  var saves: [Save] = []
  var contexts: [Context]

  init(values: [[String]], policy: MergePolicy, contexts count: Int) {
    store = Dictionary(uniqueKeysWithValues: values.enumerated().map { ($0, $1) })
    self.policy = policy
    contexts = Array(repeating: Context(view: store, committed: store, merged: 0), count: count)
  }

  mutating func edit(_ number: Int, _ box: Int, _ property: Int, _ value: String) {
    contexts[number].view[box]![property] = value
    contexts[number].changed[box, default: []].insert(property)
  }

  mutating func delete(_ number: Int, _ box: Int) {
    contexts[number].deleted.insert(box)
  }

  /// Saves context `number`; false when a conflicting save holds it back.
  mutating func save(_ number: Int) -> Bool {
    guard merge(number) else { return false }
    var context = contexts[number]
    guard context.hasChanges else { return true }
    var save = Save()
    for (box, properties) in context.changed where !context.deleted.contains(box) {
      for property in properties {
        save.values[box, default: [:]][property] = context.view[box]![property]
      }
    }
    save.deleted = context.deleted
    for (box, values) in save.values {
      for (property, value) in values { store[box]![property] = value }
    }
    for box in save.deleted {
      store[box] = nil
      context.view[box] = nil
    }
    saves.append(save)
    context.committed = context.view
    context.changed = [:]
    context.deleted = []
    context.merged = saves.count
    contexts[number] = context
    return true
  }

  mutating func rollback(_ number: Int) {
    contexts[number].view = contexts[number].committed
    contexts[number].changed = [:]
    contexts[number].deleted = []
    merge(number)
  }

  /// Merges the saves context `number` missed, in order; false when one conflicts and the
  /// policy is ``MergePolicy/error`` (it and every later one wait).
  @discardableResult
  mutating func merge(_ number: Int) -> Bool {
    var context = contexts[number]
    defer { contexts[number] = context }
    while context.merged < saves.count {
      let save = saves[context.merged]
      let overlapping = save.values.filter { box, values in
        !(context.changed[box] ?? []).isDisjoint(with: values.keys)
          && !context.deleted.contains(box)
      }
      let isConflict =
        !overlapping.isEmpty
        || save.values.keys.contains { context.deleted.contains($0) }
        || save.deleted.contains {
          context.deleted.contains($0) || context.changed[$0]?.isEmpty == false
        }
      if isConflict && policy == .error { return false }
      for (box, values) in save.values where !context.deleted.contains(box) {
        let inConflict = overlapping[box] != nil
        for (property, value) in values {
          let ours = context.changed[box]?.contains(property) == true
          context.committed[box]![property] = value
          switch policy {
          case .mergeByPropertyObjectTrump where ours, .overwrite where inConflict:
            context.changed[box, default: []].insert(property)  // ours stays, over the saved value
          default:
            context.view[box]![property] = value
            context.changed[box]?.remove(property)
          }
        }
        if policy == .rollback && inConflict {
          for property in context.changed[box] ?? [] {
            context.view[box]![property] = context.committed[box]![property]
          }
          context.changed[box] = nil
        }
      }
      for box in save.deleted {
        context.view[box] = nil
        context.committed[box] = nil
        context.changed[box] = nil
        context.deleted.remove(box)
      }
      context.merged += 1
    }
    return true
  }
}
