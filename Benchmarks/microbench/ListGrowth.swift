import Foundation

/// How each list edit's cost grows from a list of 1,000 children to one of 100,000, read
/// from the results of ``Cases/lists()``: the edit (in memory, saved) at both sizes and
/// their ratio; and for an edit whose array work grows with the list (a shift, a pass of the
/// predicate, a copy), the same beyond that work, timed on a plain `[Box]` of the same size
/// (``Cases/arrayWork``): the framework's bookkeeping, which must not grow.
@MainActor
enum ListGrowth {
  /// The report's lines; none unless both sizes of some edit ran.
  static func report(_ results: [MicroResult]) -> [String] {
    let nanoseconds = Dictionary(
      results.map { ($0.name, $0.nanoseconds) }, uniquingKeysWith: { first, _ in first })
    let small = Cases.label(1_000)
    let large = Cases.label(100_000)
    var lines: [String] = []
    for edit in Cases.listEditNames {
      guard let smallEdit = nanoseconds["list of \(small): \(edit), saved"],
        let largeEdit = nanoseconds["list of \(large): \(edit), saved"]
      else { continue }
      var line =
        MicroTable.pad(edit, 44, left: true) + microseconds(smallEdit) + microseconds(largeEdit)
        + ratio(largeEdit, smallEdit)
      if let work = Cases.arrayWork[edit],
        let smallWork = nanoseconds["plain [Box] of \(small): \(work)"],
        let largeWork = nanoseconds["plain [Box] of \(large): \(work)"]
      {
        line +=
          microseconds(smallWork) + microseconds(largeWork)
          + microseconds(smallEdit - smallWork) + microseconds(largeEdit - largeWork)
          + ratio(largeEdit - largeWork, smallEdit - smallWork)
      }
      lines.append(line)
    }
    guard !lines.isEmpty else { return [] }
    return [
      "",
      "list edits, saved, from \(small) to \(large) children (µs/op): the edit; a plain [Box]'s "
        + "own work in it; the edit beyond that work (n/a: no more than the array's work)",
      MicroTable.pad("edit", 44, left: true)
        + [
          (small, 10), (large, 10), ("ratio", 8), ("array", 10), ("array", 10), ("beyond", 10),
          ("beyond", 10), ("ratio", 8),
        ].map { MicroTable.pad($0, $1) }.joined(),
    ] + lines
  }

  private static func microseconds(_ nanoseconds: Double) -> String {
    MicroTable.pad(String(format: "%.1f", nanoseconds / 1_000), 10)
  }

  /// `large / small`, or "n/a" when either is not positive (an edit that costs no more
  /// than its array work, within the noise).
  private static func ratio(_ large: Double, _ small: Double) -> String {
    MicroTable.pad(large > 0 && small > 0 ? String(format: "%.2f×", large / small) : "n/a", 8)
  }
}
