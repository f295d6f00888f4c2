import Foundation
import ObjectGraph

/// How the inspector shows stored values: as text for people and as JSON.
///
/// The attribute's declared type refines the stored value: unsigned integers are shown from
/// their bit pattern, a `Float` with its own shortest digits, a `Codable` value as the JSON it
/// was encoded as. Dates are ISO 8601 in UTC (with milliseconds when not whole seconds),
/// data is shown as its size and first bytes in hex (base64 in JSON).
enum ValueFormatter {
  private static let wholeSeconds = Date.ISO8601FormatStyle()
  private static let fractionalSeconds = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

  /// The value as text: strings quoted and escaped, references as `#id`.
  static func text(_ value: PersistentValue, type: AttributeType?) -> String {
    switch value {
    case .string(let string): string.debugDescription
    default: plain(value, type: type)
    }
  }

  /// The value as text with strings as they are (control characters escaped), for labels.
  static func plain(_ value: PersistentValue, type: AttributeType?) -> String {
    switch value {
    case .null: "nil"
    case .bool(let bool): "\(bool)"
    case .int(let number): integer(number, type: type)
    case .double(let number): type == .float ? "\(Float(number))" : "\(number)"
    case .string(let string):
      string.contains(where: { $0.isNewline || $0 == "\t" })
        ? String(string.debugDescription.dropFirst().dropLast()) : string
    case .date(let date): format(date)
    case .data(let data):
      if type == .codable, let json = codableJSON(data) { json } else { describe(data) }
    case .uuid(let uuid): uuid.uuidString
    case .url(let url): url.absoluteString
    case .reference(let id): id.description
    case .references(let ids): "[" + ids.map(\.description).joined(separator: ", ") + "]"
    }
  }

  /// The value as a JSON value.
  static func json(_ value: PersistentValue, type: AttributeType?) -> String {
    switch value {
    case .null: "null"
    case .bool(let bool): "\(bool)"
    case .int(let number): integer(number, type: type)
    case .double(let number):
      number.isFinite
        ? (type == .float ? "\(Float(number))" : "\(number)") : jsonString("\(number)")
    case .string(let string): jsonString(string)
    case .date(let date): jsonString(format(date))
    case .data(let data):
      if type == .codable, let json = codableJSON(data) {
        json
      } else {
        jsonString(data.base64EncodedString())
      }
    case .uuid(let uuid): jsonString(uuid.uuidString)
    case .url(let url): jsonString(url.absoluteString)
    case .reference(let id): "\(id.rawValue)"
    case .references(let ids): "[" + ids.map { "\($0.rawValue)" }.joined(separator: ", ") + "]"
    }
  }

  /// A JSON string literal.
  static func jsonString(_ string: String) -> String {
    var result = "\""
    result.reserveCapacity(string.utf8.count + 2)
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }

  private static func integer(_ number: Int64, type: AttributeType?) -> String {
    switch type {
    case .uint, .uint8, .uint16, .uint32, .uint64: "\(UInt64(bitPattern: number))"
    default: "\(number)"
    }
  }

  private static func format(_ date: Date) -> String {
    let seconds = date.timeIntervalSinceReferenceDate
    return seconds.rounded() == seconds
      ? date.formatted(wholeSeconds) : date.formatted(fractionalSeconds)
  }

  private static func describe(_ data: Data) -> String {
    let hex = data.prefix(16).map { byte in
      (byte < 16 ? "0" : "") + String(byte, radix: 16)
    }.joined()
    return "<\(data.count) bytes\(data.isEmpty ? "" : ": \(hex)")\(data.count > 16 ? "..." : "")>"
  }

  /// The encoded JSON of a `Codable` value, when it is valid JSON on one line.
  private static func codableJSON(_ data: Data) -> String? {
    guard (try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)) != nil,
      let text = String(data: data, encoding: .utf8), !text.contains(where: \.isNewline)
    else { return nil }
    return text
  }
}
