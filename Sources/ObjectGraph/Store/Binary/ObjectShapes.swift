/// What an open ``BinaryStore`` remembers about its live objects between saves: which exist,
/// of which entity, what each relationship refers to, and how many references name each
/// object. That is enough to refuse a changeset that does not fit (an update or delete of an
/// unknown object, an insert of a known one, a list edit out of range) before anything is
/// written, for about 30 bytes an object plus 8 a reference instead of a copy of every value;
/// the values themselves live in the file (and in the contexts). Lists share their storage
/// with the values they were read from, so an opened store's lists cost nothing until edited.
///
/// The rules are those of ``ChangesetApplier``, applied to shapes instead of snapshots, all or
/// nothing: a refused changeset leaves the shapes as they were, and ``revert(_:)`` undoes an
/// applied one whose write failed. They are as strict as what loading the store checks, so
/// that a save that returns leaves a store that opens: every value written fits its
/// property (``StoredValueCheck``), every reference written names an object that is live once
/// the changeset is applied (not one it deletes, nor one never inserted), and no object is
/// deleted while a live object it leaves untouched still refers to it (the reference counts).
struct ObjectShapes {
  /// A to-many property of one object.
  struct ListKey {
    var id: ObjectID
    var property: Int32
  }

  /// What ``revert(_:)`` needs to undo one applied changeset.
  struct Undo {
    /// One change to the shapes, with what it replaced.
    fileprivate enum Step {
      case entity(ObjectID, Int32?)
      case toOne(ListKey, ObjectID?)
      case list(ListKey, [ObjectID]?)
      /// Edits of a list, undone by these edits (in this order).
      case edits(ListKey, [ListEdit])
    }

    fileprivate var steps: [Step] = []
    fileprivate var nextObjectNumber: UInt64
    /// The shapes were empty: undoing empties them again, so no change is recorded.
    fileprivate var wasEmpty = false

    fileprivate mutating func record(_ step: Step) {
      if !wasEmpty { steps.append(step) }
    }
  }

  private let schema: Schema
  /// For each entity, its to-many properties.
  private let listProperties: [[Int]]
  /// For each entity, its to-one relationships.
  private let toOneProperties: [[Int]]
  /// For each entity, its number of properties (the values an inserted object must have).
  private let valueCounts: [Int]
  /// For each entity, what each property's values must be.
  /// For each entity in turn, what each property's values must be (entity `e`'s start at
  /// `checkStarts[e]`): one flat array, read without retaining an array per object.
  private let checks: [StoredValueCheck]
  private let checkStarts: [Int]
  /// Whether each entity has relationships.
  private let hasRelationships: [Bool]
  /// The entity of each live object.
  private var entities = ObjectNumberMap<Int32>()
  /// The objects of each non-empty ordered list, by property number, then object: in
  /// chunks, so that an edit of a long list shifts one chunk (``ChunkedList``).
  private var lists: [ObjectNumberMap<ChunkedList<ObjectID>>]
  /// The object each set to-one relationship refers to, by property number, then object.
  private var toOnes: [ObjectNumberMap<ObjectID>]
  /// How many references of live objects name each object (absent for none).
  private var incoming = ObjectNumberMap<Int32>()
  /// The largest next object number recorded.
  private(set) var nextObjectNumber: UInt64 = 1
  /// Encoded bytes of the whole objects seen, to estimate the size of a compacted file.
  private var sampledObjectBytes = 0
  private var sampledObjectCount = 0

  /// The shapes of `contents`.
  ///
  /// - Complexity: O(*n*) in the objects and their values.
  init(schema: Schema, contents: StoreContents = StoreContents(objects: [], nextObjectNumber: 1)) {
    self.init(schema: schema, gathered: Gathered(schema: schema, contents: contents))
  }

  /// What the shapes need of a store's contents, read from them on the caller's thread so
  /// that the shapes can be built on another (``Build``) while the contents are loaded: the
  /// live objects' ids and entities, and their relationship values (non-empty lists, whose
  /// storage is shared, and to-one references).
  struct Gathered: Sendable {
    var nextObjectNumber: UInt64
    var ids: [ObjectID] = []
    var entities: [Int32] = []
    /// The relations noted, in runs as they were read (a snapshot's parts, or pieces of the
    /// contents read on several cores), which nothing copies into one.
    var relations: [Relations] = []
    /// Objects whose entries in ``relations`` are out of date (changed after the snapshot
    /// those were noted in): their relations are ``changedRelations``.
    var changed: [ObjectID] = []
    var changedRelations = Relations()

    /// Relationship values of objects: to-one references and non-empty lists, kept apart so
    /// that the many references are plain values, appended and joined without a retain.
    struct Relations: Sendable {
      var toOnes: [ToOne] = []
      var lists: [List] = []

      /// Object `id`'s to-one relationship `property` refers to `target`.
      struct ToOne {
        var id: ObjectID
        var property: Int32
        var target: ObjectID
      }

      /// Object `id`'s to-many relationship `property` holds `targets` (not empty; shared
      /// with the value it was read from).
      struct List: Sendable {
        var id: ObjectID
        var property: Int32
        var targets: [ObjectID]
      }

      /// Notes relationship value `value` of object `id`, if it refers to anything.
      mutating func note(_ value: PersistentValue, of id: ObjectID, property: Int) {
        switch value {
        case .reference(let target):
          toOnes.append(ToOne(id: id, property: Int32(property), target: target))
        case .references(let targets) where !targets.isEmpty:
          lists.append(List(id: id, property: Int32(property), targets: targets))
        default: break
        }
      }

      /// Whether nothing is noted.
      var isEmpty: Bool { toOnes.isEmpty && lists.isEmpty }

      /// Makes room for the relations of `count` more objects, a to-one each and a
      /// non-empty list for one in four (a tree's inner nodes; memory reserved and never
      /// touched costs nothing), so that noting them seldom copies the arrays as they grow.
      mutating func reserve(forObjects count: Int) {
        toOnes.reserveCapacity(toOnes.count + count)
        lists.reserveCapacity(lists.count + count / 4)
      }
    }

    /// The objects of a replayed graph, from the relations of its snapshot as the decoder
    /// noted them: the relations of the objects that changes replayed after the snapshot
    /// inserted, updated or deleted (`changed`) are read again from the graph, which they
    /// indexed. The graph's ids and entities are shared, not copied (positions of removed
    /// objects, entity ``PackedObjects/removed``, are skipped).
    init(
      schema: Schema, graph: LiveGraph, snapshotRelations: [Relations], changed: [ObjectID]
    ) {
      nextObjectNumber = graph.nextObjectNumber
      ids = graph.objects.ids
      entities = graph.objects.entities
      relations = snapshotRelations
      self.changed = changed
      // Only these reads need the graph; setting the snapshot's relations aside is left to
      // the build, on the other core.
      let relationshipProperties = ObjectShapes.relationshipProperties(of: schema)
      for id in changed {
        guard let entity = graph.entity(of: id) else { continue }  // deleted
        for property in relationshipProperties[entity] {
          changedRelations.note(graph.value(of: id, property) ?? .null, of: id, property: property)
        }
      }
    }

    init(schema: Schema, contents: StoreContents) {
      nextObjectNumber = contents.nextObjectNumber
      let relationshipProperties = ObjectShapes.relationshipProperties(of: schema)
      let list = contents.packed
      // Read on as many cores as there are (the reads are cache misses, one an object),
      // each piece a run of positions, joined in order.
      let pieceCount = Parallel.pieceCount(
        for: list.positionCount, minimumPerPiece: BinaryFormat.minimumObjectsPerPart)
      let pieceSize = (list.positionCount + pieceCount - 1) / max(pieceCount, 1)
      var pieces = [Gathered?](repeating: nil, count: pieceCount)
      pieces.withUnsafeMutableBufferPointer { pieces in
        Parallel.forEach(pieceCount) { number in
          let positions =
            (number * pieceSize)..<min((number + 1) * pieceSize, list.positionCount)
          pieces[number] = Gathered(
            list, positions, relationshipProperties: relationshipProperties)
        }
      }
      ids.reserveCapacity(list.count)
      entities.reserveCapacity(list.count)
      for piece in pieces {
        ids += piece!.ids
        entities += piece!.entities
        relations += piece!.relations  // each piece's run, not copied
      }
    }

    /// The objects at `positions` of `list`.
    private init(
      _ list: PackedObjects, _ positions: Range<Int>, relationshipProperties: [[Int]]
    ) {
      nextObjectNumber = 0
      ids.reserveCapacity(positions.count)
      entities.reserveCapacity(positions.count)
      // The relationships of the entity of the object before, kept while it repeats:
      // reading them out of the array of arrays retained and released them each time.
      var lastEntity = -1
      var properties: [Int] = []
      var noted = Relations()
      list.forEach(in: positions, readsStrings: false) { id, entity, values in
        ids.append(id)
        entities.append(Int32(entity))
        if entity != lastEntity {
          lastEntity = entity
          properties = relationshipProperties[entity]
        }
        for number in properties.indices {
          let property = properties[number]
          noted.note(values[property], of: id, property: property)
        }
      }
      relations = [noted]
    }
  }

  /// The shapes of gathered contents (ids are unique in a store's contents).
  ///
  /// - Complexity: O(*n* + *r*) in the objects and references.
  init(schema: Schema, gathered: Gathered) {
    self.schema = schema
    listProperties = Self.properties(of: schema) { $0.relationship?.isToMany == true }
    toOneProperties = Self.properties(of: schema) { $0.relationship?.isToMany == false }
    valueCounts = schema.entities.map(\.properties.count)
    let checks = StoredValueCheck.checks(of: schema)
    self.checks = Array(checks.joined())
    checkStarts = checks.reduce(into: [0]) { $0.append($0.last! + $1.count) }
    hasRelationships = schema.entities.map { $0.properties.contains { $0.relationship != nil } }
    let propertyCount = valueCounts.max() ?? 0
    lists = Array(repeating: ObjectNumberMap(), count: propertyCount)
    toOnes = Array(repeating: ObjectNumberMap(), count: propertyCount)
    nextObjectNumber = gathered.nextObjectNumber
    entities.reserve(upTo: gathered.nextObjectNumber, expectedCount: gathered.ids.count)
    for (id, entity) in zip(gathered.ids, gathered.entities) where entity != PackedObjects.removed {
      _ = entities.insert(entity, for: id)
    }
    // The snapshot's relations of changed objects are out of date: marked by object number
    // (no hashing for dense ids), they give way to the relations read again. An object
    // changed twice was read twice: the same value, added once.
    var isChanged = ObjectNumberMap<Bool>()
    if !gathered.changed.isEmpty {
      isChanged.reserve(upTo: gathered.nextObjectNumber, expectedCount: gathered.ids.count)
      for id in gathered.changed { isChanged[id] = true }
    }
    reserveReferences(upTo: gathered.nextObjectNumber, expectedCount: gathered.ids.count)
    for run in gathered.relations { add(run, skipping: isChanged) }
    add(gathered.changedRelations, skipping: ObjectNumberMap())
    countReferences()
  }

  /// Makes room in the reference tables for objects numbered up to `maximum`, for a store
  /// about to hold `expectedCount` objects: filled at once, they grow once, not a doubling at
  /// a time.
  private mutating func reserveReferences(upTo maximum: UInt64, expectedCount: Int) {
    incoming.reserve(upTo: maximum, expectedCount: expectedCount)
    for entity in schema.entities.indices {
      for property in toOneProperties[entity] {
        toOnes[property].reserve(upTo: maximum, expectedCount: expectedCount)
      }
      for property in listProperties[entity] {
        lists[property].reserve(upTo: maximum, expectedCount: expectedCount)
      }
    }
  }

  /// Adds gathered relations, but those of the objects `skipped` marks (an object's
  /// relationship noted twice is added once).
  private mutating func add(
    _ relations: Gathered.Relations, skipping skipped: ObjectNumberMap<Bool>
  ) {
    for toOne in relations.toOnes where skipped[toOne.id] == nil {
      _ = toOnes[Int(toOne.property)].insert(toOne.target, for: toOne.id)
    }
    for list in relations.lists where skipped[list.id] == nil {
      _ = lists[Int(list.property)].insert(ChunkedList(list.targets), for: list.id)
    }
  }

  /// Counts the references of every relationship held, into counts that held none.
  ///
  /// - Complexity: O(*r*) in the references, one load and store each.
  private mutating func countReferences() {
    let (toOnes, lists) = (self.toOnes, self.lists)
    incoming.counting { counter in
      for map in toOnes { map.forEachValue { counter.add(1, to: $0) } }
      for map in lists { map.forEachValue { for target in $0 { counter.add(1, to: target) } } }
    }
  }

  /// For each entity of `schema`, the properties that satisfy `isIncluded`.
  private static func properties(
    of schema: Schema, where isIncluded: (PropertyDescription) -> Bool
  ) -> [[Int]] {
    schema.entities.map { entity in
      entity.properties.indices.filter { isIncluded(entity.properties[$0]) }
    }
  }

  /// For each entity of `schema`, its relationships.
  fileprivate static func relationshipProperties(of schema: Schema) -> [[Int]] {
    properties(of: schema) { $0.relationship != nil }
  }

  /// Starts building the shapes of `gathered`, with an object size sample, on another core
  /// (``BackgroundBuild``), for a store whose contents are being loaded meanwhile: the
  /// store takes them at its first save (or whatever else reads them first).
  ///
  /// Safe to share: the build reads only the ``Gathered`` values it was given.
  static func build(
    schema: Schema, gathered: Gathered, sampledObjectBytes: Int, sampledObjectCount: Int
  ) -> BackgroundBuild<ObjectShapes> {
    BackgroundBuild {
      var shapes = ObjectShapes(schema: schema, gathered: gathered)
      shapes.sampleObjectSize(bytes: sampledObjectBytes, count: sampledObjectCount)
      return shapes
    }
  }

  /// The number of live objects.
  var count: Int { entities.count }

  /// Whether no object is live.
  var isEmpty: Bool { entities.isEmpty }

  /// The estimated size of all live objects in a snapshot record.
  var estimatedObjectBytes: Int {
    guard sampledObjectCount > 0 else { return 0 }
    return Int(Double(sampledObjectBytes) / Double(sampledObjectCount) * Double(entities.count))
  }

  /// Records how many bytes `count` whole objects took when encoded.
  mutating func sampleObjectSize(bytes: Int, count: Int) {
    sampledObjectBytes += bytes
    sampledObjectCount += count
  }

  /// Forgets earlier samples and records a compacted snapshot's object sizes.
  mutating func resetObjectSizeSample(bytes: Int, count: Int) {
    sampledObjectBytes = bytes
    sampledObjectCount = count
  }

  /// Checks a changeset against the live objects and, if it fits, applies it.
  ///
  /// Changes are applied as they are checked, each noted in the undo record; a change that
  /// does not fit reverts those already applied.
  ///
  /// - Returns: What ``revert(_:)`` needs to undo it.
  /// - Throws: ``ObjectGraphError/Code/corruptStore`` saying what does not fit; the shapes
  ///   are then unchanged.
  /// - Complexity: O(*k*) in the size of the changeset.
  mutating func apply(_ changeset: Changeset, inserted: PackedObjects) throws -> Undo {
    var undo = Undo(nextObjectNumber: nextObjectNumber)
    if isEmpty {
      // A first save of a whole graph records nothing per object.
      undo.wasEmpty = true
      entities.reserve(
        upTo: changeset.nextObjectNumber, expectedCount: inserted.count)
      reserveReferences(upTo: changeset.nextObjectNumber, expectedCount: inserted.count)
    } else {
      undo.steps.reserveCapacity(inserted.count + changeset.deleted.count)
    }
    do {
      try applyChanges(of: changeset, inserted: inserted, recordingIn: &undo)
    } catch {
      revert(undo)
      throw error
    }
    nextObjectNumber = max(nextObjectNumber, changeset.nextObjectNumber)
    return undo
  }

  private mutating func applyChanges(
    of changeset: Changeset, inserted: PackedObjects, recordingIn undo: inout Undo
  ) throws {
    let applier = ChangesetApplier(schema: schema)
    // The references updates write, checked once the whole changeset is applied (those of
    // inserted objects are read again from them then).
    var references: [WrittenReference] = []
    // Read through locals: a method of `self` called in the closure would copy `self`.
    let (checks, checkStarts, schema) = (self.checks, self.checkStarts, self.schema)
    try inserted.forEach { id, entity, values in
      if !valueCounts.indices.contains(entity) || valueCounts[entity] != values.count {
        try applier.check(id, entity: entity, valueCount: values.count)  // throws, naming it
      }
      let start = checkStarts[entity]
      for property in 0..<values.count
      where !checks[start + property].accepts(valueAt: values.baseAddress! + property) {
        throw StoredValueCheck.mismatch(
          values[property], of: id, in: schema.entities[entity], property: property,
          verb: "saves")
      }
      guard entities.insert(Int32(entity), for: id) else {
        throw ObjectGraphError(.corruptStore, "object \(id) is inserted twice", objectID: id)
      }
      undo.record(.entity(id, nil))
      if self.hasRelationships[entity] { relate(id, to: values, checksFrom: start, &undo) }
    }
    // A first save's references are counted at once, before any update or delete.
    if undo.wasEmpty { countReferences() }
    for update in changeset.updated {
      guard let entityIndex = entities[update.id].map(Int.init) else {
        throw ObjectGraphError(
          .corruptStore, "updated object \(update.id) does not exist", objectID: update.id)
      }
      let description = schema.entities[entityIndex]
      for change in update.changes {
        guard description.properties.indices.contains(change.property) else {
          throw ObjectGraphError(
            .corruptStore,
            "object \(update.id) of \(description.name) has no property \(change.property)",
            entity: description.name, objectID: update.id)
        }
        let property = description.properties[change.property]
        let key = ListKey(id: update.id, property: Int32(change.property))
        switch change.kind {
        case .set(let value):
          guard
            checks[checkStarts[entityIndex] + change.property].accepts(
              value)
          else {
            throw StoredValueCheck.mismatch(
              value, of: update.id, in: description, property: change.property, verb: "saves")
          }
          note(
            value, of: update.id, entity: entityIndex, property: change.property, in: &references)
          switch property.relationship?.isToMany {
          case true?:
            let targets = Self.listTargets(value)
            undo.record(.list(key, setList(targets.isEmpty ? nil : targets, key)))
          case false?:
            let target: ObjectID?
            if case .reference(let id) = value { target = id } else { target = nil }
            undo.record(.toOne(key, setToOne(target, key)))
          case nil: break
          }
        case .edit(let edits):
          guard property.relationship?.isToMany == true else {
            throw ObjectGraphError(
              .corruptStore,
              "list edits on \(description.name).\(property.name), which is not a to-many "
                + "relationship", entity: description.name, property: property.name,
              objectID: update.id)
          }
          for case .insert(let target, _) in edits {
            references.append(
              WrittenReference(
                source: update.id, entity: Int32(entityIndex), property: Int32(change.property),
                target: target))
          }
          try edit(key, with: edits, &undo)
        }
      }
    }
    var deleted: [(ObjectID, Int)] = []
    deleted.reserveCapacity(changeset.deleted.count)
    for id in changeset.deleted {
      guard let entityIndex = entities[id].map(Int.init) else {
        throw ObjectGraphError(.corruptStore, "deleted object \(id) does not exist", objectID: id)
      }
      undo.record(.entity(id, entities.updateValue(nil, for: id)))
      deleted.append((id, entityIndex))
      for property in listProperties[entityIndex] {
        let key = ListKey(id: id, property: Int32(property))
        if let old = setList(nil, key) { undo.record(.list(key, old)) }
      }
      for property in toOneProperties[entityIndex] {
        let key = ListKey(id: id, property: Int32(property))
        if let old = setToOne(nil, key) { undo.record(.toOne(key, old)) }
      }
    }
    // Every reference written must name an object live now: not one deleted by this
    // changeset, nor one never stored. Written references to objects not live are suspects:
    // dangling if their object still holds them (not if it was deleted, or changed again).
    let live = self.entities
    var suspects: [WrittenReference] = []
    inserted.forEach { id, entity, values in
      guard self.hasRelationships[entity] else { return }
      let start = checkStarts[entity]
      for property in 0..<values.count where checks[start + property].isRelationship {
        switch (values.baseAddress! + property).pointee {
        case .reference(let target) where live[target] == nil:
          suspects.append(
            WrittenReference(
              source: id, entity: Int32(entity), property: Int32(property), target: target))
        case .references(let targets):
          for target in targets where live[target] == nil {
            suspects.append(
              WrittenReference(
                source: id, entity: Int32(entity), property: Int32(property), target: target))
          }
        default: continue
        }
      }
    }
    suspects += references.lazy.filter { live[$0.target] == nil }
    for suspect in suspects where holds(suspect) {
      throw dangling(
        suspect.source, Int(suspect.entity), Int(suspect.property), suspect.target, changeset)
    }
    // And no object deleted may still be named by one the changeset left alone.
    for (id, entity) in deleted where incoming[id] != nil {
      throw stillReferred(id, of: entity)
    }
  }

  /// Sets the relationships of object `id`, just inserted, from its values (checked to fit
  /// their properties: a reference is a to-one's, a list a to-many's), read in place.
  ///
  /// Into a first save's empty shapes, the references are not counted (``countReferences()``
  /// counts them all after) and no undo is recorded.
  private mutating func relate(
    _ id: ObjectID, to values: UnsafeBufferPointer<PersistentValue>, checksFrom start: Int,
    _ undo: inout Undo
  ) {
    for property in 0..<values.count where checks[start + property].isRelationship {
      let key = ListKey(id: id, property: Int32(property))
      switch (values.baseAddress! + property).pointee {
      case .reference(let target) where undo.wasEmpty:
        _ = toOnes[property].insert(target, for: id)
      case .references(let targets) where undo.wasEmpty && !targets.isEmpty:
        _ = lists[property].insert(ChunkedList(targets), for: id)
      case .reference(let target): undo.record(.toOne(key, setToOne(target, key)))
      case .references(let targets) where !targets.isEmpty:
        undo.record(.list(key, setList(targets, key)))
      default: continue
      }
    }
  }

  /// Whether the source of written reference `reference` is live and still refers to its
  /// target.
  private func holds(_ reference: WrittenReference) -> Bool {
    let property = Int(reference.property)
    guard entities[reference.source] != nil else { return false }
    return toOnes[property][reference.source] == reference.target
      || lists[property][reference.source]?.contains(reference.target) == true
  }

  /// The error for deleting `id`, of entity `entity`, while a live object the changeset left
  /// alone refers to it.
  ///
  /// - Complexity: O(*r*) in the references: only a refused changeset looks for the referrer.
  private func stillReferred(_ id: ObjectID, of entity: Int) -> ObjectGraphError {
    var referrer: (ObjectID, Int)?
    for property in toOnes.indices where referrer == nil {
      referrer = toOnes[property].pairs.first { $0.1 == id }.map { ($0.0, property) }
    }
    for property in lists.indices where referrer == nil {
      referrer = lists[property].pairs.first { $0.1.contains(id) }.map { ($0.0, property) }
    }
    let deleted = "\(id) of \(schema.entities[entity].name)"
    guard let (source, property) = referrer, let sourceEntity = entities[source] else {
      return ObjectGraphError(
        .corruptStore, "deletes \(deleted), which is still referred to", objectID: id)
    }
    let description = schema.entities[Int(sourceEntity)]
    let name = description.properties[property].name
    return ObjectGraphError(
      .corruptStore,
      "deletes \(deleted), which object \(source) of \(description.name) still refers to "
        + "through \(name)",
      entity: description.name, property: name, objectID: source)
  }

  /// The error for a reference from `source`'s property `property` to `target`, which is
  /// not live once `changeset` is applied.
  private func dangling(
    _ source: ObjectID, _ entity: Int, _ property: Int, _ target: ObjectID,
    _ changeset: Changeset
  ) -> ObjectGraphError {
    let description = schema.entities[entity]
    let name = description.properties[property].name
    let isDeleted = changeset.deleted.contains(target)
    return ObjectGraphError(
      .corruptStore,
      "object \(source) of \(description.name) refers through \(name) to \(target), which "
        + (isDeleted ? "this save deletes" : "is not stored"),
      entity: description.name, property: name, objectID: source)
  }

  /// A reference a changeset writes: `source`'s property `property` to `target`.
  private struct WrittenReference {
    var source: ObjectID
    var entity: Int32
    var property: Int32
    var target: ObjectID
  }

  /// Notes the references in relationship value `value` of object `id`.
  private func note(
    _ value: PersistentValue, of id: ObjectID, entity: Int, property: Int,
    in references: inout [WrittenReference]
  ) {
    switch value {
    case .reference(let target):
      references.append(
        WrittenReference(
          source: id, entity: Int32(entity), property: Int32(property), target: target))
    case .references(let targets):
      for target in targets {
        references.append(
          WrittenReference(
            source: id, entity: Int32(entity), property: Int32(property), target: target))
      }
    default: break
    }
  }

  /// Sets what to-one relationship `key` refers to, counting references; returns what it
  /// referred to.
  private mutating func setToOne(_ target: ObjectID?, _ key: ListKey) -> ObjectID? {
    let old = toOnes[Int(key.property)].updateValue(target, for: key.id)
    if let old { count(old, by: -1) }
    if let target { count(target, by: 1) }
    return old
  }

  /// Sets the objects of list `key` (`nil` for none), counting references; returns the
  /// objects it held.
  ///
  /// - Complexity: O(*m*) in the objects of both lists.
  private mutating func setList(_ targets: [ObjectID]?, _ key: ListKey) -> [ObjectID]? {
    let old = lists[Int(key.property)].updateValue(targets.map(ChunkedList.init), for: key.id)
    if let old { for target in old { count(target, by: -1) } }
    if let targets { for target in targets { count(target, by: 1) } }
    return old?.elements
  }

  /// Applies `edits` to list `key` in place, counting references, after checking that each
  /// fits; the edits that undo them are recorded in `undo` (those applied, if one does not
  /// fit).
  ///
  /// - Complexity: O(*e*) beyond the array's own work for each edit.
  private mutating func edit(_ key: ListKey, with edits: [ListEdit], _ undo: inout Undo) throws {
    var inverse: [ListEdit] = []
    inverse.reserveCapacity(edits.count)
    defer { if !inverse.isEmpty { undo.record(.edits(key, inverse.reversed())) } }
    var counts: [(ObjectID, Int32)] = []
    defer { for (target, delta) in counts { count(target, by: delta) } }
    try lists[Int(key.property)].modifyValue(for: key.id) { list in
      var targets = list.take() ?? ChunkedList()
      defer { list = targets.isEmpty ? nil : targets }
      for edit in edits {
        _ = try edit.count(after: targets.count)
        switch edit {
        case .insert(let target, let index):
          targets.insert(target, at: index)
          counts.append((target, 1))
          inverse.append(.remove(at: index))
        case .remove(let index):
          let target = targets.remove(at: index)
          counts.append((target, -1))
          inverse.append(.insert(target, at: index))
        case .move(let from, let to):
          targets.moveElement(from: from, to: to)
          inverse.append(.move(from: to, to: from))
        }
      }
    }
  }

  /// Applies edits known to fit (an undo's), counting references.
  private mutating func applyFitting(_ edits: [ListEdit], to key: ListKey) {
    var undo = Undo(nextObjectNumber: nextObjectNumber)
    undo.wasEmpty = true  // records nothing
    try? edit(key, with: edits, &undo)
  }

  /// Adds `delta` to the number of references naming `target`.
  @inline(__always)
  private mutating func count(_ target: ObjectID, by delta: Int32) {
    incoming.add(delta, to: target)
  }

  /// Undoes the changeset applied last (changes in reverse order, so an object changed twice
  /// gets its first value back).
  ///
  /// - Complexity: O(*k*) in the size of the changeset.
  mutating func revert(_ undo: Undo) {
    if undo.wasEmpty {
      entities = ObjectNumberMap()
      lists = lists.map { _ in ObjectNumberMap() }
      toOnes = toOnes.map { _ in ObjectNumberMap() }
      incoming = ObjectNumberMap()
      nextObjectNumber = undo.nextObjectNumber
      return
    }
    for step in undo.steps.reversed() {
      switch step {
      case .entity(let id, let entity): entities[id] = entity
      case .toOne(let key, let target): _ = setToOne(target, key)
      case .list(let key, let targets): _ = setList(targets, key)
      case .edits(let key, let edits): applyFitting(edits, to: key)
      }
    }
    nextObjectNumber = undo.nextObjectNumber
  }

  /// The objects of list value `value`.
  @inline(__always)
  fileprivate static func listTargets(_ value: PersistentValue) -> [ObjectID] {
    if case .references(let ids) = value { return ids }
    return []
  }
}
