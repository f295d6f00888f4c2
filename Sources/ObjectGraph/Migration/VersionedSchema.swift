extension Schema {
  /// A version of an app's schema, as a ``VersionedSchema`` names it (SwiftData's
  /// `Schema.Version`): compared by major, then minor, then patch number.
  ///
  /// ```swift
  /// static let versionIdentifier = Schema.Version(2, 0, 0)
  /// ```
  public struct Version: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int

    /// Creates a version, as in `Schema.Version(1, 0, 0)`.
    public init(_ major: Int, _ minor: Int, _ patch: Int) {
      self.major = major
      self.minor = minor
      self.patch = patch
    }

    public static func < (lhs: Version, rhs: Version) -> Bool {
      (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    public var description: String { "\(major).\(minor).\(patch)" }
  }
}

/// One version of an app's models, in SwiftData's shape: a type (usually an `enum` with the
/// version's model classes nested in it) that names its version and lists its models.
///
/// ```swift
/// enum AnimalsV1: VersionedSchema {
///   static let versionIdentifier = Schema.Version(1, 0, 0)
///   static var models: [ManagedObject.Type] { [Animal.self] }
///
///   final class Animal: ManagedObject {
///     @Attribute var name = ""
///   }
/// }
/// ```
///
/// Each version's classes are their own types; their entity names are the classes' names
/// (`Animal` in every version), which is what the store records. Pass the versions to the
/// container in a ``SchemaMigrationPlan``.
public protocol VersionedSchema {
  /// The version, recorded in the store with its schema.
  static var versionIdentifier: Schema.Version { get }
  /// The model classes of this version; the classes their relationships reach are
  /// included.
  static var models: [ManagedObject.Type] { get }
}

/// How a store moves from each version of an app's models to the next (SwiftData's
/// `SchemaMigrationPlan`): the versions, oldest first, and a stage between each two.
///
/// ```swift
/// enum AnimalsMigrationPlan: SchemaMigrationPlan {
///   static var schemas: [any VersionedSchema.Type] { [AnimalsV1.self, AnimalsV2.self] }
///   static var stages: [MigrationStage] {
///     [.lightweight(fromVersion: AnimalsV1.self, toVersion: AnimalsV2.self)]
///   }
/// }
///
/// let container = try ObjectContainer(
///   for: AnimalsV2.Animal.self, migrationPlan: AnimalsMigrationPlan.self,
///   configurations: ModelConfiguration(url: url))
/// ```
///
/// The container finds the stored version among ``schemas`` (by the version the store
/// records, or, for a store written without one, by its entities), then runs the stages
/// from it to the last version in order, in memory, and writes the result once. Two
/// consecutive versions without a stage between them migrate lightweight. A store of a
/// version newer than the last is refused untouched
/// (``ObjectGraphError/Code/newerSchemaVersion``).
public protocol SchemaMigrationPlan {
  /// The versions, oldest first; the last one's models are the container's.
  static var schemas: [any VersionedSchema.Type] { get }
  /// The stages between consecutive versions.
  static var stages: [MigrationStage] { get }
}

/// One step of a ``SchemaMigrationPlan``, from a version to the next.
public enum MigrationStage {
  /// A migration the framework infers from the two schemas (see the README's "Migration"
  /// for the rules): properties added, removed or renamed (`originalName:`), optionality,
  /// unique and index flags, delete rules, numbers widened, entities added or removed.
  case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
  /// The inferred migration with code around it: `willMigrate` gets a context of the old
  /// version's models on the stored objects, before the inferred step; `didMigrate` a
  /// context of the new version's models after it. Each may fetch, change, insert and
  /// delete objects; what its context holds when it returns is kept (saving, as SwiftData
  /// code does, is allowed and keeps nothing more). The stages' changes are written to the
  /// store together, once, after the last stage.
  case custom(
    fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
    willMigrate: ((ObjectContext) throws -> Void)?, didMigrate: ((ObjectContext) throws -> Void)?)

  /// Code that sees the stored objects in the old version's models and writes them in the
  /// new version's, both at once (see ``MigrationContext``): split an entity, turn a to-one
  /// into a to-many, fill a new required attribute from others. The changes between the two
  /// versions that a lightweight migration would refuse are left to this code: such a
  /// property starts empty in the new objects (see the README's "Migration").
  ///
  /// ```swift
  /// .custom(fromVersion: PeopleV1.self, toVersion: PeopleV2.self) { migration in
  ///   for old in try migration.old.fetch(FetchDescriptor<PeopleV1.Person>()) {
  ///     let person = try migration.migrated(old, as: PeopleV2.Person.self)
  ///     person.address = PeopleV2.Address(street: old.street, city: old.city)
  ///   }
  /// }
  /// ```
  case transform(
    fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
    migrate: (MigrationContext) throws -> Void)

  /// The version the stage starts from.
  var fromVersion: any VersionedSchema.Type {
    switch self {
    case .lightweight(let from, _), .custom(let from, _, _, _), .transform(let from, _, _): from
    }
  }

  /// The version the stage ends at.
  var toVersion: any VersionedSchema.Type {
    switch self {
    case .lightweight(_, let to), .custom(_, let to, _, _), .transform(_, let to, _): to
    }
  }

  /// A stage of code that sees the old and the new objects at once
  /// (``transform(fromVersion:toVersion:migrate:)``), written as SwiftData's custom stages
  /// are.
  public static func custom(
    fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
    migrate: @escaping (MigrationContext) throws -> Void
  ) -> MigrationStage {
    .transform(fromVersion: fromVersion, toVersion: toVersion, migrate: migrate)
  }
}

/// What a custom stage's `migrate` code works with: the stored objects in the old version's
/// models (``old``) and the same objects in the new version's (``new``), as the inferred part
/// of the migration made them, under the same ``ObjectID``s.
///
/// Read from ``old`` and write to ``new``: what ``new`` holds when the code returns is what
/// the store keeps (saved for you; changes made in ``old`` are dropped). Objects of entities
/// the new version removed are only in ``old``; new ones are inserted into ``new``.
public struct MigrationContext {
  /// The stored objects in the old version's models, loaded the first time the code asks
  /// for them (code that only writes ``new`` loads them never).
  ///
  /// - Throws: ``ObjectGraphError`` when the old objects cannot be loaded.
  public var old: ObjectContext {
    get throws { try oldContext.context() }
  }
  /// The objects in the new version's models.
  public let new: ObjectContext

  /// The old version's context, made on first use.
  let oldContext: LazyContext

  init(old: LazyContext, new: ObjectContext) {
    oldContext = old
    self.new = new
  }

  /// The new version's object that `object`, an object of ``old``, became.
  ///
  /// - Throws: ``ObjectGraphError/Code/migrationFailed`` naming the object when its entity
  ///   was removed or is not `T`.
  /// - Complexity: O(1).
  public func migrated<T: ManagedObject>(_ object: ManagedObject, as type: T.Type = T.self) throws
    -> T
  {
    guard let id = object.objectID, let migrated = new.object(with: id) as? T else {
      throw ObjectGraphError(
        .migrationFailed,
        "object \(object.objectID?.description ?? "(new)") of \(Swift.type(of: object)) is no "
          + "\(T.self) in the new version", objectID: object.objectID)
    }
    return migrated
  }
}

/// A context made the first time it is asked for.
final class LazyContext {
  private let make: () throws -> ObjectContext
  /// The context, once made.
  private(set) var made: ObjectContext?

  init(_ make: @escaping () throws -> ObjectContext) {
    self.make = make
  }

  func context() throws -> ObjectContext {
    if let made { return made }
    let context = try make()
    made = context
    return context
  }
}
