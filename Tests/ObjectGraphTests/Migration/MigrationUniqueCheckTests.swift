import Foundation
import ObjectGraph
import Synchronization
import Testing

/// After a custom stage, a unique attribute that was unique in the stored schema is checked
/// only where code changed it (the store kept its values apart): the check must still find
/// every repeat the code makes, however it makes it.
@Suite(.serialized) struct MigrationUniqueCheckTests {
  static func fillTags(_ store: VersionedStore) throws {
    try store.open([TagsV1.Tag.self]) { context in
      for number in 0..<20 {
        let tag = TagsV1.Tag()
        tag.name = "tag \(number)"
        context.insert(tag)
      }
      try context.save()
    }
  }

  static func names(_ store: VersionedStore) throws -> [String] {
    try store.open([TagsV2.Tag.self], plan: TagPlan.self) { context in
      try context.fetch(FetchDescriptor<TagsV2.Tag>(sortBy: [SortDescriptor(\.name)]))
        .map(\.name)
    }
  }

  @Test(
    arguments: StoreKind.allCases,
    [TagPlan.Edit.renamedUnsaved, .renamedAndSaved, .insertedUnsaved])
  func everyRepeatAStageMakesIsRefused(_ kind: StoreKind, edit: TagPlan.Edit) throws {
    let store = try VersionedStore(kind)
    try Self.fillTags(store)
    let before = kind == .binary ? try fileBytes(store.url) : []
    TagPlan.edit.withLock { $0 = edit }
    defer { TagPlan.edit.withLock { $0 = .labelOnly } }
    let error = try #require(throws: ObjectGraphError.self) {
      try store.open([TagsV2.Tag.self], plan: TagPlan.self) { _ in }
    }
    #expect(error.code == .migrationFailed)
    switch edit {
    case .renamedUnsaved, .insertedUnsaved:
      #expect(error.property == "name" && error.message.contains("both hold \"tag 3\""))
    case .renamedAndSaved:
      #expect(
        error.message.contains("didMigrate threw") && error.message.contains("must be unique"))
    case .labelOnly:
      Issue.record("a stage that repeats nothing was refused: \(error)")
    }
    if kind == .binary { #expect(try fileBytes(store.url) == before, "the store is untouched") }
    TagPlan.edit.withLock { $0 = .labelOnly }
    #expect(try Self.names(store).count == 20, "a stage that repeats nothing migrates it")
  }

  @Test(arguments: StoreKind.allCases)
  func aStageThatLeavesTheNamesAloneMigrates(_ kind: StoreKind) throws {
    let store = try VersionedStore(kind)
    try Self.fillTags(store)
    let labels = try store.open([TagsV2.Tag.self], plan: TagPlan.self) { context in
      try context.fetch(FetchDescriptor<TagsV2.Tag>()).map(\.label)
    }
    #expect(labels.count == 20 && labels.allSatisfy { $0.hasPrefix("label of tag ") })
  }
}

enum TagsV1: VersionedSchema {
  static let versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [ManagedObject.Type] { [Tag.self] }

  final class Tag: ManagedObject {
    @Attribute(.unique) var name = ""
  }
}

enum TagsV2: VersionedSchema {
  static let versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [ManagedObject.Type] { [Tag.self] }

  final class Tag: ManagedObject {
    @Attribute(.unique) var name = ""
    @Attribute var label = ""
  }
}

/// Tags gain a label in a custom stage, which may also repeat a name (as a test sets).
enum TagPlan: SchemaMigrationPlan {
  enum Edit: Sendable {
    case labelOnly
    /// One tag renamed to another's name, not saved.
    case renamedUnsaved
    /// One tag renamed to another's name, then saved in the stage.
    case renamedAndSaved
    /// A new tag with an existing name, not saved.
    case insertedUnsaved
  }

  static let edit = Mutex(Edit.labelOnly)

  static var schemas: [any VersionedSchema.Type] { [TagsV1.self, TagsV2.self] }
  static var stages: [MigrationStage] {
    [
      .custom(fromVersion: TagsV1.self, toVersion: TagsV2.self, willMigrate: nil) { context in
        let tags = try context.fetch(FetchDescriptor<TagsV2.Tag>(sortBy: [SortDescriptor(\.name)]))
        for tag in tags { tag.label = "label of \(tag.name)" }
        switch edit.withLock({ $0 }) {
        case .labelOnly:
          break
        case .renamedUnsaved:
          tags.first { $0.name == "tag 7" }!.name = "tag 3"
        case .renamedAndSaved:
          tags.first { $0.name == "tag 7" }!.name = "tag 3"
          try context.save()
        case .insertedUnsaved:
          let tag = TagsV2.Tag()
          tag.name = "tag 3"
          context.insert(tag)
        }
      }
    ]
  }
}
