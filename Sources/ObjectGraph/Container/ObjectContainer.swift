import Foundation

/// The schema and store of an app's models, and the contexts that work with them.
///
/// ```swift
/// let container = try ObjectContainer(for: Box.self, Note.self, store: InMemoryStore())
/// let context = container.mainContext
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
  public init(for types: [ManagedObject.Type], store: any PersistentStore) throws {
    let models = try ModelRegistry.models(for: types)
    // The listed classes first, in order, then the classes their relationships reach.
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
    let schema = Schema(entities: ordered.map(\.entityDescription))
    try store.open(schema: schema)
    let contents: StoreContents
    do {
      contents = try store.load()
    } catch {
      store.close()
      throw error
    }
    self.schema = schema
    coordinator = StoreCoordinator(
      store: store, schema: schema, models: ordered, nextObjectNumber: contents.nextObjectNumber)
    do {
      main = try ObjectContext(coordinator: coordinator, contents: consume contents)
      main.deliversOnMainQueue = true
    } catch {
      store.close()
      throw error
    }
  }

  /// The context bound to the main actor; the same one each time.
  @MainActor
  public var mainContext: ObjectContext { main }

  /// Closes the store. Contexts of this container can no longer save.
  public func close() {
    coordinator.close()
  }
}
