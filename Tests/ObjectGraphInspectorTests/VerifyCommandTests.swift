import Foundation
import Testing

@testable import ObjectGraph
@testable import ObjectGraphInspector

@Suite struct VerifyCommandTests {
  /// A box store written in two saves; returns the file offset of the second save's record.
  @MainActor @discardableResult
  private func twoSaves(at url: URL) throws -> Int {
    do {
      let container = try ObjectContainer(for: Box.self, storeURL: url)
      defer { container.close() }
      let inbox = Box(title: "Inbox")
      container.mainContext.insert(inbox)
      for title in ["A", "B", "C"] { _ = Box(title: title, parent: inbox) }
      try container.mainContext.save()
    }
    let secondRecord = try contents(of: url).count
    let container = try ObjectContainer(for: Box.self, storeURL: url)
    defer { container.close() }
    let inbox = try #require(
      try container.mainContext.fetch(FetchDescriptor<Box>()).first { $0.title == "Inbox" })
    inbox.children.move(fromOffsets: [0], toOffset: 3)
    inbox.title = "Inbox, renamed"
    try container.mainContext.save()
    return secondRecord
  }

  private func expectProblem(
    _ run: ToolRun, code: InspectorError.Code, offset: Int, _ text: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(run.status == code.rawValue, sourceLocation: sourceLocation)
    #expect(
      run.output.contains("PROBLEM at byte offset \(offset): "), "\(run.output)",
      sourceLocation: sourceLocation)
    #expect(run.output.contains(text), "\(run.output)", sourceLocation: sourceLocation)
    #expect(run.errorLines.count == 1, sourceLocation: sourceLocation)
    #expect(
      run.errors.contains("(at byte offset \(offset))"), "\(run.errors)",
      sourceLocation: sourceLocation)
  }

  @Test @MainActor func aWholeStorePassesAndSaysWhatWasChecked() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    let run = inspect("verify", url.path)
    #expect(run.status == 0)
    #expect(run.errors.isEmpty)
    #expect(run.output.contains("records:     2 (1 snapshot, 1 changeset), 5 checksums match"))
    #expect(run.output.contains("objects:     8,"))
    #expect(run.output.contains("references:  12 to existing objects of the right entity"))
    #expect(run.output.contains("inverses:    12 references matched by their inverse"))
    #expect(run.output.hasSuffix("OK: no problem found\n"))
  }

  @Test @MainActor func aFlippedByteMidFileIsDamageAtItsRecord() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    let second = try twoSaves(at: url)
    let header = try BinaryStoreHeader.read(from: url)
    var bytes = try contents(of: url)
    bytes[(header.byteCount + second) / 2] ^= 0x10
    try write(bytes, to: url)
    expectProblem(
      inspect("verify", url.path), code: .damagedStore, offset: header.byteCount,
      "record checksum mismatch")
    #expect(try contents(of: url) == bytes)
  }

  @Test @MainActor func aTruncatedTailIsReportedAtTheInterruptedSave() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    let second = try twoSaves(at: url)
    let bytes = try contents(of: url).dropLast(5)
    try write(Data(bytes), to: url)
    let run = inspect("verify", url.path)
    expectProblem(run, code: .tornTail, offset: second, "torn save")
    #expect(run.output.contains("objects:     4,"))
    #expect(try contents(of: url) == Data(bytes))
  }

  /// A store that was not closed (a crash, or a copy taken while it was open) ends in the
  /// zero bytes its saves reserved for the next ones: nothing to report.
  @Test @MainActor func roomLeftAfterTheLastSaveIsNoProblem() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try twoSaves(at: url)
    let bytes = try contents(of: url) + Data(repeating: 0, count: 20_000)
    try write(bytes, to: url)
    let run = inspect("verify", url.path)
    #expect(run.status == 0, "\(run.output)")
    #expect(run.output.hasSuffix("OK: no problem found\n"))
    #expect(try contents(of: url) == bytes, "verifying changes nothing")
  }

  @Test @MainActor func wrongMagicIsDamageAtByteZero() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try twoSaves(at: url)
    var bytes = try contents(of: url)
    bytes[0] = 0x7F
    try write(bytes, to: url)
    expectProblem(inspect("verify", url.path), code: .damagedStore, offset: 0, "wrong magic")
  }

  @Test @MainActor func aNewerVersionIsUnsupportedAtTheVersionField() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try twoSaves(at: url)
    var bytes = try contents(of: url)
    bytes[8] = UInt8(BinaryFormat.currentVersion + 1)
    try write(bytes, to: url)
    expectProblem(
      inspect("verify", url.path), code: .unsupportedFormat, offset: 8,
      "format version \(BinaryFormat.currentVersion + 1)")
    let info = inspect("info", url.path)
    #expect(info.status == InspectorError.Code.unsupportedFormat.rawValue)
    #expect(info.errorLines.count == 1)
    #expect(info.errors.contains("newer"))
  }

  /// Saves a changeset that breaks a graph invariant through the store's public API.
  @MainActor
  private func breakGraph(_ change: (Schema) -> PropertyChange, objectNumber: UInt64)
    throws -> (URL, TemporaryDirectory, Int)
  {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    let offset = try contents(of: url).count
    let schema = try BinaryStoreHeader.read(from: url).schema
    // A store refuses to save a broken graph: the record is appended as other code could.
    let record = try RecordWriter.encode(
      Changeset(
        updated: [
          ObjectUpdate(id: ObjectID(rawValue: objectNumber), entity: 0, changes: [change(schema)])
        ], nextObjectNumber: 1), numbering: try FileNumbering(schema))
    try (try contents(of: url) + record.bytes).write(to: url)
    return (url, directory, offset)
  }

  private static func property(_ name: String, _ schema: Schema) -> Int {
    schema.entities[0].propertyIndex(named: name)!
  }

  @Test @MainActor func brokenGraphInvariantsAreDamageAtTheRecordThatWroteThem() throws {
    let cases: [(UInt64, (Schema) -> PropertyChange, String)] = [
      (
        2,
        {
          .init(property: Self.property("parent", $0), kind: .set(.reference(.init(rawValue: 999))))
        },
        "Box #2.parent refers to #999, which does not exist"
      ),
      (
        2,
        {
          .init(property: Self.property("parent", $0), kind: .set(.reference(.init(rawValue: 1))))
        },
        "Box #6.children lists #2, but #2.parent is #1, not #6"
      ),
      (
        1,
        {
          .init(
            property: Self.property("children", $0),
            kind: .set(.references([.init(rawValue: 4), .init(rawValue: 4)])))
        },
        "Box #1.children lists #4 twice"
      ),
      (
        1, { .init(property: Self.property("title", $0), kind: .set(.int(5))) },
        "Box #1.title holds 5, which is not a value of type string"
      ),
      (
        3, { .init(property: Self.property("parent", $0), kind: .set(.null)) },
        "Box #1.children lists #3, but #3.parent is nil, not #1"
      ),
    ]
    for (number, change, message) in cases {
      let (url, directory, offset) = try breakGraph(change, objectNumber: number)
      expectProblem(inspect("verify", url.path), code: .damagedStore, offset: offset, message)
      withExtendedLifetime(directory) {}
    }
  }

  @Test @MainActor func aParentMissingFromItsListIsFound() throws {
    // #7 claims #1 as its parent while only #6 lists it: found by counting.
    let (url, directory, offset) = try breakGraph(
      { schema in
        .init(
          property: Self.property("children", schema),
          kind: .set(.references([.init(rawValue: 8), .init(rawValue: 2)])))
      }, objectNumber: 6)
    expectProblem(
      inspect("verify", url.path), code: .damagedStore, offset: offset,
      "Box #7.parent is #6, but #6.children does not list #7")
    withExtendedLifetime(directory) {}
  }
}
