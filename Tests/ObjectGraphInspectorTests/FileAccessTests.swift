import Foundation
import ObjectGraph
import Testing

@testable import ObjectGraphInspector

/// Missing, locked and damaged files: one line on standard error, a distinct exit status,
/// and never a write to a file the tool was asked only to read.
@Suite struct FileAccessTests {
  private static let readCommands: [[String]] = [
    ["info"], ["dump"], ["dump", "--format", "json"],
    ["tree", "--entity", "Box", "--children", "children"], ["verify"],
  ]

  private func run(_ command: [String], _ url: URL) -> ToolRun {
    var output = ""
    var errors = ""
    var arguments = command
    arguments.insert(url.path, at: 1)
    let status = Inspector.run(arguments: arguments, output: &output, errorOutput: &errors)
    return ToolRun(status: status, output: output, errors: errors)
  }

  @Test func aMissingFileIsReportedInOneLine() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("missing.ogstore")
    for command in Self.readCommands {
      let result = run(command, url)
      #expect(result.status == InspectorError.Code.fileNotFound.rawValue, "\(command)")
      #expect(result.errorLines == ["objectgraph: error: \(url.path): no such file"])
      #expect(result.output.isEmpty)
    }
  }

  @Test @MainActor func aStoreOpenInAnAppIsInUse() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    let before = try contents(of: url)
    do {
      let container = try ObjectContainer(for: Box.self, storeURL: url)
      defer { container.close() }
      for command in Self.readCommands + [["compact"]] {
        let result = run(command, url)
        #expect(result.status == InspectorError.Code.storeInUse.rawValue, "\(command)")
        #expect(result.errorLines.count == 1)
        #expect(result.errors.contains("in use"))
      }
      #expect(try contents(of: url) == before)
    }
    #expect(run(["info"], url).status == 0)
  }

  @Test @MainActor func anAppCannotOpenAStoreWhileTheToolReadsIt() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    let reader = try BinaryStoreReader(url: url)
    let error = try #require(throws: ObjectGraphError.self) {
      _ = try ObjectContainer(for: Box.self, storeURL: url)
    }
    #expect(error.code == .storeInUse)
    // Readers share the file.
    #expect(run(["verify"], url).status == 0)
    reader.close()
    _ = try ObjectContainer(for: Box.self, storeURL: url)
  }

  @Test @MainActor func readCommandsNeverChangeATornFile() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    let torn = Data(try contents(of: url).dropLast(7))
    try write(torn, to: url)
    for command in Self.readCommands {
      let result = run(command, url)
      if command == ["verify"] {
        #expect(result.status == InspectorError.Code.tornTail.rawValue)
      } else {
        #expect(result.status == 0, "\(command)")
        if command[0] != "info" {
          #expect(result.errorLines.count == 1)
          #expect(result.errors.hasPrefix("objectgraph: warning:"))
        }
      }
      #expect(try contents(of: url) == torn, "\(command)")
    }
    let info = run(["info"], url)
    #expect(info.output.contains("Torn tail:"))
    #expect(info.output.contains("Objects:         8"))
  }

  @Test @MainActor func aDamagedFileIsReportedWithItsOffsetByEveryCommand() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("boxes.ogstore")
    try Stores.boxes(at: url)
    let header = try BinaryStoreHeader.read(from: url)
    var bytes = try contents(of: url)
    bytes[header.byteCount + 12] ^= 1
    try write(bytes, to: url)
    for command in Self.readCommands + [["compact"]] {
      let result = run(command, url)
      #expect(result.status == InspectorError.Code.damagedStore.rawValue, "\(command)")
      #expect(result.errorLines.count == 1)
      #expect(result.errors.contains("at byte offset \(header.byteCount)"), "\(result.errors)")
    }
    #expect(try contents(of: url) == bytes)
  }

  @Test func anEmptyFileIsNotAStore() throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("empty.ogstore")
    try write(Data(), to: url)
    let result = run(["info"], url)
    #expect(result.status == InspectorError.Code.damagedStore.rawValue)
    #expect(result.errors.contains("empty"))
  }
}
