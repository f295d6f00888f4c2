import Foundation
import ObjectGraph

/// `objectgraph verify FILE`: walks every record and checksum of the file and the invariants
/// of the graph it holds, prints what it checked and the first problem with its byte offset,
/// and exits non-zero on a problem.
///
/// The exit status tells the problem apart: ``InspectorError/Code/damagedStore`` for damage
/// (header, record, or a broken graph invariant), ``InspectorError/Code/unsupportedFormat``
/// for a newer format, ``InspectorError/Code/tornTail`` for a file that ends in an
/// interrupted save but is whole before it.
public struct VerifyCommand: PathOnlyCommand {
  static let definition = CommandDefinition(
    name: "verify", abstract: "Check every record, checksum and graph invariant of a store file.",
    arguments: [("FILE", "The store file (opened read-only).")], options: [],
    discussion: """
      Checks, in order, stopping at the first problem: the header (magic, version, checksum,
      schema); every record's checksums, decoding and replay; then the graph: ids below the
      next object number, values of their declared types, unique values, references to
      existing objects of the right entity, ordered lists without duplicates, and every
      relationship matched by its inverse. The problem is printed with its byte offset (for
      a graph problem, the offset of the last record that wrote the objects concerned).
      """)

  /// The path of the store file.
  public var path: String

  /// Creates the command for the store file at `path`.
  public init(path: String) {
    self.path = path
  }

  public func execute(
    output: inout some TextOutputStream, errorOutput: inout some TextOutputStream
  ) throws(InspectorError) {
    let url = URL(fileURLWithPath: path)
    let report: BinaryStoreVerification
    do {
      report = try BinaryStoreReader.verify(fileAt: url)
    } catch {
      throw InspectorError(error, file: url)
    }
    output.write("Verifying \(path) (\(report.fileBytes) bytes)\n")
    let kind = report.problem?.kind
    if let version = report.formatVersion, let schema = report.schema {
      output.write(
        "  header:      format version \(version), \(report.headerBytes) bytes, checksum "
          + "matches, \(count(schema.entities.count, "entity", "entities"))\n")
      let changesets = report.recordCount - report.snapshotRecordCount
      output.write(
        "  records:     \(report.recordCount) (\(count(report.snapshotRecordCount, "snapshot")), "
          + "\(count(changesets, "changeset"))), \(count(report.checksumCount, "checksum")) "
          + "match, decoded and replayed"
          + (kind == .damagedRecord ? " before the damaged record" : "") + "\n")
    }
    if kind == nil || kind == .brokenInvariant || kind == .tornTail {
      let soFar = kind == .brokenInvariant ? " (before the problem)" : ""
      output.write(
        "  objects:     \(report.objectCount), ids below the next object number\(soFar)\n"
          + "  values:      \(report.attributeValueCount) of their declared types, "
          + "\(report.uniqueValueCount) of unique attributes distinct\(soFar)\n"
          + "  references:  \(report.referenceCount) to existing objects of the right entity"
          + "\(soFar)\n"
          + "  lists:       \(report.orderedListCount) ordered lists without duplicates\(soFar)\n"
          + "  inverses:    \(report.inverseCount) references matched by their inverse\(soFar)\n")
    }
    guard let problem = report.problem else {
      output.write("OK: no problem found\n")
      return
    }
    output.write("PROBLEM at byte offset \(problem.offset): \(problem.message)\n")
    let code: InspectorError.Code =
      switch problem.kind {
      case .tornTail: .tornTail
      case .unsupportedFormat: .unsupportedFormat
      case .damagedHeader, .damagedRecord, .brokenInvariant: .damagedStore
      }
    throw InspectorError(
      code, "\(url.path): \(problem.message) (at byte offset \(problem.offset))")
  }

  private func count(_ number: Int, _ noun: String, _ plural: String? = nil) -> String {
    "\(number) \(number == 1 ? noun : plural ?? noun + "s")"
  }
}
