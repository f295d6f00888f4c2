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
