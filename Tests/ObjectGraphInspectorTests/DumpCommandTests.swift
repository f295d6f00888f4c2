import Foundation
import ObjectGraph
import Testing

@testable import ObjectGraphInspector

@Suite struct DumpCommandTests {
  /// The objects of a JSON dump, parsed back.
  private func objects(_ run: ToolRun) throws -> [[String: Any]] {
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
    return try #require(document["objects"] as? [[String: Any]])
  }

  @Test @MainActor func jsonDumpParsesBackWithValuesAndOrderedRelationships() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("items.ogstore")
    let expected = try Stores.items(at: url)

    let run = inspect("dump", url.path, "--format", "json")
    #expect(run.status == 0)
    let objects = try objects(run)
    #expect(objects.count == 7)
    let notesByID = Dictionary(
      uniqueKeysWithValues: objects.filter { $0["entity"] as? String == "Note" }.map {
        ($0["id"] as! Int, ($0["attributes"] as! [String: Any])["text"] as! String)
      })
    for item in objects where item["entity"] as? String == "Item" {
      let attributes = try #require(item["attributes"] as? [String: Any])
      let relationships = try #require(item["relationships"] as? [String: Any])
      let name = try #require(attributes["name"] as? String)
      let noteIDs = try #require(relationships["notes"] as? [Int])
      #expect(noteIDs.map { notesByID[$0] ?? "?" } == expected[name])
    }
    let first = try #require(
      objects.first { ($0["attributes"] as? [String: Any])?["count"] as? Int == 42 })
    let attributes = try #require(first["attributes"] as? [String: Any])
    #expect(attributes["name"] as? String == "First \"quoted\"\nline")
    #expect(attributes["rating"] as? Double == 4.5)
    #expect(attributes["flagged"] as? Bool == true)
    #expect(attributes["link"] as? String == "https://example.com/a?b=c")
    #expect(attributes["payload"] as? String == Data([0, 1, 2, 255]).base64EncodedString())
  }

  @Test @MainActor func jsonDumpIsWrittenObjectByObject() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    /// A stream that records each write.
    struct Recorder: TextOutputStream {
      var writes: [String] = []
      mutating func write(_ string: String) { writes.append(string) }
    }
    var output = Recorder()
    var errors = ""
    let status = DumpCommand(path: url.path, format: .json).run(
      output: &output, errorOutput: &errors)
    #expect(status == 0)
    #expect(output.writes.count >= 8)
    #expect(output.writes.allSatisfy { $0.utf8.count < 400 })
  }

  @Test @MainActor func textDumpShowsEachObjectWithItsValues() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    let run = inspect("dump", url.path, "--limit", "1")
    #expect(run.status == 0)
    let lines = run.output.split(separator: "\n").map(String.init)
    #expect(lines.count == 7)
    #expect(lines[0] == "Box #1")
    #expect(lines[2] == "  title: \"Inbox\"")
    #expect(lines[5] == "  parent: nil")
    #expect(lines[6] == "  children: [#4, #3]")
  }

  @Test @MainActor func textDumpShowsEveryTypeReadably() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("items.ogstore")
    try Stores.items(at: url)
    let run = inspect("dump", url.path, "--entity", "Item", "--limit", "1")
    #expect(
      run.output == """
        Item #1
          name: "First \\"quoted\\"\\nline"
          count: 42
          rating: 4.5
          flagged: true
          link: https://example.com/a?b=c
          payload: <4 bytes: 000102ff>
          notes: [#6, #3, #5]

        """)
  }

  @Test @MainActor func entityAndLimitSelectObjects() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("items.ogstore")
    try Stores.items(at: url)
    let notes = try objects(inspect("dump", url.path, "--entity", "Note", "--format=json"))
    #expect(notes.count == 5)
    #expect(notes.allSatisfy { $0["entity"] as? String == "Note" })
    #expect(try objects(inspect("dump", url.path, "--format", "json", "--limit", "0")).isEmpty)
    #expect(try objects(inspect("dump", url.path, "--format", "json", "--limit", "3")).count == 3)
  }

  @Test @MainActor func anUnknownEntityIsAUsageError() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("items.ogstore")
    try Stores.items(at: url)
    let run = inspect("dump", url.path, "--entity", "Box")
    #expect(run.status == InspectorError.Code.usage.rawValue)
    #expect(run.errorLines.count == 1)
    #expect(run.errors.contains("has no entity Box (its entities: Item, Note)"))
    #expect(run.output.isEmpty)
  }
}
