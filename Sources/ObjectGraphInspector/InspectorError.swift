import Foundation
import ObjectGraph

/// The error every failing inspector command reports: one line on standard error, and an
/// exit status that tells the kind of failure apart.
///
/// Match on ``code`` (its ``Code/rawValue`` is the process's exit status); the ``message``
/// names the file and what is wrong for people to read, and its wording is not stable.
///
/// | status | code | meaning |
/// |---|---|---|
/// | 0 | — | success |
/// | 1 | ``Code/failure`` | any other failure (the file cannot be read or written) |
/// | 2 | ``Code/usage`` | bad arguments, or an entity or property the file does not have |
/// | 3 | ``Code/fileNotFound`` | there is no file at the path |
/// | 4 | ``Code/storeInUse`` | an app has the store open (it holds the store's lock) |
/// | 5 | ``Code/damagedStore`` | not a store file, or damaged (checksum, record or graph) |
/// | 6 | ``Code/unsupportedFormat`` | written by a newer format version |
/// | 7 | ``Code/tornTail`` | `verify` only: the file ends in a save a crash interrupted |
public struct InspectorError: Error, CustomStringConvertible, Sendable {
  /// A kind of failure; its raw value is the exit status.
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The process exit status for this kind of failure.
    public let rawValue: Int32

    /// Creates a code from an exit status.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Any other failure: the file cannot be read or written.
    public static let failure = Code(rawValue: 1)
    /// Bad arguments, or an entity or property that the file's schema does not have.
    public static let usage = Code(rawValue: 2)
    /// There is no file at the path.
    public static let fileNotFound = Code(rawValue: 3)
    /// An app has the store open: it holds the store file's exclusive lock.
    public static let storeInUse = Code(rawValue: 4)
    /// The file is not a store file, or it is damaged: a checksum, a record, or the graph.
    public static let damagedStore = Code(rawValue: 5)
    /// The file was written by a newer version of the format than this tool reads.
    public static let unsupportedFormat = Code(rawValue: 6)
    /// The file ends in a save that a crash interrupted (reported by `verify`; the app cuts
    /// it off when it next opens the store, and the other commands show the saves before it).
    public static let tornTail = Code(rawValue: 7)

    public var description: String {
      switch self {
      case .failure: "failure"
      case .usage: "usage"
      case .fileNotFound: "fileNotFound"
      case .storeInUse: "storeInUse"
      case .damagedStore: "damagedStore"
      case .unsupportedFormat: "unsupportedFormat"
      case .tornTail: "tornTail"
      default: "exit status \(rawValue)"
      }
    }
  }

  /// The kind of failure.
  public var code: Code
  /// What went wrong, naming the file; one line. Not stable: do not parse it.
  public var message: String
  /// The error that caused this one, if any.
  public var underlying: (any Error)?

  /// Creates an error.
  public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
    self.code = code
    self.message = message
    self.underlying = underlying
  }

  /// The inspector's error for an error thrown by ObjectGraph while working on `file`.
  init(_ error: any Error, file: URL) {
    guard let error = error as? ObjectGraphError else {
      self.init(.failure, "\(file.path): \(error)", underlying: error)
      return
    }
    let code: Code
    switch error.code {
    case .io where (error.underlying as? POSIXError)?.code == .ENOENT:
      self.init(.fileNotFound, "\(file.path): no such file", underlying: error)
      return
    case .storeInUse:
      self.init(
        .storeInUse,
        "\(file.path): the store is in use: an app has it open (close the app and try again)",
        underlying: error)
      return
    case .corruptStore: code = .damagedStore
    case .unsupportedFormat: code = .unsupportedFormat
    default: code = .failure
    }
    // ObjectGraph's messages about a file start with its path already.
    let message =
      error.message.hasPrefix(file.path) ? error.message : "\(file.path): \(error.message)"
    self.init(code, message, underlying: error)
  }

  public var description: String { "InspectorError.\(code): \(message)" }
}
