import Foundation

/// SwiftData's name for ``ObjectContext``, so that code written against `ModelContext`
/// ports as written.
public typealias ModelContext = ObjectContext

/// SwiftData's name for ``ObjectContainer``.
public typealias ModelContainer = ObjectContainer

/// `ModelContext`'s members under SwiftData's names, beside the framework's own.
extension ObjectContext {
  /// The inserted objects not yet saved (SwiftData's name for ``insertedObjects``).
  public var insertedModelsArray: [ManagedObject] { insertedObjects }

  /// The changed objects not yet saved (SwiftData's name for ``updatedObjects``).
  public var changedModelsArray: [ManagedObject] { updatedObjects }

  /// The deleted objects not yet saved (SwiftData's name for ``deletedObjects``).
  public var deletedModelsArray: [ManagedObject] { deletedObjects }

  /// The object with an identifier, if this context holds it (SwiftData's name for
  /// ``object(with:)``). Every object of the store is in the context, so an identifier of a
  /// stored, live object always finds it.
  ///
  /// ```swift
  /// let item = context.model(for: id) as? Item
  /// ```
  ///
  /// - Complexity: O(1).
  public func model(for id: PersistentIdentifier) -> ManagedObject? { object(with: id) }

  /// The object of class `T` with an identifier, if this context holds one (SwiftData's
  /// `registeredModel(for:)`).
  ///
  /// - Complexity: O(1).
  public func registeredModel<T: ManagedObject>(for id: PersistentIdentifier) -> T? {
    object(with: id) as? T
  }

  /// The identifiers of the objects a descriptor fetches, in its order (SwiftData's
  /// `fetchIdentifiers(_:)`).
  ///
  /// - Throws: As ``fetch(_:)``.
  /// - Complexity: That of ``fetch(_:)``, plus O(*m*) in the results.
  public func fetchIdentifiers<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws
    -> [PersistentIdentifier]
  {
    try fetch(descriptor).compactMap(\.objectID)
  }

  /// Calls `block` with each object a descriptor fetches, in its order (SwiftData's
  /// `enumerate(_:block:)`; every object is in memory already, so there is no batching).
  ///
  /// - Throws: As ``fetch(_:)``, or what `block` throws (the enumeration stops there).
  public func enumerate<T: ManagedObject>(
    _ descriptor: FetchDescriptor<T>, block: (T) throws -> Void
  ) throws {
    for object in try fetch(descriptor) { try block(object) }
  }

  /// Runs `block` and saves what it changed (SwiftData's `transaction(block:)`). If `block`
  /// or the save throws, the changes since the last save are rolled back and the error is
  /// rethrown: nothing of it is stored, and the context is as it was saved.
  ///
  /// ```swift
  /// try context.transaction {
  ///   context.insert(Trip(name: "Lisbon", start: .now))
  /// }
  /// ```
  ///
  /// - Throws: What `block` or ``save()`` throws.
  public func transaction(block: () throws -> Void) throws {
    do {
      try block()
      try save()
    } catch {
      rollback()
      throw error
    }
  }
}
