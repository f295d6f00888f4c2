import Foundation

/// The command line of `appbench`.
///
/// ```
/// appbench [--roots R] [--path FILE] [--verify]
/// appbench --first-screen [--path FILE] [--verify]
/// ```
struct Options {
  /// The number of root boxes, R: N = 1,011 R boxes in trees, and W = 1,000 R children in
  /// the wide list.
  var roots = 100
  /// The store file. The full run leaves it in place for the first-screen run, so both use
  /// the same default (as the SQLite baseline does).
  var path = FileManager.default.temporaryDirectory
    .appendingPathComponent("appbench-objectgraph.ogstore").path
  /// Run the first screen (in this fresh process) on the store a full run left, instead of
  /// the full run.
  var firstScreen = false
  /// Compare the results with the reference table and fail on a mismatch.
  var verify = false

  /// Parses the process's arguments, exiting with a usage message on an error.
  static func parse(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Options {
    var options = Options()
    var rootsGiven = false
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
      switch argument {
      case "--roots":
        guard let value = remaining.popFirst().flatMap(Int.init), value > 0 else {
          usage("--roots needs a positive integer")
        }
        options.roots = value
        rootsGiven = true
      case "--path":
        guard let value = remaining.popFirst() else { usage("--path needs a file path") }
        options.path = value
      case "--first-screen":
        options.firstScreen = true
      case "--verify":
        options.verify = true
      case "--help", "-h":
        usage(nil)
      default:
        usage("unknown argument \(argument)")
      }
    }
    if options.firstScreen && rootsGiven {
      usage("--first-screen takes no --roots: the store's boxes tell R")
    }
    return options
  }

  private static func usage(_ problem: String?) -> Never {
    if let problem { printError("appbench: \(problem)") }
    printError("usage: appbench [--roots R] [--path FILE] [--verify]")
    printError("       appbench --first-screen [--path FILE] [--verify]")
    exit(problem == nil ? 0 : 2)
  }
}

/// Writes a line to standard error.
func printError(_ line: String) {
  FileHandle.standardError.write(Data((line + "\n").utf8))
}
