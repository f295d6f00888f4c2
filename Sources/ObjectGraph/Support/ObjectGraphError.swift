import Foundation

/// The error every failing ObjectGraph API throws.
///
/// Match on ``code`` to handle a kind of failure; the ``message`` names what is concerned
/// (file, entity, property, object) for people to read, and its wording is not stable.
///
/// ```swift
/// do {
///   try context.save()
/// } catch let error as ObjectGraphError where error.code == .uniqueConstraint {
///   print(error.entity!, error.property!, error.message)
/// }
/// ```
public struct ObjectGraphError: Error, CustomStringConvertible, Sendable {
  /// A kind of failure that `catch` can match.
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// A model class cannot be persisted as declared (container creation).
    public static let invalidModel = Code(rawValue: "invalidModel")
    /// A container cannot be made with the configurations given (more than one, or a
    /// configuration's schema that is not the models' schema).
    public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
    /// An object is not of an entity of this container's schema.
    public static let unknownEntity = Code(rawValue: "unknownEntity")
    /// Two objects hold the same value of a unique attribute (save).
    public static let uniqueConstraint = Code(rawValue: "uniqueConstraint")
    /// A deleted object still has objects in a relationship whose delete rule is deny (save).
    public static let denyRule = Code(rawValue: "denyRule")
    /// An object would refer to an object that the save deletes (a delete rule of no
    /// action left the reference in place), so the store would not open (save).
    public static let danglingReference = Code(rawValue: "danglingReference")
    /// A to-many relationship holds fewer or more objects than its bounds allow (save).
    public static let countBounds = Code(rawValue: "countBounds")
    /// A new object was never given a value for a non-optional attribute declared without a
    /// default, or a required to-one relationship holds no object (save).
    public static let missingValue = Code(rawValue: "missingValue")
    /// A value could not be encoded or decoded (for example a `Codable` attribute).
    public static let invalidValue = Code(rawValue: "invalidValue")
    /// A predicate or sort descriptor could not be evaluated.
    public static let invalidFetch = Code(rawValue: "invalidFetch")
    /// The store's data is damaged or inconsistent.
    public static let corruptStore = Code(rawValue: "corruptStore")
    /// The store was written with a different schema.
    public static let schemaMismatch = Code(rawValue: "schemaMismatch")
    /// A store of another schema cannot be migrated to the container's: the change is not
    /// one a lightweight migration infers, stored values do not fit the new schema (unique
    /// values that repeat, missing required values), a migration stage threw, or the plan
    /// does not know the stored version. Nothing was changed.
    public static let migrationFailed = Code(rawValue: "migrationFailed")
    /// The store was written with a newer version of the schema than the container's
    /// migration plan knows; it was not changed.
    public static let newerSchemaVersion = Code(rawValue: "newerSchemaVersion")
    /// The store was written by a newer version of the format.
    public static let unsupportedFormat = Code(rawValue: "unsupportedFormat")
    /// The store is open elsewhere, in this process or another.
    public static let storeInUse = Code(rawValue: "storeInUse")
    /// The store is closed.
    public static let storeClosed = Code(rawValue: "storeClosed")
    /// Reading or writing the store's file failed. A save that throws it wrote nothing.
    public static let io = Code(rawValue: "io")
    /// A save changes what another context of the container saved meanwhile (see
    /// ``ObjectContext/save()``); nothing was written.
    public static let conflict = Code(rawValue: "conflict")
    /// A save failed in a way that could not be undone (a failed sync, then a failed
    /// repair): a reopen of the store may or may not show it. The store refuses further
    /// saves (``storeNeedsReopen``) until it is opened again, which tells which it was.
    public static let saveOutcomeUnknown = Code(rawValue: "saveOutcomeUnknown")
    /// The store refuses saves until it is opened again, after a save whose outcome is
    /// unknown or a directory sync that failed; the refused save wrote nothing.
    public static let storeNeedsReopen = Code(rawValue: "storeNeedsReopen")
  }

  /// The kind of failure.
  public var code: Code
  /// What went wrong, naming what is concerned. Not stable: do not parse it.
  public var message: String
  /// The entity concerned, if any.
  public var entity: String?
  /// The property concerned, if any.
  public var property: String?
  /// The object concerned, if any.
  public var objectID: ObjectID?
  /// The file concerned, if any.
  public var file: URL?
  /// The error that caused this one, if any.
  public var underlying: (any Error)?

  /// Creates an error.
  public init(
    _ code: Code, _ message: String, entity: String? = nil, property: String? = nil,
    objectID: ObjectID? = nil, file: URL? = nil, underlying: (any Error)? = nil
  ) {
    self.code = code
    self.message = message
    self.entity = entity
    self.property = property
    self.objectID = objectID
    self.file = file
    self.underlying = underlying
  }

  public var description: String {
    var text = "ObjectGraphError.\(code): \(message)"
    if let underlying { text += " (caused by: \(underlying))" }
    return text
  }
}
