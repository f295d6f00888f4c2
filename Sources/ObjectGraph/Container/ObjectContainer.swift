import Foundation

/// The schema and store of an app's models, and the contexts that work with them.
///
/// ```swift
/// let container = try ObjectContainer(for: Box.self, Note.self, store: InMemoryStore())
/// let context = container.mainContext
/// let onDisk = try ObjectContainer(for: Box.self, configurations: ModelConfiguration(url: url))
/// ```
///
/// The container builds its schema once from the model classes, rejecting a model it
/// cannot persist with an error that names the class and property, opens the store with it,
/// and loads the main context. The store is closed by ``close()``, or when the container and
/// every context made from it are released, so it can be opened again; a context keeps its
/// store open, as a SwiftData context keeps its container.
public final class ObjectContainer: Sendable {
  /// The persistent shape of the models, as the store records it.
  public let schema: Schema
  let coordinator: StoreCoordinator
  /// Created with the container and used only on the main actor.
  private nonisolated(unsafe) let main: ObjectContext

  /// Creates a container for model classes over a store.
  ///
  /// The classes that relationships reach are included even when not listed.
  ///
  /// - Parameters:
  ///   - types: The model classes.
  ///   - store: Where the objects are kept.
  /// - Throws: ``ObjectGraphError`` with code ``ObjectGraphError/Code/invalidModel`` naming
  ///   the class and property of a model that cannot be persisted (an unsupported attribute
  ///   type, an inverse that does not match, two entities of one name), or the store's error
  ///   when it cannot be opened or loaded.
  public convenience init(for types: ManagedObject.Type..., store: any PersistentStore)
    throws
  {
    try self.init(for: types, store: store)
  }

  /// Creates a container for model classes over the durable file store at a URL, creating
  /// the file if it does not exist.
  ///
  /// ```swift
  /// let container = try ObjectContainer(for: Box.self, storeURL: url)
  /// ```
  ///
  /// - Throws: As ``init(for:store:)``; in particular ``ObjectGraphError/Code/storeInUse``
  ///   when the file is open elsewhere, ``ObjectGraphError/Code/schemaMismatch`` when it was
  ///   written with another schema, and ``ObjectGraphError/Code/corruptStore`` naming the
  ///   file and the damage.
  public convenience init(for types: ManagedObject.Type..., storeURL: URL) throws {
    try self.init(for: types, store: BinaryStore(url: storeURL))
  }

  /// Creates a container for an array of model classes over the file store at a URL.
  public convenience init(for types: [ManagedObject.Type], storeURL: URL) throws {
    try self.init(for: types, store: BinaryStore(url: storeURL))
  }

  /// Creates a container for an array of model classes over a store.
  public convenience init(for types: [ManagedObject.Type], store: any PersistentStore) throws {
    try self.init(for: types, migrationPlan: nil, store: store)
  }

  /// Creates a container for model classes over a store, migrating its data with a plan
  /// (see ``init(for:migrationPlan:configurations:)``).
  public convenience init(
    for types: [ManagedObject.Type], migrationPlan: (any SchemaMigrationPlan.Type)?,
    store: any PersistentStore
  ) throws {
    let (schema, models) = try Self.schema(for: types, plan: migrationPlan)
    try self.init(
      schema: schema, models: models, types: types, plan: migrationPlan, store: store,
      configurations: Set(ModelConfiguration.describing(store).map { [$0] } ?? []))
  }

  /// Creates a container for model classes with a configuration (SwiftData's
  /// `ModelContainer(for:configurations:)`); with none, the default configuration,
  /// ``ModelConfiguration/init(_:schema:isStoredInMemoryOnly:)``: the default store file.
  ///
  /// ```swift
  /// let container = try ObjectContainer(
  ///   for: Box.self, configurations: ModelConfiguration(url: url))
  /// let preview = try ObjectContainer(
  ///   for: Box.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
  /// ```
  ///
  /// - Parameters:
  ///   - types: The model classes; the classes their relationships reach are included.
  ///   - configurations: At most one configuration: where the objects are kept.
  /// - Throws: ``ObjectGraphError/Code/invalidConfiguration`` for more than one
  ///   configuration, or one whose schema is not the models'; ``ObjectGraphError/Code/io``
  ///   naming the directory when the store's directory cannot be created; otherwise as
  ///   ``init(for:storeURL:)``.
  /// A store written with other models is migrated when it opens (see the README's
  /// "Migration"): with `migrationPlan`, from the version it holds through the plan's stages
  /// to the last version (whose models `types` must be); without, by a lightweight migration
  /// inferred from the stored schema and the models, when one is.
  ///
  /// ```swift
  /// let container = try ObjectContainer(
  ///   for: AnimalsV2.Animal.self, migrationPlan: AnimalsMigrationPlan.self,
  ///   configurations: ModelConfiguration(url: url))
  /// ```
  ///
  /// - Throws: As above, and ``ObjectGraphError/Code/migrationFailed`` or
  ///   ``ObjectGraphError/Code/newerSchemaVersion`` naming the file when the store's data
  ///   cannot be migrated (it is then left as it was).
  /// - Complexity: O(*n*) in the stored objects, which the main context loads; a migration
  ///   adds a pass over them and a write of the store.
  public convenience init(
    for types: ManagedObject.Type..., migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
    configurations: ModelConfiguration...
  ) throws {
    try self.init(for: types, migrationPlan: migrationPlan, configurations: configurations)
  }

  /// Creates a container for an array of model classes with a configuration (the default
  /// one when the array is empty), migrating its store with a plan, if given.
  public convenience init(
    for types: [ManagedObject.Type], migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
    configurations: [ModelConfiguration] = []
  ) throws {
    guard configurations.count <= 1 else {
      throw ObjectGraphError(
        .invalidConfiguration,
        "a container takes one configuration, but \(configurations.count) were given ("
          + configurations.map { "\"\($0.name)\"" }.joined(separator: ", ")
          + "): keep the models of each configuration in a container of its own")
    }
    let configuration = configurations.first ?? ModelConfiguration()
    let (schema, models) = try Self.schema(for: types, plan: migrationPlan)
    if let expected = configuration.schema, !schema.matches(stored: expected) {
      throw ObjectGraphError(
        .invalidConfiguration,
        "the schema of configuration \"\(configuration.name)\" is not the schema of the "
          + "models: " + SchemaDifference(stored: expected, requested: schema).summary,
        file: configuration.isStoredInMemoryOnly ? nil : configuration.url)
    }
    try self.init(
      schema: schema, models: models, types: types, plan: migrationPlan,
      store: configuration.makeStore(), configurations: [configuration])
  }

  /// The schema of model classes, of the plan's last version if there is a plan (whose
  /// models they must be).
  private static func schema(
    for types: [ManagedObject.Type], plan: (any SchemaMigrationPlan.Type)?
  ) throws -> (Schema, [EntityModel]) {
    var (schema, models) = try schema(for: types)
    guard let plan else { return (schema, models) }
    guard let last = plan.schemas.last else {
      throw ObjectGraphError(
        .invalidConfiguration, "the migration plan \(plan) lists no versioned schema")
    }
    let (planned, _) = try Self.schema(for: last.models)
    guard planned == schema else {
      throw ObjectGraphError(
        .invalidConfiguration,
        "the models are not those of the migration plan's last version, \(last) "
          + "(\(last.versionIdentifier)): "
          + SchemaDifference(stored: planned, requested: schema).summary)
    }
    schema.version = last.versionIdentifier
    return (schema, models)
  }

  /// The schema of model classes: the listed classes first, in order, then the classes their
  /// relationships reach.
  static func schema(for types: [ManagedObject.Type]) throws -> (Schema, [EntityModel]) {
    let models = try ModelRegistry.models(for: types)
    var ordered: [EntityModel] = []
    var next = 0
    for model in models where !ordered.contains(where: { $0 === model }) { ordered.append(model) }
    while next < ordered.count {
      for property in ordered[next].properties {
        guard case .relationship(let relationship) = property.kind,
          !ordered.contains(where: { $0 === relationship.destination })
        else { continue }
        ordered.append(relationship.destination)
      }
      next += 1
    }
    for (position, model) in ordered.enumerated() {
      if let clash = ordered[..<position].first(where: { $0.name == model.name }) {
        throw ObjectGraphError(
          .invalidModel,
          "two model classes are named \(model.name): \(String(reflecting: clash.type)) and "
            + "\(String(reflecting: model.type))", entity: model.name)
      }
    }
    return (Schema(entities: ordered.map(\.entityDescription)), ordered)
  }

  /// Opens the store with the schema (migrating its data if need be) and loads the main
  /// context.
  private init(
    schema: Schema, models: [EntityModel], types: [ManagedObject.Type],
    plan: (any SchemaMigrationPlan.Type)?, store: any PersistentStore,
    configurations: Set<ModelConfiguration>
  ) throws {
    // The store's speculative builds (its shapes) wait until the main context is loaded.
    BackgroundWork.hold()
    defer { BackgroundWork.endHold() }
    let stage = try StoreMigration.open(
      store, schema: schema, models: models, types: types, plan: plan)
    let contents: StoreContents
    do {
      contents = try store.load()
    } catch {
      store.close()
      throw error
    }
    self.schema = schema
    coordinator = StoreCoordinator(
      store: store, schema: schema, models: models, nextObjectNumber: contents.nextObjectNumber,
      configurations: configurations)
    do {
      if let stage, stage.hasModels(of: coordinator) {
        // The last stage's objects are the migrated contents already.
        Parallel.release(consume contents)
        main = ObjectContext(coordinator: coordinator, adopting: stage)
      } else {
        main = try ObjectContext(coordinator: coordinator, contents: consume contents)
      }
      main.deliversOnMainQueue = true
    } catch {
      store.close()
      throw error
    }
    main.owningContainer = self
  }

  /// A new container object for the main context of a container the app released (see
  /// ``ObjectContext/container``): the same schema, store and main context.
  init(coordinator: StoreCoordinator, mainContext: ObjectContext) {
    schema = coordinator.schema
    self.coordinator = coordinator
    main = mainContext
    mainContext.owningContainer = self
  }

  /// Where the container keeps its objects (SwiftData's `ModelContainer.configurations`):
  /// the configuration it was made with; for a container made over a store, the
  /// configuration of a built-in store (its URL, or in memory only), and none for another.
  public var configurations: Set<ModelConfiguration> { coordinator.configurations }

  /// The context bound to the main actor; the same one each time.
  @MainActor
  public var mainContext: ObjectContext {
    main.wakeIfDormant()
    return main
  }

  /// A new context of this container, for work off the main actor: an importer, an export
  /// (SwiftData's `ModelContext(container)`). Keep it, and its objects, on one actor or
  /// thread; pass ``ObjectID``s between contexts.
  ///
  /// ```swift
  /// let background = try container.newContext()
  /// background.insert(Box(title: "Imported"))
  /// try background.save()   // the main context merges it on the main queue
  /// ```
  ///
  /// Saves of each context reach the others: see ``ObjectContext/processPendingChanges()``.
  ///
  /// - Throws: As ``ObjectContext/init(_:)``.
  /// - Complexity: O(*n*): the context loads the store's objects.
  public func newContext() throws -> ObjectContext {
    try ObjectContext(self)
  }

  /// Closes the store. Contexts of this container can no longer save.
  public func close() {
    coordinator.close()
  }

  /// The version of the store's contents: the number of saves the container's contexts made
  /// since it opened the store (or since ``deleteAllData()``). Each context's objects are at
  /// a version of their own (``ObjectContext/storeVersion``), the latest once it has merged
  /// every save.
  ///
  /// - Complexity: O(1) (an atomic load).
  public var storeVersion: UInt64 { coordinator.version }

  /// Deletes every object of the store, and empties the main context (SwiftData's
  /// `ModelContainer.deleteAllData()`).
  ///
  /// ```swift
  /// try container.deleteAllData()
  /// try container.mainContext.fetchCount(FetchDescriptor<Box>())  // 0
  /// ```
  ///
  /// A ``BinaryStore`` replaces its file with an empty one by an atomic rename, as a
  /// compaction does (it stays open and locked throughout, and the `.partial` file it writes
  /// becomes the store); an ``InMemoryStore`` drops its objects; any other store is saved one
  /// changeset deleting every object. Delete rules are not applied (everything goes, deny
  /// included) and no object number is reused.
  ///
  /// The main context then holds nothing: its unsaved changes are discarded, and every object
  /// it held ends as a deleted object does after a save: detached, its relationships empty,
  /// its attributes as they were. Its observers and live queries are told at once that each
  /// object it held was deleted. A context made
  /// with ``ObjectContext/init(_:)`` before the call keeps the objects it loaded, but its
  /// saves throw ``ObjectGraphError/Code/storeClosed``: make a new context.
  ///
  /// - Throws: The store's ``ObjectGraphError``, naming the file for a ``BinaryStore``; then
  ///   nothing was deleted, unless the code is ``ObjectGraphError/Code/saveOutcomeUnknown``
  ///   (the file was emptied, but a crash may bring it back): the main context is emptied
  ///   then too. ``ObjectGraphError/Code/storeClosed`` after ``close()``.
  /// - Complexity: O(*n*) in the main context's objects, plus two syncs for the binary
  ///   store.
  @MainActor
  public func deleteAllData() throws {
    main.wakeIfDormant()
    do {
      try coordinator.removeAllObjects()
    } catch let error as ObjectGraphError where error.code == .saveOutcomeUnknown {
      main.discardAllObjects(storeGeneration: coordinator.generation)
      throw error
    }
    main.discardAllObjects(storeGeneration: coordinator.generation)
  }
}
