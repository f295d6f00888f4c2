import Foundation
import Observation
import Testing

@testable import ObjectGraph

/// A model actor imports 100,000 boxes under one root in batches of 1,000, a save each,
/// while the main context shows them: after every merge its live query, its relationship
/// observer and `withObservationTracking` are exact, without a fetch.
@MainActor
@Suite struct BackgroundImportTests {
  static let batchSize = 1_000
  /// 100 batches; 10 under a sanitizer, which looks for races between the actor and the
  /// main context, not for what a long import adds.
  static let batchCount = TestScale.steps(100, sanitized: 10)

  @Test(arguments: StoreKind.allCases)
  func theMainContextsViewsStayExactThroughABackgroundImport(_ kind: StoreKind) async throws {
    let stack = try Stack(kind)
    let main = stack.container.mainContext
    let root = Box(title: "root")
    main.insert(root)
    try main.save()
    let importer = try BatchImporter(modelContainer: stack.container)

    // The live query: imported boxes with a 7 in their title, by title.
    let query = try main.liveQuery(
      FetchDescriptor<Box>(
        predicate: #Predicate { $0.title.contains("7") }, sortBy: [SortDescriptor(\.title)]))
    var queried = query.results
    let queryToken = query.observe { change in
      queried = change.apply(to: queried, takingInsertionsFrom: query.results)
    }
    // The relationship observer of the root's children.
    var heard = root.children
    let listToken = main.observe(root, relationship: \.children) { change in
      heard = change.apply(to: heard, takingInsertionsFrom: root.children)
    }
    let changes = ObservedChanges()

    for batch in 0..<Self.batchCount {
      withObservationTracking {
        _ = root.children.count
      } onChange: {
        changes.count += 1
      }
      let before = changes.count
      try await importer.importBatch(batch, of: Self.batchSize, into: root.persistentModelID!)
      main.processPendingChanges()
      #expect(changes.count == before + 1, "batch \(batch)")
      #expect(root.children.count == (batch + 1) * Self.batchSize)
      #expect(heard.count == root.children.count)
      if batch % 25 == 0 || batch == Self.batchCount - 1 {
        #expect(heard.elementsEqual(root.children, by: ===), "batch \(batch)")
        let fetched = try main.fetch(
          FetchDescriptor<Box>(
            predicate: #Predicate { $0.title.contains("7") }, sortBy: [SortDescriptor(\.title)]))
        #expect(query.results.elementsEqual(fetched, by: ===), "batch \(batch)")
        #expect(queried.elementsEqual(fetched, by: ===), "batch \(batch)")
      }
    }
    #expect(try main.fetchCount(FetchDescriptor<Box>()) == Self.batchCount * Self.batchSize + 1)
    withExtendedLifetime((queryToken, listToken)) {}
  }
}

/// How many times `withObservationTracking` said a change came.
private final class ObservedChanges: @unchecked Sendable {
  var count = 0  // changed on the main actor only, where the merges run
}

/// An importer written as a SwiftData `@ModelActor` is, without the macro.
private actor BatchImporter: ModelActor {
  nonisolated let modelContainer: ObjectContainer
  nonisolated let modelExecutor: any ModelExecutor

  init(modelContainer: ObjectContainer) throws {
    self.modelContainer = modelContainer
    modelExecutor = DefaultSerialModelExecutor(modelContext: try modelContainer.newContext())
  }

  /// Imports batch `batch` of `size` boxes as children of the root, and saves.
  func importBatch(_ batch: Int, of size: Int, into rootID: PersistentIdentifier) throws {
    guard let root = self[rootID, as: Box.self] else { return }
    for number in batch * size..<(batch + 1) * size {
      _ = Box(title: "b\(number)", parent: root)
    }
    try modelContext.save()
  }
}
