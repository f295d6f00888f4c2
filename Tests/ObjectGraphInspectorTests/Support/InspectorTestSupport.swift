import Foundation
import ObjectGraph
import ObjectGraphInspector
import Testing

/// A fresh directory under the system's temporary directory, removed when released.
final class TemporaryDirectory: Sendable {
  /// The directory.
  let url: URL

  /// Creates a unique empty directory.
  init() throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("ObjectGraphInspectorTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }

  /// A path in the directory.
  func file(_ name: String) -> URL {
    url.appendingPathComponent(name)
  }
}

/// What one run of the tool wrote and returned.
struct ToolRun {
  var status: Int32
  var output: String
  var errors: String

  /// The lines of standard error.
  var errorLines: [Substring] { errors.split(separator: "\n") }
}

/// Runs the tool in process with `arguments`, capturing its streams.
func inspect(_ arguments: String...) -> ToolRun {
  var output = ""
  var errors = ""
  let status = Inspector.run(arguments: arguments, output: &output, errorOutput: &errors)
  return ToolRun(status: status, output: output, errors: errors)
}

/// The bytes of a file.
func contents(of url: URL) throws -> Data {
  try Data(contentsOf: url)
}

/// Replaces the bytes of a file.
func write(_ data: Data, to url: URL) throws {
  try data.write(to: url)
}

/// Stores the tests build through the public API.
@MainActor
enum Stores {
  /// The README's box tree, after one move and one re-parenting, saved in two saves:
  ///
  ///     Inbox: Write report, Call Ann
  ///     Projects: Garden: Plant tulips, Fix the fence, Buy milk
  ///
  /// - Returns: The titles of the tree as the model sees it, one `level title` per line.
  @discardableResult
  static func boxes(at url: URL) throws -> [String] {
    let container = try ObjectContainer(for: Box.self, storeURL: url)
    defer { container.close() }
    let context = container.mainContext
    let inbox = Box(title: "Inbox")
    context.insert(inbox)
    for title in ["Buy milk", "Call Ann", "Write report"] { _ = Box(title: title, parent: inbox) }
    let projects = Box(title: "Projects")
    context.insert(projects)
    let garden = Box(title: "Garden", parent: projects)
    for title in ["Plant tulips", "Fix the fence"] { _ = Box(title: title, parent: garden) }
    try context.save()
    inbox.children.move(fromOffsets: [2], toOffset: 0)
    inbox.children[1].parent = garden
    try context.save()
    return treeLines([inbox, projects])
  }

  /// The tree under `roots` as `tree` prints it with `--label title`.
  static func treeLines(_ roots: [Box]) -> [String] {
    var lines: [String] = []
    var stack = roots.reversed().map { ($0, 0) }
    while let (box, level) = stack.popLast() {
      lines.append(String(repeating: "  ", count: level) + "- \(box.title) (\(box.objectID!))")
      stack.append(contentsOf: box.children.reversed().map { ($0, level + 1) })
    }
    return lines
  }

  /// Items with ordered notes; returns each item's name and its notes' texts in order.
  @discardableResult
  static func items(at url: URL) throws -> [String: [String]] {
    let container = try ObjectContainer(for: Item.self, Note.self, storeURL: url)
    defer { container.close() }
    let context = container.mainContext
    let first = Item(name: "First \"quoted\"\nline")
    first.count = 42
    first.rating = 4.5
    first.flagged = true
    first.link = URL(string: "https://example.com/a?b=c")
    first.payload = Data([0, 1, 2, 255])
    context.insert(first)
    let second = Item(name: "Second")
    context.insert(second)
    for text in ["a", "b", "c", "d"] { first.notes.append(Note(text)) }
    second.notes.append(Note("only"))
    try context.save()
    first.notes.move(fromOffsets: [3], toOffset: 0)  // d a b c
    first.notes.remove(at: 2)  // d a c
    try context.save()
    return [
      first.name: first.notes.map(\.text), second.name: second.notes.map(\.text),
    ]
  }
}
