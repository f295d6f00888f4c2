import BenchmarkSupport
import Foundation

/// One micro benchmark: a fixture, and an operation timed over many iterations.
///
/// `prepare` builds a fresh fixture (not timed) and returns the timed operation, which is
/// called `calls` times with the call number; each call performs `operationsPerCall`
/// operations (1 for a loop body, the batch size for a batch such as one save of many
/// objects). Results are per operation.
struct MicroBenchmark {
  typealias Operation = @MainActor (Int) throws -> Void

  let name: String
  let calls: Int
  let operationsPerCall: Int
  let prepare: @MainActor () throws -> Operation

  /// A benchmark whose operation runs `iterations` times.
  init(
    _ name: String, iterations: Int, prepare: @escaping @MainActor () throws -> Operation
  ) {
    self.name = name
    self.calls = iterations
    self.operationsPerCall = 1
    self.prepare = prepare
  }

  /// A benchmark whose operation runs once and does `operations` operations.
  init(
    _ name: String, batchOf operations: Int,
    prepare: @escaping @MainActor () throws -> Operation
  ) {
    self.name = name
    self.calls = 1
    self.operationsPerCall = operations
    self.prepare = prepare
  }

  var operations: Int { calls * operationsPerCall }
}

/// What one benchmark measured, per operation.
struct MicroResult {
  var name: String
  var operations: Int
  var nanoseconds: Double
  var allocations: Double
  var allocatedBytes: Double
  /// Heap bytes still in use after the timed run while its fixture is alive: what the
  /// operation keeps (for inserts and loads, the memory of a live object).
  var retainedBytes: Double
}

/// Runs benchmarks, each `repetitions` times on a fresh fixture, keeping the fastest run.
@MainActor
struct MicroBenchmarkRunner {
  var repetitions = 3

  func run(_ benchmark: MicroBenchmark) throws -> MicroResult {
    var best: MicroResult?
    for _ in 0..<repetitions {
      let result = try runOnce(benchmark)
      drainMainQueue()  // lets the run's fixture go
      if best == nil || result.nanoseconds < best!.nanoseconds { best = result }
    }
    return best!
  }

  private func runOnce(_ benchmark: MicroBenchmark) throws -> MicroResult {
    let operation = try benchmark.prepare()
    let before = AllocationCounter.read()
    let start = DispatchTime.now().uptimeNanoseconds
    for call in 0..<benchmark.calls { try operation(call) }
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    let after = AllocationCounter.read()
    let count = Double(benchmark.operations)
    return MicroResult(
      name: benchmark.name, operations: benchmark.operations,
      nanoseconds: Double(elapsed) / count, allocations: Double(after.calls - before.calls) / count,
      allocatedBytes: Double(after.bytes - before.bytes) / count,
      retainedBytes: Double(after.inUse - before.inUse) / count)
  }
}

/// Prints results as a table.
enum MicroTable {
  static func header(countingAllocations: Bool) -> String {
    let allocationColumns =
      countingAllocations
      ? pad("allocs/op", 11) + pad("bytes/op", 11) + pad("kept B/op", 11) : ""
    return pad("benchmark", 52, left: true) + pad("ops", 9) + pad("ns/op", 11) + allocationColumns
  }

  static func row(_ result: MicroResult, countingAllocations: Bool) -> String {
    let allocationColumns =
      countingAllocations
      ? pad(format(result.allocations, 2), 11) + pad(format(result.allocatedBytes, 0), 11)
        + pad(format(result.retainedBytes, 0), 11)
      : ""
    return pad(result.name, 52, left: true) + pad("\(result.operations)", 9)
      + pad(format(result.nanoseconds, 1), 11) + allocationColumns
  }

  private static func format(_ value: Double, _ decimals: Int) -> String {
    String(format: "%.\(decimals)f", value)
  }

  /// `text` padded with spaces to `width` characters, on the right when `left` (aligned
  /// left), else on the left.
  static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
    guard text.count < width else { return text + " " }
    let padding = String(repeating: " ", count: width - text.count)
    return left ? text + padding : padding + text
  }
}
