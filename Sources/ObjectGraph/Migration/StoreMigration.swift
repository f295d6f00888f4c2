import Foundation

/// How a container opens a store that holds data of another schema: the steps from the
/// stored schema to the container's, worked out before anything is read, then applied by the
/// store (``MigratableStore/migrate(from:to:_:)``) in one pass over its contents.
///
/// Without a plan the one step is a ``LightweightMigration`` from the stored schema to the
/// models'. With a ``SchemaMigrationPlan``, the stored version is found among the plan's
/// versions, and each pair of versions after it is a step: the plan's stage between them,
/// or a lightweight one when it has none.
struct StoreMigration {
  /// One version of a plan, with its schema and models.
  struct Version {
    var identifier: Schema.Version
    var schema: Schema
    var models: [EntityModel]
  }

  /// One step: a lightweight migration, with a custom stage's code around it.
  struct Step {
    var migration: LightweightMigration
    var willMigrate: ((ObjectContext) throws -> Void)?
    var didMigrate: ((ObjectContext) throws -> Void)?
    /// A custom stage's code that sees the old and new objects at once.
    var transform: ((MigrationContext) throws -> Void)?
    /// The new version's models (for the checks after a transform).
    var newModels: [EntityModel] = []
    /// The model classes of the step's old and new versions (for a custom stage's contexts).
    var oldTypes: [ManagedObject.Type]
    var newTypes: [ManagedObject.Type]
  }

  let steps: [Step]

  /// Opens `store` with `schema`, migrating its data first when it was written with another
  /// schema that a migration reaches.
  ///
  /// - Throws: The store's error when it cannot be opened for another reason, or when its
  ///   data is of another schema and the store cannot migrate;
  ///   ``ObjectGraphError/Code/migrationFailed`` or
  ///   ``ObjectGraphError/Code/newerSchemaVersion`` naming the store's file when no
  ///   migration reaches the schema (the store is then unchanged), or what a step threw.
  static func open(
    _ store: any PersistentStore, schema: Schema, models: [EntityModel],
    types: [ManagedObject.Type],
    plan: (any SchemaMigrationPlan.Type)?
  ) throws {
    do {
      try store.open(schema: schema)
      return
    } catch let error as ObjectGraphError where error.code == .schemaMismatch {
      guard let store = store as? any MigratableStore, let stored = try store.storedSchema()
      else { throw error }
      let migration: StoreMigration
      do {
        migration = try StoreMigration(
          from: stored, to: schema, models: models, types: types, plan: plan)
      } catch var failure as ObjectGraphError {
        if let file = (store as? BinaryStore)?.url, failure.file == nil {
          failure.message = "\(file.path): \(failure.message)"
          failure.file = file
        }
        throw failure
      }
      var recorded = schema
      recorded.history =
        (stored.history ?? []) + [
          MigrationRecord(
            fromVersion: stored.version, toVersion: schema.version, date: Date(),
            changes: SchemaDifference(stored: stored, requested: schema).changes)
        ]
      try store.migrate(from: stored, to: recorded) { contents in
        try migration.steps.reduce(contents) { contents, step in try step.apply(to: contents) }
      }
    }
  }

  /// Works out the steps from `stored` to `schema`.
  init(
    from stored: Schema, to schema: Schema, models: [EntityModel], types: [ManagedObject.Type],
    plan: (any SchemaMigrationPlan.Type)?
  ) throws {
    guard let plan else {
      // Models that share no entity with a store that has some are another app's, or the
      // wrong file: inferring would drop every stored object.
      if !stored.entities.isEmpty,
        !stored.entities.contains(where: { schema.entityIndex(named: $0.name) != nil })
      {
        throw ObjectGraphError(
          .schemaMismatch,
          "the store was written with another schema, which shares no entity with the "
            + "model: " + SchemaDifference(stored: stored, requested: schema).summary)
      }
      if let version = stored.version {
        throw ObjectGraphError(
          .migrationFailed,
          "the store holds version \(version) of its schema, and the model differs from it "
            + "(\(SchemaDifference(stored: stored, requested: schema).summary)): open it with "
            + "the app's migration plan")
      }
      steps = [
        Step(
          migration: try LightweightMigration(from: stored, to: schema, models: models),
          oldTypes: [], newTypes: types)
      ]
      return
    }
    let versions = try plan.schemas.map { versioned in
      let (entities, models) = try ObjectContainer.schema(for: versioned.models)
      return Version(
        identifier: versioned.versionIdentifier,
        schema: Schema(entities: entities.entities, version: versioned.versionIdentifier),
        models: models)
    }
    let known = versions.map(\.identifier.description).joined(separator: ", ")
    let start = try Self.storedVersion(of: stored, in: versions, known: known)
    var steps: [Step] = []
    var from = stored
    for next in start + 1..<versions.count {
      let old = versions[next - 1]
      let new = versions[next]
      let stage = plan.stages.first {
        $0.fromVersion.versionIdentifier == old.identifier
          && $0.toVersion.versionIdentifier == new.identifier
      }
      var transform: ((MigrationContext) throws -> Void)?
      if case .transform(_, _, let migrate) = stage { transform = migrate }
      var step = Step(
        migration: try LightweightMigration(
          from: from, to: next == versions.count - 1 ? schema : new.schema, models: new.models,
          leavingToStage: transform != nil),
        oldTypes: plan.schemas[next - 1].models, newTypes: plan.schemas[next].models)
      step.transform = transform
      step.newModels = new.models
      if case .custom(_, _, let willMigrate, let didMigrate) = stage {
        step.willMigrate = willMigrate
        step.didMigrate = didMigrate
      }
      steps.append(step)
      from = new.schema
    }
    if steps.isEmpty {
      // The store is the last version already, written without the version: record it.
      steps.append(
        Step(
          migration: try LightweightMigration(from: stored, to: schema, models: models),
          oldTypes: [], newTypes: types))
    }
    self.steps = steps
  }

  /// The index of the plan's version that `stored` is.
  private static func storedVersion(of stored: Schema, in versions: [Version], known: String)
    throws -> Int
  {
    guard let latest = versions.last else {
      throw ObjectGraphError(.migrationFailed, "the migration plan lists no schema")
    }
    if let version = stored.version {
      if version > latest.identifier {
        throw ObjectGraphError(
          .newerSchemaVersion,
          "the store holds version \(version) of its schema, newer than the app's last, "
            + "\(latest.identifier) (the plan knows \(known)): it was left untouched")
      }
      guard let index = versions.firstIndex(where: { $0.identifier == version }) else {
        throw ObjectGraphError(
          .migrationFailed,
          "the store holds version \(version) of its schema, which the migration plan does "
            + "not list (it knows \(known))")
      }
      guard versions[index].schema.matches(stored: stored) else {
        throw ObjectGraphError(
          .migrationFailed,
          "the store holds version \(version) of its schema, but its entities are not that "
            + "version's: "
            + SchemaDifference(stored: stored, requested: versions[index].schema).summary)
      }
      return index
    }
    // Written without a version: the latest version whose entities it has.
    var unversioned = stored
    unversioned.version = nil
    guard
      let index = versions.lastIndex(where: {
        Schema(entities: $0.schema.entities).matches(stored: unversioned)
      })
    else {
      throw ObjectGraphError(
        .migrationFailed,
        "the store's schema is none of the migration plan's versions (\(known)); against the "
          + "last: " + SchemaDifference(stored: stored, requested: latest.schema).summary)
    }
    return index
  }
}

extension StoreMigration.Step {
  /// The contents after this step: the custom stage's code before, the lightweight
  /// migration, the code after.
  func apply(to contents: StoreContents) throws -> StoreContents {
    var contents = contents
    if let willMigrate {
      contents = try Self.run(
        willMigrate, types: oldTypes, on: contents, stage: "willMigrate")
    }
    if let transform {
      let old = contents.objects
      contents = try migration.apply(to: contents)
      contents = try Self.run(transform, from: old, types: (oldTypes, newTypes), on: contents)
      contents = try LightweightMigration.validating(migration.target, models: newModels)
        .apply(to: contents)
    } else {
      contents = try migration.apply(to: contents)
    }
    if let didMigrate {
      contents = try Self.run(
        didMigrate, types: newTypes, on: contents, stage: "didMigrate")
    }
    return contents
  }

  /// Runs a custom stage's code with a context of the old models holding `old` and one of
  /// the new holding `contents`, and returns what the new one holds after it (saved).
  private static func run(
    _ transform: (MigrationContext) throws -> Void, from old: [ObjectSnapshot],
    types: (old: [ManagedObject.Type], new: [ManagedObject.Type]), on contents: StoreContents
  ) throws -> StoreContents {
    let (oldContainer, _) = try container(
      of: types.old,
      holding: StoreContents(objects: old, nextObjectNumber: contents.nextObjectNumber))
    defer { oldContainer.close() }
    let (newContainer, newStore) = try container(of: types.new, holding: contents)
    defer { newContainer.close() }
    do {
      let migration = MigrationContext(
        old: try oldContainer.newContext(), new: try newContainer.newContext())
      try transform(migration)
      try migration.new.save()
    } catch let error as ObjectGraphError where error.code == .migrationFailed {
      throw error
    } catch {
      throw ObjectGraphError(
        .migrationFailed, "the migration stage's code threw: \(error)", underlying: error)
    }
    return try newStore.load()
  }

  /// A container of `types` over an ``InMemoryStore`` holding `contents`.
  private static func container(of types: [ManagedObject.Type], holding contents: StoreContents)
    throws -> (ObjectContainer, InMemoryStore)
  {
    let (schema, _) = try ObjectContainer.schema(for: types)
    let store = InMemoryStore()
    try store.open(schema: schema)
    var seed = Changeset(nextObjectNumber: contents.nextObjectNumber)
    seed.inserted = contents.objects  // snapshots: a store's strings decoded
    try store.save(seed)
    store.close()
    return (try ObjectContainer(for: types, store: store), store)
  }

  /// Runs a custom stage's code on a context of `types` holding `contents` (in an
  /// ``InMemoryStore`` of their own), and returns what the context saved.
  private static func run(
    _ body: (ObjectContext) throws -> Void, types: [ManagedObject.Type], on contents: StoreContents,
    stage: String
  ) throws -> StoreContents {
    let (container, store) = try container(of: types, holding: contents)
    defer { container.close() }
    do {
      let context = try container.newContext()
      try body(context)
    } catch let error as ObjectGraphError where error.code == .migrationFailed {
      throw error
    } catch {
      throw ObjectGraphError(
        .migrationFailed, "the migration stage's \(stage) threw: \(error)", underlying: error)
    }
    return try store.load()
  }
}
