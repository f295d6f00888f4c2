import Foundation
import ObjectGraph
import Testing

@testable import ObjectGraphInspector

@Suite struct InfoCommandTests {
  @Test @MainActor func infoShowsVersionSchemaCountsAndSizes() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    let size = try contents(of: url).count

    let run = inspect("info", url.path)
    #expect(run.status == 0)
    #expect(run.errors.isEmpty)
    let lines = run.output.split(separator: "\n").map(String.init)
    #expect(lines.contains("Format version:  2"))
    #expect(lines.contains("File size:       \(size) bytes"))
    #expect(lines.contains("Objects:         8"))
    #expect(
      lines.contains {
        $0.hasPrefix("Records:         2 since the file was created or last compacted")
      })
    #expect(lines.contains("Box: 8 objects"))
    #expect(lines.contains("    id        uuid, unique"))
    #expect(lines.contains("    created   date"))
    #expect(lines.contains("    parent    to-one Box, inverse children, delete rule nullify"))
    #expect(
      lines.contains(
        "    children  to-many Box, ordered, inverse parent, delete rule cascade"))
  }

  @Test @MainActor func infoReportsTheLiveSizeThatCompactionReaches() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    let info = inspect("info", url.path)
    let live = try #require(
      info.output.split(separator: "\n").first { $0.hasPrefix("Live data:") }
    ).split(separator: " ").dropFirst(2).first
    #expect(inspect("compact", url.path).status == 0)
    #expect(live.map(String.init) == String(try contents(of: url).count))
  }

  @Test @MainActor func infoCountsEachEntityOfTheFile() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("items.ogstore")
    try Stores.items(at: url)
    let run = inspect("info", url.path)
    #expect(run.status == 0)
    #expect(run.output.contains("Item: 2 objects"))
    #expect(run.output.contains("Note: 5 objects"))
    #expect(run.output.contains("    link     url?"))
    #expect(
      run.output.contains("    notes    to-many Note, ordered, inverse item, delete rule cascade"))
  }
}

/// Two versions of a counter app, for the schema version and history `info` shows.
enum CounterV1: VersionedSchema {
  static let versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [ManagedObject.Type] { [Counter.self] }

  final class Counter: ManagedObject {
    @Attribute var count = 0
  }
}

enum CounterV2: VersionedSchema {
  static let versionIdentifier = Schema.Version(2, 1, 0)
  static var models: [ManagedObject.Type] { [Counter.self] }

  final class Counter: ManagedObject {
    @Attribute var count = 0
    @Attribute var label = "main"
  }
}

/// `count` removed, `step` added: `label` keeps its number, 2, and `step` takes 3.
enum CounterV3: VersionedSchema {
  static let versionIdentifier = Schema.Version(3, 0, 0)
  static var models: [ManagedObject.Type] { [Counter.self] }

  final class Counter: ManagedObject {
    @Attribute var label = "main"
    @Attribute var step = 1
  }
}

enum CounterPlanToV3: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] {
    [CounterV1.self, CounterV2.self, CounterV3.self]
  }
  static var stages: [MigrationStage] { [] }
}

enum CounterPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [CounterV1.self, CounterV2.self] }
  static var stages: [MigrationStage] {
    [.lightweight(fromVersion: CounterV1.self, toVersion: CounterV2.self)]
  }
}

@Suite struct InfoMigrationTests {
  @Test func infoShowsTheSchemaVersionAndItsMigrations() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("counter.ogstore")
    do {
      let container = try ObjectContainer(
        for: [CounterV1.Counter.self], migrationPlan: nil, store: BinaryStore(url: url))
      let context = try container.newContext()
      context.insert(CounterV1.Counter())
      try context.save()
      container.close()
    }
    var lines = inspect("info", url.path).output.split(separator: "\n").map(String.init)
    #expect(lines.contains("Schema version:  none (written without a migration plan)"))
    #expect(!lines.contains { $0.hasPrefix("Migrated:") })
    do {
      let container = try ObjectContainer(
        for: [CounterV2.Counter.self], migrationPlan: CounterPlan.self,
        store: BinaryStore(url: url))
      container.close()
    }
    // A compaction keeps the history.
    let store = BinaryStore(url: url)
    try store.open(schema: try BinaryStoreHeader.read(from: url).schema)
    try store.compact()
    store.close()
    lines = inspect("info", url.path).output.split(separator: "\n").map(String.init)
    #expect(lines.contains("Schema version:  2.1.0"))
    #expect(
      lines.contains {
        $0.hasPrefix("Migrated:        unversioned to 2.1.0 on ")
          && $0.hasSuffix("entity Counter: property label is in the model but not stored")
      })
  }

  @Test func infoShowsTheNumbersAMigrationKept() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("counter.ogstore")
    for (types, plan) in [
      ([CounterV1.Counter.self], nil),
      ([CounterV3.Counter.self], CounterPlanToV3.self),
    ] as [([ManagedObject.Type], (any SchemaMigrationPlan.Type)?)] {
      let container = try ObjectContainer(
        for: types, migrationPlan: plan, store: BinaryStore(url: url))
      let context = try container.newContext()
      if plan == nil { context.insert(CounterV1.Counter()) }
      try context.save()
      container.close()
    }
    let lines = inspect("info", url.path).output.split(separator: "\n").map(String.init)
    #expect(lines.contains("Format version:  3"))
    #expect(lines.contains { $0.hasPrefix("    label") && $0.hasSuffix("string, number 2") })
    #expect(lines.contains { $0.hasPrefix("    step") && $0.hasSuffix("int, number 3") })
  }
}
