import Foundation

/// A fresh directory under the system's temporary directory (or another), removed when
/// released.
final class TemporaryDirectory: Sendable {
  /// The directory.
  let url: URL

  /// Creates a unique empty directory, under `parent` if given.
  init(under parent: URL? = nil) throws {
    url = (parent ?? FileManager.default.temporaryDirectory)
      .appendingPathComponent("ObjectGraphTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// The directory of an exit test's child process, named after the test process (its
  /// parent), which removes it afterwards (``removeExitTestDirectory()``): the child stops
  /// on purpose, before any `deinit` could.
  static func forExitTest() throws -> TemporaryDirectory {
    try TemporaryDirectory(url: exitTestURL(process: getppid()))
  }

  /// Removes what this process's exit tests left (``forExitTest()``).
  static func removeExitTestDirectory() {
    try? FileManager.default.removeItem(at: exitTestURL(process: getpid()))
  }

  private static func exitTestURL(process: pid_t) -> URL {
    FileManager.default.temporaryDirectory
      .appendingPathComponent("ObjectGraphTests-exit-\(process)", isDirectory: true)
  }

  private init(url: URL) throws {
    self.url = url
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }

  /// A path in the directory.
  func file(_ name: String) -> URL {
    url.appendingPathComponent(name)
  }

  /// The names of the files in the directory.
  var fileNames: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
  }
}
