import Foundation
import ObjectGraph

/// `objectgraph compact FILE`: rewrites the store file with only its live objects, in place
/// and atomically, and prints the size before and after.
///
/// The file is opened as an app opens it (`BinaryStore`, with the schema the file records),
/// so it takes the store's exclusive lock (a store an app has open is refused), cuts off a
/// torn tail as opening always does (and says so), and compacts by writing a new file beside
/// it and renaming it over the store: the path only ever names a complete file.
public struct CompactCommand: PathOnlyCommand {
  static let definition = CommandDefinition(
    name: "compact", abstract: "Compact a store file in place, atomically.",
    arguments: [("FILE", "The store file (locked and rewritten).")], options: [],
    discussion: """
      Writes the live objects to FILE.partial and renames it over FILE, as the store does
      when it compacts on its own; a crash leaves either the old file or the new one. Like
      an app opening the store, it first cuts off a torn tail, if any.
      """)

  /// The path of the store file.
  public var path: String

  /// Creates the command for the store file at `path`.
  public init(path: String) {
    self.path = path
  }

  public func execute(
    output: inout some TextOutputStream, errorOutput: inout some TextOutputStream
  ) throws(InspectorError) {
    let url = URL(fileURLWithPath: path)
    do {
      // Reading the header first also refuses a missing file, which opening would create.
      let header = try BinaryStoreHeader.read(from: url)
      let before = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
      let store = BinaryStore(url: url)
      try store.open(schema: header.schema)
      defer { store.close() }
      if let recovery = store.statistics.recovery {
        output.write("Opening \(path) \(recovery)\n")
      }
      try store.compact()
      let after = store.statistics.fileBytes
      output.write(
        "Compacted \(path): \(before) bytes before, \(after) bytes after "
          + "(\(store.statistics.objectCount) objects)\n")
    } catch let error as InspectorError {
      throw error
    } catch {
      throw InspectorError(error, file: url)
    }
  }
}
