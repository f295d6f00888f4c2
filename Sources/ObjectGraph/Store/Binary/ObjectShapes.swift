/// What an open ``BinaryStore`` remembers about its live objects between saves: which exist,
/// of which entity, and how long each ordered list is. That is enough to refuse a changeset
/// that does not fit (an update or delete of an unknown object, an insert of a known one, a
/// list edit out of range) before anything is written, for about 30 bytes an object instead
/// of a copy of every value; the values themselves live in the file (and in the contexts).
///
/// The rules are those of ``ChangesetApplier``, applied to shapes instead of snapshots, all or
/// nothing: a refused changeset leaves the shapes as they were, and ``revert(_:)`` undoes an
/// applied one whose write failed. They are as strict as what loading the store checks, so
/// that a save that returns leaves a store that opens: every value written fits its
/// property (``StoredValueCheck``), and every reference written names an object that is
/// live once the changeset is applied (not one it deletes, nor one never inserted).
struct ObjectShapes {
  /// A to-many property of one object.
  struct ListKey {
    var id: ObjectID
    var property: Int32
  }

  /// What ``revert(_:)`` needs to undo one applied changeset.
  struct Undo {
    fileprivate var entities: [(ObjectID, Int32?)] = []
    fileprivate var lengths: [(ListKey, Int32?)] = []
    fileprivate var nextObjectNumber: UInt64
    /// The shapes were empty: undoing empties them again, so no change is recorded.
    fileprivate var wasEmpty = false
  }

  private let schema: Schema
  /// For each entity, its to-many properties.
  private let listProperties: [[Int]]
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
  /// The length of each non-empty ordered list, by property number, then object.
  private var lengths: [ObjectNumberMap<Int32>]
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
  /// live objects' ids and entities, and the length of every non-empty list.
  struct Gathered: Sendable {
    var nextObjectNumber: UInt64
    var ids: [ObjectID] = []
    var entities: [Int32] = []
    var lists: [List] = []
    /// Objects whose entries in ``lists`` are out of date (changed after the snapshot those
    /// were noted in): their lists are ``changedLists``.
    var changed: [ObjectID] = []
    var changedLists: [List] = []

    /// A non-empty ordered list of one object.
    struct List {
      var id: ObjectID
      var property: Int32
      var length: Int32
    }

    /// The objects of a replayed graph, from the lengths of its snapshot's lists as the
    /// decoder noted them: the lists of the objects that changes replayed after the
    /// snapshot inserted, updated or deleted (`changed`) are read again from the graph,
    /// which they indexed. The graph's ids and entities are shared, not copied (positions
    /// of removed objects, entity ``PackedObjects/removed``, are skipped).
    init(schema: Schema, graph: LiveGraph, snapshotLists: [List], changed: [ObjectID]) {
      nextObjectNumber = graph.nextObjectNumber
      ids = graph.objects.ids
      entities = graph.objects.entities
      lists = snapshotLists
      self.changed = changed
      // Only these reads need the graph; setting the snapshot's lists aside is left to the
      // build, on the other core.
      let listProperties = ObjectShapes.listProperties(of: schema)
      for id in changed {
        guard let entity = graph.entity(of: id) else { continue }  // deleted
        for property in listProperties[entity] {
          if case .references(let targets)? = graph.value(of: id, property), !targets.isEmpty {
            changedLists.append(
              List(id: id, property: Int32(property), length: Int32(targets.count)))
          }
        }
      }
    }

    init(schema: Schema, contents: StoreContents) {
      nextObjectNumber = contents.nextObjectNumber
      let listProperties = ObjectShapes.listProperties(of: schema)
      let list = contents.list
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
          pieces[number] = Gathered(list, positions, listProperties: listProperties)
        }
      }
      ids.reserveCapacity(list.count)
      entities.reserveCapacity(list.count)
      for piece in pieces {
        ids += piece!.ids
        entities += piece!.entities
        lists += piece!.lists
      }
    }

    /// The objects at `positions` of `list`.
    private init(_ list: ObjectList, _ positions: Range<Int>, listProperties: [[Int]]) {
      nextObjectNumber = 0
      ids.reserveCapacity(positions.count)
      entities.reserveCapacity(positions.count)
      // The list properties of the entity of the object before, kept while it repeats:
      // reading them out of the array of arrays retained and released them each time.
      var lastEntity = -1
      var properties: [Int] = []
      list.forEach(in: positions, readsStrings: false) { id, entity, values in
        ids.append(id)
        entities.append(Int32(entity))
        if entity != lastEntity {
          lastEntity = entity
          properties = listProperties[entity]
        }
        for number in properties.indices {
          let property = properties[number]
          // Counted in place, before anything else is called: no retain of the list.
          let length = ObjectShapes.listCount(values[property])
          if length > 0 {
            lists.append(List(id: id, property: Int32(property), length: Int32(length)))
          }
        }
      }
    }
  }

  /// The shapes of gathered contents (ids are unique in a store's contents).
  init(schema: Schema, gathered: Gathered) {
    self.schema = schema
    listProperties = Self.listProperties(of: schema)
    valueCounts = schema.entities.map(\.properties.count)
    let checks = StoredValueCheck.checks(of: schema)
    self.checks = Array(checks.joined())
    checkStarts = checks.reduce(into: [0]) { $0.append($0.last! + $1.count) }
    hasRelationships = schema.entities.map { $0.properties.contains { $0.relationship != nil } }
    let propertyCount = valueCounts.max() ?? 0
    lengths = Array(repeating: ObjectNumberMap(), count: propertyCount)
    nextObjectNumber = gathered.nextObjectNumber
    entities.reserve(upTo: gathered.nextObjectNumber, expectedCount: gathered.ids.count)
    for (id, entity) in zip(gathered.ids, gathered.entities) where entity != PackedObjects.removed {
      _ = entities.insert(entity, for: id)
    }
    // The snapshot's lists of changed objects are out of date: marked by object number
    // (no hashing for dense ids), they give way to the lists read again. An object changed
    // twice was read twice: the same length, inserted once.
    var isChanged = ObjectNumberMap<Bool>()
    if !gathered.changed.isEmpty {
      isChanged.reserve(upTo: gathered.nextObjectNumber, expectedCount: gathered.ids.count)
      for id in gathered.changed { isChanged[id] = true }
    }
    for list in gathered.lists where isChanged[list.id] == nil {
      _ = lengths[Int(list.property)].insert(list.length, for: list.id)
    }
    for list in gathered.changedLists {
      _ = lengths[Int(list.property)].insert(list.length, for: list.id)
    }
  }

  /// For each entity of `schema`, its to-many properties.
  fileprivate static func listProperties(of schema: Schema) -> [[Int]] {
    schema.entities.map { entity in
      entity.properties.indices.filter { entity.properties[$0].relationship?.isToMany == true }
    }
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
  mutating func apply(_ changeset: Changeset) throws -> Undo {
    var undo = Undo(nextObjectNumber: nextObjectNumber)
    if isEmpty {
      // A first save of a whole graph records nothing per object.
      undo.wasEmpty = true
      entities.reserve(
        upTo: changeset.nextObjectNumber, expectedCount: changeset.insertedObjects.count)
    } else {
      undo.entities.reserveCapacity(changeset.insertedObjects.count + changeset.deleted.count)
    }
    do {
      try applyChanges(of: changeset, recordingIn: &undo)
    } catch {
      revert(undo)
      throw error
    }
    nextObjectNumber = max(nextObjectNumber, changeset.nextObjectNumber)
    return undo
  }

  private mutating func applyChanges(of changeset: Changeset, recordingIn undo: inout Undo)
    throws
  {
    let applier = ChangesetApplier(schema: schema)
    // The references updates write, checked once the whole changeset is applied (those of
    // inserted objects are read again from them then).
    var references: [WrittenReference] = []
    // Read through locals: a method of `self` called in the closure would copy `self`.
    let (checks, checkStarts, schema) = (self.checks, self.checkStarts, self.schema)
    try changeset.insertedObjects.forEach { id, entity, values in
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
      if !undo.wasEmpty { undo.entities.append((id, nil)) }
      // A new object has no lengths yet (deleting one removes its own): only non-empty
      // lists are noted.
      for property in listProperties[entity] {
        let count = Self.listCount(values[property])
        if count > 0 { setLength(count, of: property, id, &undo) }
      }
    }
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
        let isList = property.relationship?.isToMany == true
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
          if isList { setLength(Self.listCount(value), of: change.property, update.id, &undo) }
        case .edit(let edits):
          guard isList else {
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
          let length = Int(lengths[change.property][update.id] ?? 0)
          let newLength = try edits.reduce(length) { try $1.count(after: $0) }
          setLength(newLength, of: change.property, update.id, &undo)
        }
      }
    }
    for id in changeset.deleted {
      guard let entityIndex = entities[id] else {
        throw ObjectGraphError(.corruptStore, "deleted object \(id) does not exist", objectID: id)
      }
      setEntity(nil, of: id, &undo)
      for property in listProperties[Int(entityIndex)] { setLength(0, of: property, id, &undo) }
    }
    // Every reference written must name an object live now: not one deleted by this
    // changeset, nor one never stored.
    let (hasRelationships, live) = (self.hasRelationships, self.entities)
    var missing: (ObjectID, Int, Int, ObjectID)?
    changeset.insertedObjects.forEach { id, entity, values in
      guard missing == nil, hasRelationships[entity] else { return }
      let start = checkStarts[entity]
      for property in 0..<values.count where checks[start + property].isRelationship {
        switch (values.baseAddress! + property).pointee {
        case .reference(let target) where live[target] == nil:
          missing = (id, entity, property, target)
        case .references(let targets):
          if let target = targets.first(where: { live[$0] == nil }) {
            missing = (id, entity, property, target)
          }
        default: continue
        }
      }
    }
    if let (id, entity, property, target) = missing {
      throw dangling(id, entity, property, target, changeset)
    }
    for reference in references where entities[reference.target] == nil {
      throw dangling(
        reference.source, Int(reference.entity), Int(reference.property), reference.target,
        changeset)
    }
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

  private mutating func setEntity(_ entity: Int32?, of id: ObjectID, _ undo: inout Undo) {
    let old = entities.updateValue(entity, for: id)
    if !undo.wasEmpty { undo.entities.append((id, old)) }
  }

  private mutating func setLength(
    _ length: Int, of property: Int, _ id: ObjectID, _ undo: inout Undo
  ) {
    let old = lengths[property].updateValue(length > 0 ? Int32(length) : nil, for: id)
    if undo.wasEmpty || (old == nil && length == 0) { return }
    undo.lengths.append((ListKey(id: id, property: Int32(property)), old))
  }

  /// Undoes the changeset applied last (changes in reverse order, so an object changed twice
  /// gets its first value back).
  ///
  /// - Complexity: O(*k*) in the size of the changeset.
  mutating func revert(_ undo: Undo) {
    if undo.wasEmpty {
      entities = ObjectNumberMap()
      lengths = lengths.map { _ in ObjectNumberMap() }
      nextObjectNumber = undo.nextObjectNumber
      return
    }
    for (id, entity) in undo.entities.reversed() { entities[id] = entity }
    for (key, length) in undo.lengths.reversed() { lengths[Int(key.property)][key.id] = length }
    nextObjectNumber = undo.nextObjectNumber
  }

  @inline(__always)
  fileprivate static func listCount(_ value: PersistentValue) -> Int {
    if case .references(let ids) = value { return ids.count }
    return 0
  }
}
