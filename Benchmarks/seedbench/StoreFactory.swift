import Foundation
import ObjectGraph

/// The stand-in store while `BinaryStore` has not landed: one instance for the whole run, so
/// "open afresh" reopens this same (closed) store and the open and reopen phases measure
/// loading objects, not reading a file. Unused once ``makeContainer(path:)`` uses `storeURL:`.
@MainActor private let fallbackStore = InMemoryStore()

/// Opens the benchmark's container on the store at `path`.
///
/// The one line to change for the durable file store is the `return` below: replace it with
/// `return try ObjectContainer(for: Box.self, storeURL: URL(fileURLWithPath: path))`.
/// The workload notices on its own whether a store file exists (see `SeedWorkload`).
@MainActor
func makeContainer(path: String) throws -> ObjectContainer {
  return try ObjectContainer(for: Box.self, store: fallbackStore)
}
