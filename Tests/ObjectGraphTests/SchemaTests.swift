import Foundation
import Testing

@testable import ObjectGraph

final class Unsupported: ManagedObject {
  struct Opaque {}
  @Attribute var name = ""
  @Attribute var opaque = Opaque()
}

final class Left: ManagedObject {
  @Relationship(inverse: \Right.other) var right: Right?
}

final class Right: ManagedObject {
  @Relationship var left: Left?
  @Relationship var other: Left?
  @Relationship(inverse: \Left.right) var wrong: Left?
}

final class PointsElsewhere: ManagedObject {
  @Attribute var name = ""
  @Relationship(inverse: \Item.notes) var tag: Tag?
}

enum Duplicates {
  final class Tag: ManagedObject {
    @Attribute var label = ""
  }
}

enum Catalog {
  final class Shelf: ManagedObject {
    @Attribute var label = ""
  }
}

/// Classes no other test uses, so that `classesBuiltOnSeveralThreadsAtOnceGetOneModelEach`
/// builds them for the first time.
final class RacingFolder: ManagedObject {
  @Attribute var name = ""
  @Relationship(inverse: \RacingFile.folder) var files: [RacingFile]
  @Relationship var cover: RacingCover?
}

final class RacingFile: ManagedObject {
  @Relationship var folder: RacingFolder?
}

final class RacingCover: ManagedObject {
  @Relationship(inverse: \RacingFolder.cover) var folder: RacingFolder?
}

/// The schema is built from the classes; what cannot be persisted is rejected when the
/// container is made, naming the class and the property.
@Suite struct SchemaTests {
  /// A stored schema's version counts only when both sides record one, and its migration
  /// history never does.
  @Test func aStoredSchemaMatchesWhateverItsHistoryAndAMissingVersion() throws {
    let (models, _) = try ObjectContainer.schema(for: [Box.self])
    var stored = models
    stored.history = [
      MigrationRecord(
        fromVersion: nil, toVersion: Schema.Version(2, 0, 0), date: Date(), changes: ["x"])
    ]
    #expect(models.matches(stored: stored))
    stored.version = Schema.Version(2, 0, 0)
    #expect(models.matches(stored: stored), "the models record no version")
    var versioned = models
    versioned.version = Schema.Version(2, 0, 0)
    #expect(versioned.matches(stored: stored))
    #expect(versioned.matches(stored: models), "the store records no version")
    versioned.version = Schema.Version(3, 0, 0)
    #expect(!versioned.matches(stored: stored), "another version")
    #expect(Schema.Version(1, 2, 3) < Schema.Version(1, 10, 0))
    #expect(Schema.Version(2, 0, 0) > Schema.Version(1, 99, 99))
  }

  @Test func theSchemaDescribesEveryPropertyInDeclarationOrder() throws {
    let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
    let box = try #require(container.schema.entities.first)
    #expect(box.name == "Box")
    #expect(
      box.properties.map(\.name) == ["id", "title", "detail", "created", "parent", "children"])
    #expect(
      box.properties[0].attribute
        == AttributeDescription(type: .uuid, isOptional: false, isUnique: true, isIndexed: false))
    #expect(box.properties[4].relationship?.inverse == "children")
    #expect(box.properties[5].relationship?.inverse == "parent")
    #expect(box.properties[5].relationship?.deleteRule == .cascade)
    #expect(box.properties[5].relationship?.isToMany == true)
  }

  @Test func inversesDeclaredOnOneSideAreFoundOnTheOther() throws {
    let container = try ObjectContainer(for: Item.self, store: InMemoryStore())
    let names = container.schema.entities.map(\.name)
    #expect(names == ["Item", "Note", "Tag"])  // reached classes come along
    let note = try #require(container.schema.entities.first { $0.name == "Note" })
    #expect(note.properties[1].relationship?.inverse == "notes")
    let item = try #require(container.schema.entities.first)
    #expect(item.properties[2].relationship?.inverse == nil)
  }

  /// Under ThreadSanitizer this also checks that no build writes models another published.
  @Test func classesBuiltOnSeveralThreadsAtOnceGetOneModelEach() throws {
    let classes: [ManagedObject.Type] = [RacingFolder.self, RacingFile.self, RacingCover.self]
    let seen = LockedBox<[[ObjectIdentifier]]>([])
    DispatchQueue.concurrentPerform(iterations: 6) { thread in
      // Each thread starts from another class, and reads what it gets at once.
      guard let first = try? ModelRegistry.models(for: [classes[thread % classes.count]]),
        let all = try? ModelRegistry.models(for: classes)
      else { return }
      for model in first + all {
        for property in model.properties {
          guard case .relationship(let relationship) = property.kind else { continue }
          _ = (relationship.inverse, relationship.inverseModel?.isToMany)
        }
      }
      seen.withLock { $0.append(all.map(ObjectIdentifier.init)) }
    }
    let results = seen.withLock { $0 }
    #expect(results.count == 6)
    #expect(Set(results).count == 1)
    let folder = ModelRegistry.model(for: RacingFolder.self)
    #expect(folder.relationship(1)?.inverse == 0)  // RacingFile.folder
    #expect(folder.relationship(2)?.inverse == 0)  // RacingCover.folder
  }

  @Test func everyAttributeTypeIsDescribed() throws {
    let container = try ObjectContainer(for: Sample.self, store: InMemoryStore())
    let types = container.schema.entities[0].properties.compactMap { $0.attribute?.type }
    #expect(
      types == [
        .bool, .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64,
        .double, .float, .string, .date, .data, .uuid, .url, .string, .int, .codable, .codable,
      ])
    let optional = container.schema.entities[0].properties.map { $0.attribute?.isOptional ?? false }
    #expect(optional.suffix(4) == [true, true, false, true])
  }

  @Test func anUnsupportedAttributeTypeNamesClassAndProperty() {
    let error = #expect(throws: ObjectGraphError.self) {
      try ObjectContainer(for: Unsupported.self, store: InMemoryStore())
    }
    #expect(error?.code == .invalidModel)
    #expect(error?.entity == "Unsupported")
    #expect(error?.property == "opaque")
  }

  @Test func mismatchedInversesAreRejected() {
    let error = #expect(throws: ObjectGraphError.self) {
      try ObjectContainer(for: Left.self, store: InMemoryStore())
    }
    #expect(error?.code == .invalidModel)
    #expect(error?.message.contains("inverse") == true)
  }

  @Test func anInverseOnAnotherClassIsRejected() {
    let error = #expect(throws: ObjectGraphError.self) {
      try ObjectContainer(for: PointsElsewhere.self, store: InMemoryStore())
    }
    #expect(error?.entity == "PointsElsewhere")
    #expect(error?.property == "tag")
  }

  /// An entity is named as `String(describing:)` names its class: a nested class by its own
  /// name, not its enclosing type's or its module's.
  @Test func anEntityIsNamedAfterItsClass() throws {
    let container = try ObjectContainer(for: Catalog.Shelf.self, store: InMemoryStore())
    #expect(container.schema.entities.map(\.name) == ["Shelf"])
    #expect(container.schema.entities[0].name == String(describing: Catalog.Shelf.self))
  }

  @Test func twoEntitiesWithOneNameAreRejected() {
    let error = #expect(throws: ObjectGraphError.self) {
      try ObjectContainer(for: Tag.self, Duplicates.Tag.self, store: InMemoryStore())
    }
    #expect(error?.code == .invalidModel)
    #expect(error?.entity == "Tag")
  }

  @Test func aStoreOfAnotherSchemaIsRefused() throws {
    let store = InMemoryStore()
    let first = try ObjectContainer(for: Tag.self, store: store)
    first.close()
    let error = #expect(throws: ObjectGraphError.self) {
      try ObjectContainer(for: Box.self, store: store)
    }
    #expect(error?.code == .schemaMismatch)
    #expect(error?.message.contains("Box") == true)
  }

  @Test func defaultsAreNotEvaluatedWhenObjectsAreLoaded() throws {
    let store = InMemoryStore()
    let container = try ObjectContainer(for: Counted.self, store: store)
    let context = try ObjectContext(container)
    for _ in 0..<10 { context.insert(Counted()) }
    try context.save()
    let before = Counted.defaultsMade.withLock { $0 }
    let reopened = try ObjectContext(container)
    #expect(try reopened.fetchCount(FetchDescriptor<Counted>()) == 10)
    #expect(Counted.defaultsMade.withLock { $0 } == before)
  }
}

final class Counted: ManagedObject {
  static let defaultsMade = LockedBox(0)
  static func makeDefault() -> Int {
    defaultsMade.withLock { $0 += 1 }
    return 7
  }
  @Attribute var value = Counted.makeDefault()
}
