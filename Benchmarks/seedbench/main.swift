import BenchmarkSupport
import Foundation

// seedbench: the reference workload of WORKLOAD.md on ObjectGraph. The last line printed is
// the workload's JSON object; `--verify` checks it against the reference table.

let options = Options.parse()
let result: SeedResult
do {
  result = try SeedWorkload(options: options).run()
} catch {
  printError("seedbench: \(error)")
  if options.isTemporaryPath { removeStoreFiles(atPath: options.path) }
  exit(1)
}
if options.isTemporaryPath { removeStoreFiles(atPath: options.path) }
print(result.jsonLine)
if options.verify {
  if let problems = ReferenceResult.mismatches(of: result) {
    if problems.isEmpty {
      printError("seedbench: verified against the reference for \(options.roots) roots")
    } else {
      for problem in problems { printError("seedbench: MISMATCH \(problem)") }
      exit(1)
    }
  } else {
    printError("seedbench: no reference exists for \(options.roots) roots (only 10, 25, 100)")
  }
}
