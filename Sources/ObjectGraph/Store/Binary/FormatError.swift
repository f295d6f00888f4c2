import Foundation

/// A problem found while reading a store file, at a byte offset.
///
/// Internal to the binary store: ``BinaryStore`` turns it into an ``ObjectGraphError`` that
/// names the file.
struct FormatError: Error {
  /// How the problem is reported.
  enum Kind {
    /// The bytes are damaged or not of this format.
    case corrupt
    /// The file was written by a newer version of the format.
    case unsupportedVersion
  }

  /// How the problem is reported.
  var kind: Kind = .corrupt
  /// The byte offset in the file where the problem was found.
  var offset: Int
  /// What is wrong.
  var message: String

  /// The public error for this problem in the file at `url`.
  func error(file url: URL) -> ObjectGraphError {
    ObjectGraphError(
      kind == .corrupt ? .corruptStore : .unsupportedFormat,
      "\(url.path): \(message) (at byte offset \(offset))", file: url)
  }
}
