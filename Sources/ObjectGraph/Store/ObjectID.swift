/// The identity of a persistent object: stable across saves and reopens of its store.
///
/// An object receives its `ObjectID` when it is inserted into an ``ObjectContext``; the
/// number is never reused by the same store. Identifiers are cheap to copy, hash and send
/// between actors, so hand them to other contexts or tasks instead of the objects.
///
/// ```swift
/// context.insert(box)
/// let id = box.objectID!          // stable from now on
/// let same = context.object(with: id)
/// ```
public struct ObjectID: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
  /// The store-wide number of the object; numbers start at 1.
  public let rawValue: UInt64

  /// Creates an identifier from its store-wide number.
  public init(rawValue: UInt64) {
    self.rawValue = rawValue
  }

  public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
    lhs.rawValue < rhs.rawValue
  }

  public var description: String { "#\(rawValue)" }
}
