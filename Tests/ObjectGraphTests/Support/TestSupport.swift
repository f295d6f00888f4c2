import Foundation
import Observation
import Testing

@testable import ObjectGraph

/// Every model class of the tests.
let allModels: [ManagedObject.Type] = [
  Box.self, Item.self, Note.self, Tag.self, Block.self, Person.self, Passport.self, Club.self,
  Loan.self, Pet.self, Sample.self,
]

/// A container over a fresh (or given) in-memory store, with its own context.
struct Stack {
  let store: InMemoryStore
  let container: ObjectContainer
  let context: ObjectContext

  init(store: InMemoryStore = InMemoryStore()) throws {
    self.store = store
    container = try ObjectContainer(for: allModels, store: store)
    context = try ObjectContext(container)
  }

  /// A new container and context over the same store: what a relaunch sees.
  func reopened() throws -> Stack {
    container.close()
    return try Stack(store: store)
  }
}

/// Whether `change` fires the observers that `withObservationTracking` registers for what
/// `read` reads: the way a SwiftUI view learns that it must render again.
func observes(_ read: () -> Void, change: () throws -> Void) rethrows -> Bool {
  let fired = LockedBox(false)
  withObservationTracking(read) { fired.withLock { $0 = true } }
  try change()
  return fired.withLock { $0 }
}

/// Records every changeset a store is handed.
final class RecordingStore: PersistentStore, @unchecked Sendable {
  let base = InMemoryStore()
  private let saved = LockedBox<[Changeset]>([])
  var changesets: [Changeset] { saved.withLock { $0 } }

  func open(schema: Schema) throws { try base.open(schema: schema) }
  func load() throws -> StoreContents { try base.load() }
  func save(_ changeset: Changeset) throws {
    try base.save(changeset)
    saved.withLock { $0.append(changeset) }
  }
  func close() { base.close() }
}

extension Array where Element: ManagedObject {
  var titles: [String] { map { ($0 as? Box)?.title ?? "?" } }
}
