import Foundation

/// One stored property value, as a store sees it: attributes as plain values, relationships
/// as object identifiers.
///
/// The schema says which case a property holds: an attribute of type ``AttributeType/string``
/// holds `.string` (or `.null` when optional and absent), a to-one relationship holds
/// `.reference` or `.null`, and a to-many relationship holds `.references` in the user's order.
/// Integers of every width are stored as `Int64` (unsigned ones by bit pattern), `Float` as
/// `Double`, and `Codable` values as their encoded `Data`.
public enum PersistentValue: Hashable, Sendable {
  case null
  case bool(Bool)
  case int(Int64)
  case double(Double)
  case string(String)
  case date(Date)
  case data(Data)
  case uuid(UUID)
  case url(URL)
  /// A to-one relationship to the object with this identifier.
  case reference(ObjectID)
  /// A to-many relationship: the related objects, in order.
  case references([ObjectID])
}

extension PersistentValue: CustomStringConvertible {
  public var description: String {
    switch self {
    case .null: "nil"
    case .bool(let value): "\(value)"
    case .int(let value): "\(value)"
    case .double(let value): "\(value)"
    case .string(let value): "\"\(value)\""
    case .date(let value): "\(value.timeIntervalSince1970)"
    case .data(let value): "<\(value.count) bytes>"
    case .uuid(let value): value.uuidString
    case .url(let value): value.absoluteString
    case .reference(let id): id.description
    case .references(let ids): "[" + ids.map(\.description).joined(separator: ", ") + "]"
    }
  }
}
