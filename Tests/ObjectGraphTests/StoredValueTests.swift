import Foundation
import Testing

@testable import ObjectGraph

/// A gauge's settings, stored as a `Codable` value.
struct GaugeSettings: Codable, Equatable {
  var unit: String
  var precision: Int
}

/// A model with attributes of several kinds, whose stored values are checked when loaded.
final class Gauge: ManagedObject {
  @Attribute var enabled = false
  @Attribute var level: Int8 = 0
  @Attribute var label = ""
  @Attribute var reading: Double? = nil
  @Attribute var settings = GaugeSettings(unit: "mm", precision: 1)
}

/// No stored value traps when the app reads it: a value that does not fit its attribute, or
/// `Codable` bytes the app's type no longer decodes, is an error naming the object, entity
/// and property when the store is loaded, on every store.
@MainActor @Suite struct StoredValueTests {
  static let schema: Schema = {
    let container = try! ObjectContainer(for: Gauge.self, store: InMemoryStore())
    return container.schema
  }()

  /// The stored values of a gauge that fit: enabled, level, label, reading, settings.
  static let fitting: [PersistentValue] = [
    .bool(true), .int(-7), .string("north"), .null,
    .data(try! JSONEncoder().encode(GaugeSettings(unit: "cm", precision: 3))),
  ]

  /// Values that do not fit, with the property they are stored in.
  static let misfits: [(property: Int, value: PersistentValue, name: String)] = [
    (0, .int(57), "enabled"),
    (1, .int(300), "level"),
    (1, .string("high"), "level"),
    (2, .null, "label"),
    (2, .date(Date(timeIntervalSinceReferenceDate: 0)), "label"),
    (3, .string("1.5"), "reading"),
    (4, .uuid(UUID()), "settings"),
  ]

  enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    case inMemory, binary
    var testDescription: String { rawValue }
  }

  /// A container over a store holding one gauge with `values`.
  private func open(
    _ values: [PersistentValue], on kind: StoreKind, in directory: TemporaryDirectory
  )
    throws -> ObjectContainer
  {
    let gauge = ObjectSnapshot(id: ObjectID(rawValue: 1), entity: 0, values: values)
    switch kind {
    case .inMemory:
      return try ObjectContainer(
        for: Gauge.self,
        store: FixedContentsStore(
          contents: StoreContents(objects: [gauge], nextObjectNumber: 2)))
    case .binary:
      // The bytes a store of another app (or a damaged one) could hold: written directly.
      let url = directory.file("gauges.store")
      let header = try BinaryStoreHeader.encode(schema: Self.schema)
      let record = try RecordWriter.encodeSnapshot(
        [gauge], nextObjectNumber: 2, numbering: .positional)
      try writeFile(url, header + record.bytes)
      return try ObjectContainer(for: Gauge.self, storeURL: url)
    }
  }

  @Test(arguments: StoreKind.allCases)
  func fittingValuesLoadAndRead(_ kind: StoreKind) throws {
    let directory = try TemporaryDirectory()
    let container = try open(Self.fitting, on: kind, in: directory)
    let gauge = try #require(try container.mainContext.fetch(FetchDescriptor<Gauge>()).first)
    #expect(gauge.enabled && gauge.level == -7 && gauge.label == "north" && gauge.reading == nil)
    #expect(gauge.settings == GaugeSettings(unit: "cm", precision: 3))
  }

  @Test(arguments: StoreKind.allCases)
  func aValueThatDoesNotFitItsAttributeIsAnErrorNamingIt(_ kind: StoreKind) throws {
    for misfit in Self.misfits {
      let directory = try TemporaryDirectory()
      var values = Self.fitting
      values[misfit.property] = misfit.value
      let error = try #require(throws: ObjectGraphError.self) {
        _ = try open(values, on: kind, in: directory)
      }
      #expect(error.code == .corruptStore, "\(misfit.value) in \(misfit.name)")
      #expect(error.entity == "Gauge" && error.property == misfit.name)
      #expect(error.objectID == ObjectID(rawValue: 1))
      #expect(error.message.contains("holds") && error.message.contains(misfit.name))
    }
  }

  /// A header's absent value is checked as any stored value is: a record written before
  /// `level` was added takes the header's value for it, which does not fit an `Int8`.
  @Test func anAbsentValueThatDoesNotFitItsAttributeIsAnErrorNamingIt() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("gauges.store")
    var schema = Self.schema
    for (property, number) in [1, 5, 2, 3, 4].enumerated() {
      schema.entities[0].properties[property].number = number
    }
    schema.entities[0].properties[1].absentValue = RecordWriter.encodedValue(.int(300))
    schema.entities[0].lastPropertyNumber = 5
    var old = Self.fitting
    old.remove(at: 1)  // the run of four values a file had before `level`
    let record = try RecordWriter.encodeSnapshot(
      [ObjectSnapshot(id: ObjectID(rawValue: 1), entity: 0, values: old)], nextObjectNumber: 2,
      numbering: .positional)
    try writeFile(url, try BinaryStoreHeader.encode(schema: schema) + record.bytes)
    let error = try #require(throws: ObjectGraphError.self) {
      _ = try ObjectContainer(for: Gauge.self, storeURL: url)
    }
    #expect(error.code == .corruptStore && error.property == "level", "\(error)")
  }

  @Test(arguments: StoreKind.allCases)
  func codableBytesThatNoLongerDecodeAreAnErrorNamingTheProperty(_ kind: StoreKind) throws {
    let directory = try TemporaryDirectory()
    var values = Self.fitting
    values[4] = .data(Data(#"{"unit":"cm","digits":3}"#.utf8))  // an older shape
    let error = try #require(throws: ObjectGraphError.self) {
      _ = try open(values, on: kind, in: directory)
    }
    #expect(error.code == .schemaMismatch)
    #expect(error.entity == "Gauge" && error.property == "settings")
    #expect(error.objectID == ObjectID(rawValue: 1))
    #expect(error.message.contains("GaugeSettings"))
  }
}

/// Two versions of one model whose `Codable` attribute changed shape between them.
enum MeterV1 {
  struct Reading: Codable { var value: Int }
  final class Meter: ManagedObject {
    @Attribute var reading = Reading(value: 1)
  }
}

enum MeterV2 {
  struct Reading: Codable {
    var value: Double
    var unit: String?
  }
  final class Meter: ManagedObject {
    @Attribute var reading = Reading(value: 1, unit: nil)
  }
}

/// A `Codable` attribute's type is part of the schema: its shape is recorded, and a store
/// written with another shape is refused by name when opened, not read until it traps.
@MainActor @Suite struct CodableShapeTests {
  @Test func theSchemaRecordsACodableTypesNameAndShape() throws {
    let container = try ObjectContainer(for: Sample.self, store: InMemoryStore())
    let properties = container.schema.entities[0].properties
    let shape = { (name: String) in
      properties.first { $0.name == name }?.attribute?.codableType
    }
    #expect(shape("settings") == "Settings {labels: [String], volume: Int}")
    #expect(shape("optionalSettings") == "Settings {labels: [String], volume: Int}")
    #expect(shape("string") == nil)
    #expect(
      CodableShape.of(MeterV2.Reading.self) == "Reading {unit?: String, value: Double}")
  }

  @Test func aStoreWrittenWithAnotherShapeIsRefusedNamingTheProperty() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("meters.store")
    do {
      let container = try ObjectContainer(for: MeterV1.Meter.self, storeURL: url)
      container.mainContext.insert(MeterV1.Meter())
      try container.mainContext.save()
    }
    let error = try #require(throws: ObjectGraphError.self) {
      _ = try ObjectContainer(for: MeterV2.Meter.self, storeURL: url)
    }
    #expect(error.code == .migrationFailed && error.property == "reading")
    #expect(error.message.contains("reading holds another Codable type"))
    #expect(error.message.contains("Reading {value: Int}"))
    #expect(error.message.contains("Reading {unit?: String, value: Double}"))
    #expect(try ObjectContainer(for: MeterV1.Meter.self, storeURL: url).schema.entities.count == 1)
  }

  @Test func aStoreWrittenBeforeShapesWereRecordedOpens() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("gauges.store")
    var unshaped = StoredValueTests.schema
    for index in unshaped.entities[0].properties.indices {
      guard case .attribute(var attribute) = unshaped.entities[0].properties[index].kind else {
        continue
      }
      attribute.codableType = nil
      unshaped.entities[0].properties[index].kind = .attribute(attribute)
    }
    #expect(unshaped != StoredValueTests.schema, "the model's schema records a shape")
    let gauge = ObjectSnapshot(
      id: ObjectID(rawValue: 1), entity: 0, values: StoredValueTests.fitting)
    let header = try BinaryStoreHeader.encode(schema: unshaped)
    let record = try RecordWriter.encodeSnapshot(
      [gauge], nextObjectNumber: 2, numbering: .positional)
    try writeFile(url, header + record.bytes)
    let container = try ObjectContainer(for: Gauge.self, storeURL: url)
    let loaded = try container.mainContext.fetch(FetchDescriptor<Gauge>())
    #expect(loaded.map(\.settings) == [GaugeSettings(unit: "cm", precision: 3)])
  }
}

/// A store that holds fixed contents and accepts every save: what a store written by other
/// code could hand a container.
final class FixedContentsStore: PersistentStore, @unchecked Sendable {
  private let contents: StoreContents
  init(contents: StoreContents) { self.contents = contents }
  func open(schema: Schema) throws {}
  func load() throws -> StoreContents { contents }
  func save(_ changeset: Changeset) throws {}
  func close() {}
}
