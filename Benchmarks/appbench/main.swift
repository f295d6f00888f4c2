import Foundation

// appbench: the everyday workload of APPBENCH.md on ObjectGraph: queries, a wide list edited
// with a save each time, and (`--first-screen`, in a fresh process) the first screen. The
// last line printed is the run's JSON object; `--verify` checks it against the reference.

let options = Options.parse()
let mode = options.firstScreen ? "first screen" : "full run"
let line: String
let roots: Int
let problems: [String]?
do {
  if options.firstScreen {
    let result = try FirstScreen(options: options).run()
    (line, roots, problems) = (
      result.jsonLine, result.roots, ReferenceResult.mismatches(of: result)
    )
  } else {
    let result = try AppWorkload(options: options).run()
    (line, roots, problems) = (
      result.jsonLine, result.roots, ReferenceResult.mismatches(of: result)
    )
  }
} catch {
  printError("appbench: \(mode): \(error)")
  exit(1)
}
print(line)
if options.verify {
  guard let problems else {
    printError("appbench: cannot verify the \(mode): " + ReferenceResult.noReference(for: roots))
    exit(1)
  }
  if problems.isEmpty {
    printError("appbench: \(mode) verified against the reference for \(roots) roots")
  } else {
    for problem in problems { printError("appbench: MISMATCH \(problem)") }
    exit(1)
  }
}
