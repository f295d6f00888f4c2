import Foundation
import ObjectGraph
import Testing

@testable import ObjectGraphInspector

@Suite struct CompactCommandTests {
  @Test @MainActor func compactKeepsTheGraphIdenticalAndShrinksTheFile() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    do {
      let container = try ObjectContainer(for: Box.self, storeURL: url)
      defer { container.close() }
      let context = container.mainContext
      let garden = try #require(
        try context.fetch(FetchDescriptor<Box>()).first { $0.title == "Garden" })
      for round in 0..<20 {
        garden.detail = "edited \(round) " + String(repeating: "x", count: 40)
        garden.children.move(fromOffsets: [0], toOffset: 3)
        try context.save()
      }
    }
    let dumpBefore = inspect("dump", url.path)
    let jsonBefore = inspect("dump", url.path, "--format", "json")
    let sizeBefore = try contents(of: url).count

    let run = inspect("compact", url.path)
    #expect(run.status == 0)
    #expect(run.errors.isEmpty)
    let sizeAfter = try contents(of: url).count
    #expect(sizeAfter < sizeBefore)
    #expect(
      run.output
        == "Compacted \(url.path): \(sizeBefore) bytes before, \(sizeAfter) bytes after "
        + "(8 objects)\n")
    #expect(inspect("dump", url.path).output == dumpBefore.output)
    #expect(inspect("dump", url.path, "--format", "json").output == jsonBefore.output)
    #expect(
      inspect("info", url.path).output.contains(
        "Records:         1 since the file was created or last compacted"))
    #expect(inspect("verify", url.path).status == 0)
    #expect(!FileManager.default.fileExists(atPath: url.path + ".partial"))
  }

  @Test @MainActor func compactCutsOffATornTailAndSaysSo() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    try write(Data(try contents(of: url).dropLast(3)), to: url)
    let run = inspect("compact", url.path)
    #expect(run.status == 0)
    #expect(run.output.contains("cut off a torn tail"))
    #expect(inspect("verify", url.path).status == 0)
  }

  @Test func compactRefusesAMissingFileWithoutCreatingOne() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("missing.ogstore")
    let run = inspect("compact", url.path)
    #expect(run.status == InspectorError.Code.fileNotFound.rawValue)
    #expect(run.errorLines == ["objectgraph: error: \(url.path): no such file"])
    #expect(!FileManager.default.fileExists(atPath: url.path))
  }

  @Test @MainActor func compactLeavesANewerFormatUntouched() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    var bytes = try contents(of: url)
    bytes[8] = 9
    try write(bytes, to: url)
    let run = inspect("compact", url.path)
    #expect(run.status == InspectorError.Code.unsupportedFormat.rawValue)
    #expect(run.errorLines.count == 1)
    #expect(try contents(of: url) == bytes)
  }
}
