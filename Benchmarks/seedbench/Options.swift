import Foundation

/// The command line of `seedbench`.
///
/// ```
/// seedbench [--roots R] [--path FILE] [--verify] [--breakdown]
/// ```
struct Options {
  /// The number of root boxes, R (each with 1,011 boxes in its tree).
  var roots = 100
  /// The store file; by default a temporary file, removed at exit.
  var path = FileManager.default.temporaryDirectory
    .appendingPathComponent("seedbench-objectgraph-\(getpid()).ogstore").path
  /// Whether `path` is the default temporary file.
  var isTemporaryPath = true
  /// Compare checksums and final count with the reference table and fail on a mismatch.
  var verify = false
  /// Print a finer breakdown of each phase to standard error.
  var breakdown = false

  /// Parses the process's arguments, exiting with a usage message on an error.
  static func parse(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Options {
    var options = Options()
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
      switch argument {
      case "--roots":
        guard let value = remaining.popFirst().flatMap(Int.init), value > 0 else {
          usage("--roots needs a positive integer")
        }
        options.roots = value
      case "--path":
        guard let value = remaining.popFirst() else { usage("--path needs a file path") }
        options.path = value
        options.isTemporaryPath = false
      case "--verify":
        options.verify = true
      case "--breakdown":
        options.breakdown = true
      case "--help", "-h":
        usage(nil)
      default:
        usage("unknown argument \(argument)")
      }
    }
    return options
  }

  private static func usage(_ problem: String?) -> Never {
    if let problem { printError("seedbench: \(problem)") }
    printError("usage: seedbench [--roots R] [--path FILE] [--verify] [--breakdown]")
    exit(problem == nil ? 0 : 2)
  }
}

/// Writes a line to standard error.
func printError(_ line: String) {
  FileHandle.standardError.write(Data((line + "\n").utf8))
}
