/// A store that can move the data it holds to another schema: what a container migrates
/// when its models changed (see ``SchemaMigrationPlan`` and ``LightweightMigration``'s rules
/// in the README's "Migration").
///
/// A container opens the store with its schema; when that throws
/// ``ObjectGraphError/Code/schemaMismatch``, it reads ``storedSchema()``, works out the
/// migration, and calls ``migrate(from:to:_:)`` with the change to make, which the store
/// applies all at once. Both built-in stores conform.
///
/// A conforming store MUST:
/// - leave its data as it was, readable with the stored schema, when ``migrate(from:to:_:)``
///   throws (whatever the step, a failing disk included);
/// - when it returns, hold exactly the objects `migrate` returned, written with the new
///   schema, and be open as after ``PersistentStore/open(schema:)`` with it;
/// - never delete the old data to recover: a durable store keeps it until the migrated
///   store has been opened once.
public protocol MigratableStore: PersistentStore {
  /// The schema the stored data was written with, or nil when the store holds none yet (a
  /// file not created). Reads without opening, locking or changing anything.
  ///
  /// - Throws: ``ObjectGraphError`` naming the store when it cannot be read.
  func storedSchema() throws -> Schema?

  /// Opens the store with the schema its data was written in, hands its contents to
  /// `migrate`, and replaces them with what that returns, written with `schema`, atomically
  /// (and durably, for a durable store). The store is then open with `schema`.
  ///
  /// - Throws: What `migrate` throws, or the store's ``ObjectGraphError``; the store is then
  ///   unchanged and not open.
  func migrate(
    from stored: Schema, to schema: Schema,
    _ migrate: (consuming StoreContents) throws -> StoreContents
  ) throws
}
