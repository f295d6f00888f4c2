import Foundation

/// FNV-1a over `created` values, as `WORKLOAD.md` defines it.
struct CreatedHash {
  private(set) var value: UInt64 = 14_695_981_039_346_656_037

  /// Adds one date (its whole seconds since 1970).
  mutating func add(_ created: Date) {
    value = (value ^ UInt64(created.timeIntervalSince1970)) &* 1_099_511_628_211
  }
}

/// A checksum as 16 lower-case hex digits.
func hex(_ value: UInt64) -> String {
  let digits = String(value, radix: 16)
  return String(repeating: "0", count: 16 - digits.count) + digits
}

/// A time in seconds as the JSON line prints it.
private func time(_ seconds: Double) -> String {
  String(format: "%.6f", seconds)
}

/// Fields as one JSON object, in the given order.
private func jsonObject(_ fields: [(String, String)]) -> String {
  "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
}

/// The measurements of one full run, printed as the workload's JSON line.
struct AppResult {
  var roots: Int
  var boxes: Int
  var buildSave = 0.0
  var open = 0.0
  var qEqual = 0.0
  var qContains = 0.0
  var qRange = 0.0
  var qTop = 0.0
  var qPage = 0.0
  var qCompound = 0.0
  var wideBuild = 0.0
  var wideMove = 0.0
  var wideInsert = 0.0
  var wideDelete = 0.0
  var nEqual = 0
  var nContains = 0
  var nRange = 0
  var hTop: UInt64 = 0
  var hPage: UInt64 = 0
  var nCompound = 0
  var nWide = 0
  var hWide: UInt64 = 0
  var fileBytes = 0
  var peakResidentBytes = 0

  /// The JSON object of `APPBENCH.md`, fields in the baseline's order, times in seconds.
  var jsonLine: String {
    jsonObject([
      ("impl", "\"objectgraph\""), ("roots", "\(roots)"), ("boxes", "\(boxes)"),
      ("build_save", time(buildSave)), ("open", time(open)), ("q_equal", time(qEqual)),
      ("q_contains", time(qContains)), ("q_range", time(qRange)), ("q_top", time(qTop)),
      ("q_page", time(qPage)), ("q_compound", time(qCompound)),
      ("wide_build", time(wideBuild)), ("wide_move", time(wideMove)),
      ("wide_insert", time(wideInsert)), ("wide_delete", time(wideDelete)),
      ("n_equal", "\(nEqual)"), ("n_contains", "\(nContains)"), ("n_range", "\(nRange)"),
      ("h_top", "\"\(hex(hTop))\""), ("h_page", "\"\(hex(hPage))\""),
      ("n_compound", "\(nCompound)"), ("n_wide", "\(nWide)"), ("h_wide", "\"\(hex(hWide))\""),
      ("file_bytes", "\(fileBytes)"), ("peak_rss_bytes", "\(peakResidentBytes)"),
    ])
  }
}

/// The measurements of one first-screen run, printed as its JSON line.
struct FirstScreenResult {
  /// R, told by the store's boxes (N + 1 + W = 2,011 R + 1 after a full run).
  var roots: Int
  var boxes: Int
  var firstScreen = 0.0
  var hFirst: UInt64 = 0
  var fileBytes = 0
  var peakResidentBytes = 0

  /// The JSON object of `APPBENCH.md`'s first screen, times in seconds.
  var jsonLine: String {
    jsonObject([
      ("impl", "\"objectgraph\""), ("roots", "\(roots)"), ("boxes", "\(boxes)"),
      ("first_screen", time(firstScreen)), ("h_first", "\"\(hex(hFirst))\""),
      ("file_bytes", "\(fileBytes)"), ("peak_rss_bytes", "\(peakResidentBytes)"),
    ])
  }
}

/// The expected results of `APPBENCH.md` (from `reference_appbench.py`), for `--verify`.
///
/// `n_equal` is 1 and `n_wide` is 1,000 R for every R; the table holds the rest.
struct ReferenceResult {
  var nContains: Int
  var nRange: Int
  var hTop: String
  var hPage: String
  var nCompound: Int
  var hWide: String
  var hFirst: String

  /// The table of `APPBENCH.md`, by number of roots.
  static let table: [Int: ReferenceResult] = [
    10: ReferenceResult(
      nContains: 300, nRange: 2_528, hTop: "75cade40dd4b00cd", hPage: "db4cda3152c160fd",
      nCompound: 1_370, hWide: "9456591d873185c1", hFirst: "d162d5f40a45fd4b"),
    100: ReferenceResult(
      nContains: 3_991, nRange: 25_275, hTop: "129ff318960342f9", hPage: "dde08dc748d8258f",
      nCompound: 17_386, hWide: "e39c31813bf152dd", hFirst: "bdf2a576ac59526e"),
  ]

  /// Why a run cannot be verified: no reference for its number of roots.
  static func noReference(for roots: Int) -> String {
    "no reference exists for \(roots) roots (only "
      + table.keys.sorted().map(String.init).joined(separator: " and ")
      + "): verification needs the table; `python3 reference_appbench.py \(roots)` prints it"
  }

  /// Compares a full run with the reference; returns the mismatches (empty when all match),
  /// or nil when there is no reference for the run's number of roots.
  static func mismatches(of result: AppResult) -> [String]? {
    guard let expected = table[result.roots] else { return nil }
    var problems: [String] = []
    func check(_ name: String, _ found: String, _ wanted: String) {
      if found != wanted { problems.append("\(name) \(found), expected \(wanted)") }
    }
    check("n_equal", "\(result.nEqual)", "1")
    check("n_contains", "\(result.nContains)", "\(expected.nContains)")
    check("n_range", "\(result.nRange)", "\(expected.nRange)")
    check("h_top", hex(result.hTop), expected.hTop)
    check("h_page", hex(result.hPage), expected.hPage)
    check("n_compound", "\(result.nCompound)", "\(expected.nCompound)")
    check("n_wide", "\(result.nWide)", "\(1000 * result.roots)")
    check("h_wide", hex(result.hWide), expected.hWide)
    return problems
  }

  /// Compares a first-screen run with the reference, as the full run's.
  static func mismatches(of result: FirstScreenResult) -> [String]? {
    guard let expected = table[result.roots] else { return nil }
    let found = hex(result.hFirst)
    return found == expected.hFirst ? [] : ["h_first \(found), expected \(expected.hFirst)"]
  }
}
