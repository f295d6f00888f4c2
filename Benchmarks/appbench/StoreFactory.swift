import BenchmarkSupport
import Foundation
import ObjectGraph

/// Opens the benchmark's container on the durable file store at `path`, the way the README
/// teaches: `ObjectContainer(for:storeURL:)`.
@MainActor
func makeContainer(path: String) throws -> ObjectContainer {
  try ObjectContainer(for: Box.self, storeURL: URL(fileURLWithPath: path))
}
