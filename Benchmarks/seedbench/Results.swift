import BenchmarkSupport
import Foundation

/// The measurements of one run, printed as the workload's JSON line.
struct SeedResult {
  var roots: Int
  var boxes: Int
  var buildSave = 0.0
  var open = 0.0
  var traverse = 0.0
  var reorder = 0.0
  var update = 0.0
  var cascadeDelete = 0.0
  var reopen = 0.0
  var checksumBuilt: UInt64 = 0
  var checksumFinal: UInt64 = 0
  var countFinal = 0
  var fileBytes = 0
  var peakResidentBytes = 0

  /// The JSON object of `WORKLOAD.md`, fields in the baseline's order, times in seconds.
  var jsonLine: String {
    let fields: [(String, String)] = [
      ("impl", "\"objectgraph\""), ("roots", "\(roots)"), ("boxes", "\(boxes)"),
      ("build_save", Self.time(buildSave)), ("open", Self.time(open)),
      ("traverse", Self.time(traverse)), ("reorder", Self.time(reorder)),
      ("update", Self.time(update)), ("cascade_delete", Self.time(cascadeDelete)),
      ("reopen", Self.time(reopen)), ("checksum_built", "\"\(Self.hex(checksumBuilt))\""),
      ("checksum_final", "\"\(Self.hex(checksumFinal))\""), ("count_final", "\(countFinal)"),
      ("file_bytes", "\(fileBytes)"), ("peak_rss_bytes", "\(peakResidentBytes)"),
    ]
    return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
  }

  /// A checksum as 16 lower-case hex digits.
  static func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }

  private static func time(_ seconds: Double) -> String {
    String(format: "%.6f", seconds)
  }
}

/// The expected results of `WORKLOAD.md` (from `reference.py`), for `--verify`.
struct ReferenceResult {
  var checksumBuilt: String
  var checksumFinal: String
  var countFinal: Int

  /// The table of `WORKLOAD.md`, by number of roots.
  static let table: [Int: ReferenceResult] = [
    10: ReferenceResult(
      checksumBuilt: "54769abbb0e63b96", checksumFinal: "ce4dbcac237db1b7", countFinal: 9_099),
    25: ReferenceResult(
      checksumBuilt: "a19a607de315f2c8", checksumFinal: "0e096a1effdcda4d", countFinal: 23_253),
    100: ReferenceResult(
      checksumBuilt: "f33e90e315f2bc59", checksumFinal: "28d957a0094d122c", countFinal: 90_990),
  ]

  /// Compares a run with the reference; returns the mismatches (empty when all match), or
  /// nil when there is no reference for the run's number of roots.
  static func mismatches(of result: SeedResult) -> [String]? {
    guard let expected = table[result.roots] else { return nil }
    var problems: [String] = []
    let built = SeedResult.hex(result.checksumBuilt)
    let final = SeedResult.hex(result.checksumFinal)
    if built != expected.checksumBuilt {
      problems.append("checksum_built \(built), expected \(expected.checksumBuilt)")
    }
    if final != expected.checksumFinal {
      problems.append("checksum_final \(final), expected \(expected.checksumFinal)")
    }
    if result.countFinal != expected.countFinal {
      problems.append("count_final \(result.countFinal), expected \(expected.countFinal)")
    }
    return problems
  }
}

/// Sub-phase timings, printed to standard error with `--breakdown`. Timings recorded under
/// one label add up (the 1,000 saves of the reorder phase show as one line).
struct PhaseBreakdown {
  /// Whether to keep the times (`--breakdown`); when not, ``time(_:_:)`` only runs its body,
  /// so the phases are measured without the bookkeeping (a dictionary lookup by label and two
  /// clock readings, about 2,000 instructions a call: a few percent of a durable reorder).
  let isEnabled: Bool
  private var labels: [String] = []
  private var totals: [String: (seconds: Double, count: Int)] = [:]

  init(isEnabled: Bool) {
    self.isEnabled = isEnabled
  }

  /// Runs `body`, adding how long it took to `label` when enabled.
  mutating func time<Result>(_ label: String, _ body: () throws -> Result) rethrows -> Result {
    guard isEnabled else { return try body() }
    let start = monotonicSeconds()
    let value = try body()
    let elapsed = monotonicSeconds() - start
    if let total = totals[label] {
      totals[label] = (total.seconds + elapsed, total.count + 1)
    } else {
      labels.append(label)
      totals[label] = (elapsed, 1)
    }
    return value
  }

  /// Prints every label's total (and count, when more than one) to standard error.
  func report() {
    for label in labels {
      let total = totals[label]!
      let count = total.count > 1 ? " (\(total.count)x)" : ""
      printError(
        "  " + (label + count).padding(toLength: 52, withPad: " ", startingAt: 0)
          + String(format: "%9.6f s", total.seconds))
    }
  }
}
