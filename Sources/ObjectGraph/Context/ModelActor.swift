/// An actor that owns a context of its own, for work off the main actor: SwiftData's
/// `ModelActor`, written without its macro in a few lines.
///
/// ```swift
/// actor Importer: ModelActor {
///   nonisolated let modelContainer: ObjectContainer
///   nonisolated let modelExecutor: any ModelExecutor
///
///   init(modelContainer: ObjectContainer) throws {
///     self.modelContainer = modelContainer
///     modelExecutor = DefaultSerialModelExecutor(modelContext: try modelContainer.newContext())
///   }
///
///   func importBoxes(titled titles: [String]) throws -> [PersistentIdentifier] {
///     let boxes = titles.map { Box(title: $0) }
///     for box in boxes { modelContext.insert(box) }
///     try modelContext.save()   // merged by the main context on the main queue
///     return boxes.compactMap(\.objectID)
///   }
/// }
/// ```
///
/// The actor runs on its executor (``DefaultSerialModelExecutor``: one serial queue), so
/// its context and the context's objects are only ever used there. Pass ``ObjectID``s (and
/// the container, and `Sendable` values) in and out, never objects; look an identifier up
/// with ``subscript(_:as:)``.
public protocol ModelActor: Actor {
  /// The container the actor's context belongs to.
  nonisolated var modelContainer: ObjectContainer { get }
  /// The executor the actor runs on, which owns its context.
  nonisolated var modelExecutor: any ModelExecutor { get }
}

extension ModelActor {
  /// The actor's executor: that of ``modelExecutor``.
  public nonisolated var unownedExecutor: UnownedSerialExecutor {
    guard let serial = modelExecutor as? any SerialModelExecutor else {
      fatalError(
        "ObjectGraph: the model executor of \(Self.self) is a \(type(of: modelExecutor)), "
          + "not a SerialModelExecutor: an actor runs on a serial executor")
    }
    return serial.asUnownedSerialExecutor()
  }

  /// The actor's context.
  public var modelContext: ObjectContext { modelExecutor.modelContext }

  /// The object of the actor's context with this identifier, if it is one of `type`.
  ///
  /// - Complexity: O(1).
  public subscript<T: ManagedObject>(id: PersistentIdentifier, as type: T.Type) -> T? {
    modelContext.model(for: id) as? T
  }
}

/// An executor that owns a context, which it alone uses (SwiftData's `ModelExecutor`).
public protocol ModelExecutor: Executor, Sendable {
  /// The context, used only in jobs this executor runs.
  var modelContext: ObjectContext { get }
}

/// A serial ``ModelExecutor``: what a ``ModelActor`` runs on.
public protocol SerialModelExecutor: ModelExecutor, SerialExecutor {}
