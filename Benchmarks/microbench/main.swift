import Foundation

// microbench: the hot paths of ObjectGraph, timed and with their heap allocations counted.
//
//   microbench [--roots R] [--filter TEXT[|TEXT...]] [--repetitions N]
//
// Fixtures are R workload trees (default 10: 10,110 boxes) in an InMemoryStore. Each
// benchmark runs N times (default 3) on a fresh fixture; the fastest run is shown. A filter
// runs the benchmarks whose name contains any of its texts (case-insensitive), `|` between
// them: `--filter ", saved|plain [Box]"` times the list edits and the plain-array work they
// are compared with.

var roots = 10
var filter: String?
var runner = MicroBenchmarkRunner()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
  switch argument {
  case "--roots": roots = arguments.popFirst().flatMap(Int.init) ?? roots
  case "--filter": filter = arguments.popFirst()
  case "--repetitions": runner.repetitions = arguments.popFirst().flatMap(Int.init) ?? 3
  default:
    print("usage: microbench [--roots R] [--filter TEXT] [--repetitions N]")
    exit(2)
  }
}

let counting = AllocationCounter.isActive
print(
  counting
    ? "allocations: counted by interposed malloc/calloc/realloc/posix_memalign/aligned_alloc"
    : "allocations: not counted (built without the microbench linker flags); times only")
if counting {
  print("kept B/op: growth of heap bytes in use (malloc_usable_size) while the fixture lives")
}
print(MicroTable.header(countingAllocations: counting))
var results: [MicroResult] = []
for benchmark in Cases.all(roots: roots)
where filter.map({
  $0.split(separator: "|").contains(where: benchmark.name.localizedCaseInsensitiveContains)
}) ?? true {
  do {
    let result = try runner.run(benchmark)
    results.append(result)
    print(MicroTable.row(result, countingAllocations: counting))
  } catch {
    print("\(benchmark.name): failed: \(error)")
  }
}
for line in ListGrowth.report(results) { print(line) }
