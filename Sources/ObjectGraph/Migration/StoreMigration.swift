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
    let migration: LightweightMigration
    /// The plan's stage between the two versions, if it has one.
    let stage: MigrationStage?
    /// The model classes of the step's old and new versions (for the stage's contexts).
    let oldTypes: [ManagedObject.Type]
    let newTypes: [ManagedObject.Type]
    /// The new version's models (for the checks after the stage's code).
    let newModels: [EntityModel]

    /// SwiftData's code before the migration, on the old models.
    var willMigrate: ((ObjectContext) throws -> Void)? {
      if case .custom(_, _, let willMigrate, _) = stage { return willMigrate }
      return nil
    }

    /// SwiftData's code after the migration, on the new models.
    var didMigrate: ((ObjectContext) throws -> Void)? {
      if case .custom(_, _, _, let didMigrate) = stage { return didMigrate }
      return nil
    }

    /// The code that sees the old and new objects at once.
    var transform: ((MigrationContext) throws -> Void)? {
      if case .transform(_, _, let migrate) = stage { return migrate }
      return nil
    }
  }

  let steps: [Step]

  /// Opens `store` with `schema`, migrating its data first when it was written with another
  /// schema that a migration reaches. Returns the context of the migration's last stage
  /// when it ran code on the models of `types` (its objects are the store's migrated
  /// contents, for the main context to adopt: ``ObjectContext/init(coordinator:adopting:)``).
  ///
  /// - Throws: The store's error when it cannot be opened for another reason, or when its
  ///   data is of another schema and the store cannot migrate;
  ///   ``ObjectGraphError/Code/migrationFailed`` or
  ///   ``ObjectGraphError/Code/newerSchemaVersion`` naming the store's file when no
  ///   migration reaches the schema (the store is then unchanged), or what a step threw.
  @discardableResult
  static func open(
    _ store: any PersistentStore, schema: Schema, models: [EntityModel],
    types: [ManagedObject.Type],
    plan: (any SchemaMigrationPlan.Type)?
  ) throws -> ObjectContext? {
    do {
      try store.open(schema: schema)
      return nil
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
      // Numbered after the stored schema: what the migration keeps keeps its number.
      let binary = store as? BinaryStore
      let keepsRecords = binary != nil && migration.keepsStoredValues
      let origins = migration.origins(from: stored)
      var recorded = schema.numbered(
        after: stored, origins: origins, keepingRecords: keepsRecords)
      recorded.history =
        (stored.history ?? []) + [
          MigrationRecord(
            fromVersion: stored.version, toVersion: schema.version, date: Date(),
            changes: SchemaDifference(stored: stored, requested: schema).changes)
        ]
      var lastStage: ObjectContext?
      /// Runs the steps; with `readStored`, `contents` are read migrated by the first step's
      /// inferred migration already, and `readStored` reads them as stored.
      let apply = {
        (contents: consuming StoreContents, readStored: (() throws -> StoreContents)?) throws
          -> StoreContents in
        var contents = consume contents  // the only reference: the values move, not copied
        for (number, step) in migration.steps.enumerated() {
          (contents, lastStage) = try step.apply(
            to: consume contents, readingStored: number == 0 ? readStored : nil,
            keepingContext: number == migration.steps.count - 1)
        }
        return contents
      }
      if let binary {
        // The records read with the migrated schema's numbers, when that migrates them.
        let readingAs =
          !migration.readsStoredRecordsMigrated
          ? nil
          : keepsRecords
            ? recorded
            : schema.numbered(after: stored, origins: origins, keepingRecords: true)
        try binary.migrate(
          from: stored, to: recorded, keepingRecords: keepsRecords, readingAs: readingAs
        ) { contents, readStored in
          try apply(contents, readingAs == nil ? nil : readStored)
        }
      } else {
        try store.migrate(from: stored, to: recorded) { try apply($0, nil) }
      }
      return lastStage
    }
  }

  /// Whether the migration keeps every stored value as it is and only adds properties that
  /// start with one value for every object: no stage's code, no entity removed, no stored
  /// `nil` replaced by a default, no stored property feeding two. The stored records, read
  /// with the migrated schema's numbers (new properties taking their starting value as
  /// absent), then hold the migrated contents, and a file store keeps them.
  var keepsStoredValues: Bool {
    steps.allSatisfy { step in step.stage == nil && step.migration.keepsStoredValues }
  }

  /// Whether the stored records, read with the migrated schema's numbers, are the contents
  /// the first step's inferred migration makes, so that a file store reads them so instead
  /// of reading them as stored and migrating each value: one step, no code before its
  /// inferred migration, which keeps every stored value (``keepsStoredValues``) and checks
  /// none (no property newly required or unique, no new count bounds). A custom stage's
  /// code runs on them; its old objects, if it asks for them, are read again as stored.
  var readsStoredRecordsMigrated: Bool {
    guard steps.count == 1, let step = steps.first, step.willMigrate == nil else { return false }
    return step.migration.keepsStoredValues
      && step.migration.entities.allSatisfy { $0?.hasChecks == false }
  }

  /// By entity of the last step's schema, the entity of `stored` (the first step's) whose
  /// objects became its objects, and for each property the stored property whose values it
  /// took, through every step; nil for what a step added.
  func origins(from stored: Schema) -> [Schema.NumberOrigin?] {
    var origins: [Schema.NumberOrigin?] = stored.entities.indices.map { entity in
      Schema.NumberOrigin(
        entity: entity, properties: stored.entities[entity].properties.indices.map { $0 })
    }
    for step in steps {
      var next = [Schema.NumberOrigin?](
        repeating: nil, count: step.migration.target.entities.count)
      for (source, mapping) in step.migration.entities.enumerated() {
        guard let mapping, let origin = origins[source] else { continue }
        next[mapping.target] = Schema.NumberOrigin(
          entity: origin.entity,
          properties: mapping.sources.map { source in
            guard case .stored(let property) = source else { return nil }
            return origin.properties[property]
          },
          values: mapping.sources.map { source in
            switch source {
            case .stored(let property): origin.values[property]
            case .value(let value): value
            }
          })
      }
      origins = next
    }
    return origins
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
          stage: nil, oldTypes: [], newTypes: types, newModels: models)
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
      var leavesToStage = false
      if case .transform = stage { leavesToStage = true }
      let step = Step(
        migration: try LightweightMigration(
          from: from, to: next == versions.count - 1 ? schema : new.schema, models: new.models,
          leavingToStage: leavesToStage),
        stage: stage, oldTypes: plan.schemas[next - 1].models,
        newTypes: plan.schemas[next].models, newModels: new.models)
      steps.append(step)
      from = new.schema
    }
    if steps.isEmpty {
      // The store is the last version already, written without the version: record it.
      steps.append(
        Step(
          migration: try LightweightMigration(from: stored, to: schema, models: models),
          stage: nil, oldTypes: [], newTypes: types, newModels: models))
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
  /// migration, the code after; with `keepingContext`, the context of the last code that ran
  /// on the new models too (freed otherwise).
  ///
  /// With `readStored`, `contents` are migrated already (see
  /// ``StoreMigration/readsStoredRecordsMigrated``), and `readStored` reads the stored
  /// contents, for a stage's old objects.
  func apply(
    to contents: consuming StoreContents, readingStored readStored: (() throws -> StoreContents)?,
    keepingContext: Bool
  ) throws -> (contents: StoreContents, context: ObjectContext?) {
    var contents = consume contents
    var kept: ObjectContext?
    /// By entity name, the properties the code after the migration changed; nil when code
    /// ran before it (in the old models), whose changes are not followed.
    var changed: [String: Set<Int>]? = [:]
    // Each stage's context takes the contents over (`taking`): a copy left behind would
    // make the context's load copy every value (its buffer shared) before it could take it.
    if let willMigrate {
      var given: StoreContents? = consume contents
      (contents, _, _) = try Self.run(stage: "willMigrate", keepingContext: false) {
        let context = try Self.context(of: oldTypes, taking: &given)
        try willMigrate(context)
        return context
      }
      changed = nil
    }
    if let transform {
      // Read again when asked for, or shared: the migration then copies the values it
      // reads, one by one.
      let old: StoreContents? = readStored == nil ? contents : nil
      var given: StoreContents? =
        readStored == nil ? try migration.apply(to: consume contents) : consume contents
      let stage: [String: Set<Int>]
      (contents, stage, kept) = try Self.run(
        stage: "code", keepingContext: keepingContext && didMigrate == nil
      ) {
        var oldGiven: StoreContents? = old
        let migration = MigrationContext(
          old: LazyContext {
            if oldGiven == nil, let readStored { oldGiven = try readStored() }
            return try Self.context(of: oldTypes, taking: &oldGiven)
          },
          new: try Self.context(of: newTypes, taking: &given))
        try transform(migration)
        if let made = migration.oldContext.made { Parallel.release(UncheckedSendable(made)) }
        return migration.new
      }
      changed?.merge(stage) { $0.union($1) }
    } else if readStored == nil {
      contents = try migration.apply(to: consume contents)
    }
    if let didMigrate {
      var given: StoreContents? = consume contents
      let stage: [String: Set<Int>]
      (contents, stage, kept) = try Self.run(stage: "didMigrate", keepingContext: keepingContext) {
        let context = try Self.context(of: newTypes, taking: &given)
        try didMigrate(context)
        return context
      }
      changed?.merge(stage) { $0.union($1) }
    }
    if willMigrate != nil || transform != nil || didMigrate != nil {
      // A unique attribute fed by one unique in the stored schema, which no code changed,
      // holds values that differed in the store: its check (a hash of every value) is left
      // out.
      var unchanged: [String: Set<Int>] = [:]
      if let changed {
        for (entity, properties) in migration.keptUniqueAttributes {
          unchanged[entity] = properties.subtracting(changed[entity] ?? [])
        }
      }
      contents = try LightweightMigration.validating(
        migration.target, models: newModels, skippingUniqueOf: unchanged
      ).validate(consume contents)
    }
    return (contents, kept)
  }

  /// Runs a stage's code, which returns the context whose objects are the stage's result,
  /// and returns them (which ``LightweightMigration/validating(_:models:skippingUniqueOf:)``
  /// then checks), with the properties the code changed by entity name
  /// (``ObjectContext/migratedContents()``), and with `keepingContext` the context.
  ///
  /// - Throws: ``ObjectGraphError/Code/migrationFailed`` with what the code threw.
  private static func run(
    stage: String, keepingContext: Bool, _ body: () throws -> ObjectContext
  ) throws -> (contents: StoreContents, changed: [String: Set<Int>], context: ObjectContext?) {
    do {
      // Not saved: the result is what the context holds, checked after the step.
      let context = try body()
      let (contents, changed) = context.migratedContents()
      if keepingContext { return (contents, changed, context) }
      // Nothing else refers to the stage's contexts or their objects: freeing them (most
      // of a second for a million objects) overlaps the rest of the migration.
      Parallel.release(UncheckedSendable(consume context))
      return (contents, changed, nil)
    } catch let error as ObjectGraphError where error.code == .migrationFailed {
      throw error
    } catch {
      throw ObjectGraphError(
        .migrationFailed, "the migration stage's \(stage) threw: \(error)", underlying: error)
    }
  }

  /// A context of `types` holding `given`'s contents, which it takes (leaving nil), made
  /// straight from them (no store reads them: its store accepts saves and keeps nothing, the
  /// context's objects being the result).
  private static func context(of types: [ManagedObject.Type], taking given: inout StoreContents?)
    throws -> ObjectContext
  {
    let contents = given.take()!
    let (schema, models) = try ObjectContainer.schema(for: types)
    let coordinator = StoreCoordinator(
      store: StageStore(), schema: schema, models: models,
      nextObjectNumber: contents.nextObjectNumber, configurations: [])
    let reference = ContextReference()
    let (member, version) = coordinator.join(mergingOnMainQueue: false, as: reference)
    return try ObjectContext(
      coordinator: coordinator, contents: consume contents, history: (reference, member, version),
      isObservable: false)
  }
}

/// The store of a migration stage's context: its objects come with the context, and its
/// saves are checked by the context and kept there (the stage's result is what the context
/// holds).
private final class StageStore: PersistentStore {
  func open(schema: Schema) throws {}

  func load() throws -> StoreContents {
    StoreContents(objects: [], nextObjectNumber: 1)
  }

  func save(_ changeset: Changeset) throws {}

  func close() {}
}
