import Foundation

/// The messages of the traps that misuse of the public API reaches: an object inserted into
/// a second context, objects of two contexts related, an object of a class the schema does
/// not list, an index out of range on an ordered to-many relationship.
///
/// Callers stop with `fatalError(MisuseMessage.…)`, which keeps its message in release
/// builds (a `precondition`'s message is stripped there). Each message names the objects
/// (class and ``ObjectID``, or "a new Box"), the relationship, and the contexts and
/// containers concerned, and says what to do instead. Checks that no user can reach stay
/// `precondition`s.
enum MisuseMessage {
  // MARK: Inserting

  /// `object` (or an object that `root` reaches) already belongs to `owner`, a context
  /// other than `context`.
  static func inserting(
    _ object: ManagedObject, reachedFrom root: ManagedObject, into context: ObjectContext,
    ownedBy owner: ObjectContext
  ) -> String {
    let advice =
      owner.coordinator === context.coordinator
      ? "An object lives in one context: save that context, then use this context's own "
        + "instance (object(with:) its objectID, or fetch it)."
      : "Objects cannot move between containers: insert a new \(type(of: object)) with the "
        + "same values into this context instead."
    return "ObjectGraph: cannot insert \(name(of: object))\(reached(object, from: root)) into "
      + "\(name(of: context)): it belongs to \(name(of: owner, besides: context)). \(advice)"
  }

  /// The class of `object` (which `root` reaches) is not in the schema of `context`'s
  /// container.
  static func inserting(
    _ object: ManagedObject, reachedFrom root: ManagedObject, notInSchemaOf context: ObjectContext
  ) -> String {
    let className = "\(type(of: object))"
    let listed = context.coordinator.models.map(\.name).joined(separator: ", ")
    return "ObjectGraph: cannot insert \(name(of: object))\(reached(object, from: root)) into "
      + "\(name(of: context)): \(className) is not in its container's schema (\(listed)). "
      + "List \(className).self in ObjectContainer(for:) when making the container."
  }

  // MARK: Relating

  /// `owner` and `object`, related through `owner`'s relationship `property`, belong to two
  /// contexts.
  static func relating(
    _ owner: ManagedObject, _ object: ManagedObject, through property: Int,
    ownerContext: ObjectContext, objectContext: ObjectContext
  ) -> String {
    let relationship = "\(owner.model.name).\(owner.model.properties[property].name)"
    let advice =
      ownerContext.coordinator === objectContext.coordinator
      ? "Related objects must be in one context: save \(name(of: object))'s context, then "
        + "relate \(name(of: owner)) to its own context's instance of \(name(of: object)) "
        + "(object(with:) that objectID, or fetch it there)."
      : "Objects of two containers cannot be related: relate objects of one container."
    return "ObjectGraph: cannot relate \(name(of: owner)) and \(name(of: object)) through "
      + "\(relationship): \(name(of: owner)) belongs to \(name(of: ownerContext)) and "
      + "\(name(of: object)) to \(name(of: objectContext, besides: ownerContext)). \(advice)"
  }

  /// Relationship `property` of `object`, whose context was released while the app held
  /// it, would change (see ``ReleasedGraph``).
  static func changingReleased(_ object: ManagedObject, _ property: Int) -> String {
    "ObjectGraph: cannot change \(object.model.name).\(object.model.properties[property].name) "
      + "of \(name(of: object)): its context was released, and a released context's objects "
      + "keep their relationships read-only. Change it through a live context: fetch the "
      + "object there (object(with:) its objectID)."
  }

  // MARK: Ordered to-many

  /// `position` is outside the valid positions of `owner`'s to-many relationship `property`
  /// (`0..<count`, or `0...count` where the end is valid too), as Swift's `Array` says it.
  static func indexOutOfRange(
    _ position: Int, _ role: String, of owner: ManagedObject, _ property: Int, count: Int,
    endIsValid: Bool = false
  ) -> String {
    let valid =
      count == 0 && !endIsValid
      ? "it is empty" : "valid positions are \(endIsValid ? "0...\(count)" : "0..<\(count)")"
    return "ObjectGraph: Index out of range: \(role) \(position) in "
      + "\(name(of: owner)).\(owner.model.properties[property].name), which holds \(count) "
      + "objects (\(valid))"
  }

  // MARK: Model classes

  /// `keyPath` does not name a to-many relationship of `object`'s class.
  static func observing(_ keyPath: AnyKeyPath, of object: ManagedObject) -> String {
    "ObjectGraph: cannot observe \(keyPath) of \(name(of: object)) as a relationship: it is "
      + "not a property of \(object.model.name) declared with @Relationship. Observe a to-many "
      + "@Relationship property, or the object with observe(_:keyPaths:)."
  }

  /// While an object of class `loaded` was loaded, an object of class `made` (the same
  /// class, or a model object its stored properties create) declared `declared` persistent
  /// properties where the loaded class's model has `described`.
  static func loading(
    _ loaded: ManagedObject.Type, madeBy made: ManagedObject.Type, declared: Int, described: Int
  ) -> String {
    let what =
      loaded == made
      ? "\(loaded) declared \(declared) persistent properties while an object was loaded from "
        + "the store, \(described) when its model was described"
      : "a \(made) was made while a \(loaded) was loaded from the store"
    return "ObjectGraph: \(what). A model class declares the same @Attribute and @Relationship "
      + "properties every time, and its other stored properties' initial values make no model "
      + "objects: make them in a @Relationship's default value or in a lazy var."
  }

  // MARK: Names

  /// "Box #12", or "a new Box" for an object never inserted.
  static func name(of object: ManagedObject) -> String {
    guard let id = object.objectID else { return "a new \(type(of: object))" }
    return "\(type(of: object)) \(id)"
  }

  /// "the main context of the container over the store at /path", or "a context of …".
  static func name(of context: ObjectContext) -> String {
    "\(context.deliversOnMainQueue ? "the main context" : "a context") of the container over "
      + name(of: context.coordinator.store)
  }

  /// How `other` stands to `context`: another context of the same container, or a context
  /// of another container, with its store.
  static func name(of other: ObjectContext, besides context: ObjectContext) -> String {
    if other.coordinator === context.coordinator {
      return "\(other.deliversOnMainQueue ? "the main context" : "another context") of the "
        + "same container"
    }
    return "\(other.deliversOnMainQueue ? "the main context" : "a context") of another "
      + "container, over \(name(of: other.coordinator.store))"
  }

  /// "the store at /path", "an InMemoryStore", or "a MyStore".
  static func name(of store: any PersistentStore) -> String {
    if let store = store as? BinaryStore { return "the store at \(store.url.path)" }
    let typeName = "\(type(of: store))"
    let article = typeName.first.map { "AEIOU".contains($0) } == true ? "an" : "a"
    return "\(article) \(typeName)"
  }

  /// " (reached from Box #3 through its relationships)" when `object` is not `root`.
  private static func reached(_ object: ManagedObject, from root: ManagedObject) -> String {
    object === root ? "" : " (reached from \(name(of: root)) through its relationships)"
  }
}
