import Foundation

/// Decodes the payload of one record (written by ``RecordWriter``) into a changeset or a
/// snapshot.
///
/// Every read is bounds-checked: a payload that does not decode throws a ``FormatError`` with
/// the file offset of the first byte that does not make sense, and never traps.
struct RecordReader {
  /// What a record holds.
  enum Record {
    /// One save.
    case changeset(Changeset)
    /// The whole live graph.
    case snapshot(objects: PackedObjects, nextObjectNumber: UInt64)
  }

  /// A decoded record and how many bytes its whole objects took.
  struct Decoded {
    var record: Record
    var objectBytes: Int
    var objectCount: Int
    /// For a snapshot: the relationship values of its objects (non-empty lists and to-one
    /// references), noted as they were decoded, a run of them for each part decoded on its
    /// own (see ``ObjectShapes/Gathered``).
    var relations: [ObjectShapes.Gathered.Relations] = []
  }

  private var reader: ByteReader
  /// How the records name the schema's entities and properties.
  private let numbering: FileNumbering
  private let strings = StringContext()
  /// The previous deferred string of each run slot (when strings are deferred, their bytes
  /// are the context of the next prefix-shared string).
  private let deferredStrings = ValueContext<DeferredStrings.Span>()
  private let dateContext = ValueContext<Int64>()
  private var objectBytes = 0
  /// Every non-empty list and to-one reference decoded, with its owner and property.
  private var relations = ObjectShapes.Gathered.Relations()
  /// Those of the parts of a snapshot in parts, each part's decoded by a reader of its own:
  /// kept apart, not joined (joining copied 2.4 MB of to-ones for 101,100 boxes, on one core
  /// while the other waited).
  private var partRelations: [ObjectShapes.Gathered.Relations] = []
  /// The values of the object being read in number order, by run slot, until they are
  /// added in order of position (an entity not numbered by position).
  private var pending: [PendingValue] = []

  /// A value read in number order, not yet added.
  private enum PendingValue {
    case value(PersistentValue)
    /// A string left as bytes: the count of bytes it shares with the slot's previous string,
    /// then the rest (in the record's bytes).
    case deferredString(shared: Int, suffix: UnsafeRawBufferPointer)
  }

  private init(_ reader: ByteReader, numbering: FileNumbering) {
    self.reader = reader
    self.numbering = numbering
  }

  /// Decodes a record's payload (kind byte and body).
  ///
  /// - Parameters:
  ///   - payload: The payload's bytes, checksum already verified.
  ///   - offset: The file offset of the payload's first byte, for error messages.
  ///   - schema: The file's schema: every whole object must be of one of its entities and
  ///     have one value per property.
  ///   - defersStrings: Whether a snapshot's strings are left as bytes
  ///     (``PackedObjects/deferredStrings``), for a loader that decodes them when read.
  /// - Throws: ``FormatError`` naming the offset of the first undecodable byte.
  /// - Complexity: O(*n*) in the payload's size.
  static func decode(
    _ payload: UnsafeRawBufferPointer, at offset: Int, schema: Schema, defersStrings: Bool = false
  ) throws(FormatError) -> Decoded {
    try decode(
      payload, at: offset, numbering: try FileNumbering(schema), defersStrings: defersStrings)
  }

  /// Decodes a record's payload (kind byte and body) of a file whose schema is numbered by
  /// `numbering`; see ``decode(_:at:schema:defersStrings:)``.
  static func decode(
    _ payload: UnsafeRawBufferPointer, at offset: Int, numbering: FileNumbering,
    defersStrings: Bool = false
  ) throws(FormatError) -> Decoded {
    var decoder = RecordReader(ByteReader(payload, origin: offset), numbering: numbering)
    let kindOffset = decoder.reader.fileOffset
    let kindByte = try decoder.reader.readByte()
    let record: Record
    var objectCount = 0
    switch BinaryFormat.RecordKind(rawValue: kindByte) {
    case .changeset:
      let changeset = try decoder.readChangeset()
      objectCount = changeset.insertedObjects.count
      record = .changeset(changeset)
    case .snapshot:
      let next = try decoder.reader.readVarint()
      let objects = try decoder.readObjects(defersStrings: defersStrings)
      objectCount = objects.liveCount
      record = .snapshot(objects: objects, nextObjectNumber: next)
    case .snapshotInParts:
      let next = try decoder.reader.readVarint()
      let objects = try decoder.readParts(defersStrings: defersStrings)
      objectCount = objects.liveCount
      record = .snapshot(objects: objects, nextObjectNumber: next)
    case nil:
      throw FormatError(offset: kindOffset, message: "unknown record kind \(kindByte)")
    }
    guard decoder.reader.isAtEnd else {
      throw decoder.reader.failure("\(decoder.reader.remaining) unexpected bytes after record")
    }
    var decoded = Decoded(
      record: record, objectBytes: decoder.objectBytes, objectCount: objectCount)
    if case .snapshot = record {
      decoded.relations = decoder.partRelations
      if !decoder.relations.isEmpty { decoded.relations.append(decoder.relations) }
    }
    return decoded
  }

  /// Decodes one value written by ``RecordWriter/encodedValue(_:)`` (a schema's
  /// ``PropertyDescription/absentValue``), which must take all of `bytes`.
  ///
  /// - Throws: ``FormatError`` at `offset` when the bytes are not one value.
  static func decodeValue(_ bytes: [UInt8], at offset: Int) throws(FormatError)
    -> PersistentValue
  {
    let decoded = bytes.withUnsafeBytes { buffer in
      Result { () throws(FormatError) -> PersistentValue in
        var decoder = RecordReader(ByteReader(buffer, origin: offset), numbering: .positional)
        let value = try decoder.readValue(slot: 0, property: -1, owner: ObjectID(rawValue: 0))
        guard decoder.reader.isAtEnd else {
          throw decoder.reader.failure("\(decoder.reader.remaining) bytes after a value")
        }
        return value
      }
    }
    return try decoded.get()
  }

  private mutating func readChangeset() throws(FormatError) -> Changeset {
    let next = try reader.readVarint()
    let inserted = try readObjects()
    let updateCount = try reader.readCount(minimumElementSize: 3)
    var updated: [ObjectUpdate] = []
    updated.reserveCapacity(updateCount)
    var previousID: UInt64 = 0
    for _ in 0..<updateCount {
      let id = ObjectID(rawValue: try reader.readDelta(from: previousID))
      previousID = id.rawValue
      let entityOffset = reader.fileOffset
      let entitySlot = try reader.readInt()
      guard let entity = numbering.entityPosition(slot: entitySlot) else {
        throw FormatError(
          offset: entityOffset,
          message: "update of object \(id) names entity number \(entitySlot &+ 1), which no "
            + "entity of the schema has")
      }
      let changeCount = try reader.readCount(minimumElementSize: 2)
      var changes: [PropertyChange] = []
      changes.reserveCapacity(changeCount)
      for _ in 0..<changeCount {
        if let change = try readChange(entity: entity, owner: id) { changes.append(change) }
      }
      updated.append(ObjectUpdate(id: id, entity: entity, changes: changes))
    }
    let deleteCount = try reader.readCount()
    var deleted: [ObjectID] = []
    deleted.reserveCapacity(deleteCount)
    previousID = 0
    for _ in 0..<deleteCount {
      previousID = try reader.readDelta(from: previousID)
      deleted.append(ObjectID(rawValue: previousID))
    }
    return Changeset(
      insertedObjects: ObjectList(packed: inserted), updated: updated, deleted: deleted,
      nextObjectNumber: next)
  }

  /// Reads the parts of a snapshot in parts into one list. Every part must decode on its own
  /// (its value context starts afresh) and take exactly the bytes its table entry gives.
  ///
  /// With deferred strings the parts decode on as many threads as there are cores: a part's
  /// decode then allocates almost nothing (its strings stay bytes in one buffer), so the
  /// other thread's fresh heap costs few page faults. Decoding strings on another thread
  /// did not pay (their allocations were fresh memory whose page faults cost what the second
  /// core saved), so without deferral the parts decode in turn.
  private mutating func readParts(defersStrings: Bool) throws(FormatError) -> PackedObjects {
    let tableOffset = reader.fileOffset
    let partCount = try reader.readCount(minimumElementSize: 2)
    guard partCount > 0 else { throw FormatError(offset: tableOffset, message: "no parts") }
    var parts: [(objectCount: Int, byteCount: Int)] = []
    var objectTotal = 0
    var byteTotal = 0
    for _ in 0..<partCount {
      let part = (
        objectCount: try reader.readCount(minimumElementSize: 3), byteCount: try reader.readCount()
      )
      parts.append(part)
      objectTotal += part.objectCount
      byteTotal += part.byteCount
    }
    guard byteTotal == reader.remaining else {
      throw reader.failure(
        "the parts' table gives \(byteTotal) bytes, \(reader.remaining) are left")
    }
    if defersStrings && parts.count > 1 {
      return try readPartsInParallel(parts)
    }
    return try PackedObjects.filling(
      objectCapacity: objectTotal,
      valueCapacity: numbering.valueCapacity(objects: objectTotal, bytes: byteTotal),
      deferredStringBytes: defersStrings ? Self.deferredStringGuess(byteTotal) : nil
    ) { (objects: inout PackedObjects.Filler) throws(FormatError) in
      for (number, part) in parts.enumerated() {
        let origin = reader.fileOffset
        let read = try Self.readPart(
          number, of: partCount, objectCount: part.objectCount,
          ByteReader(try reader.readBytes(part.byteCount), origin: origin),
          numbering: numbering, into: &objects)
        objectBytes += read.objectBytes
        partRelations.append(read.relations)
      }
    }
  }

  /// Decodes part `number` of a snapshot in parts from its own bytes (its value context
  /// afresh) into `objects`; returns the bytes its objects took and their relationship values.
  private static func readPart(
    _ number: Int, of partCount: Int, objectCount: Int, _ bytes: ByteReader,
    numbering: FileNumbering, into objects: inout PackedObjects.Filler
  ) throws(FormatError) -> (objectBytes: Int, relations: ObjectShapes.Gathered.Relations) {
    var decoder = RecordReader(bytes, numbering: numbering)
    decoder.relations.reserve(forObjects: objectCount)
    try decoder.readObjects(count: objectCount, into: &objects)
    guard decoder.reader.isAtEnd else {
      throw decoder.reader.failure(
        "\(decoder.reader.remaining) unexpected bytes after part \(number + 1) of \(partCount)")
    }
    return (decoder.objectBytes, decoder.relations)
  }

  /// Decodes the parts (their table read) on as many threads as there are cores, strings
  /// deferred.
  private mutating func readPartsInParallel(_ parts: [(objectCount: Int, byteCount: Int)])
    throws(FormatError) -> PackedObjects
  {
    let numbering = numbering
    var buffers: [(bytes: UnsafeRawBufferPointer, origin: Int)] = []
    for part in parts {
      let origin = reader.fileOffset
      buffers.append((try reader.readBytes(part.byteCount), origin))
    }
    var objectBytes = [Int](repeating: 0, count: parts.count)
    var relations = [ObjectShapes.Gathered.Relations](repeating: .init(), count: parts.count)
    let capacities = parts.map { part in
      PackedObjects.PartCapacity(
        objects: part.objectCount,
        values: numbering.valueCapacity(objects: part.objectCount, bytes: part.byteCount),
        deferredStringBytes: Self.deferredStringGuess(part.byteCount))
    }
    let objects = try objectBytes.withUnsafeMutableBufferPointer {
      objectBytes throws(FormatError) in
      try relations.withUnsafeMutableBufferPointer { relations throws(FormatError) in
        try PackedObjects.filling(parts: capacities) {
          (number: Int, objects: inout PackedObjects.Filler) throws(FormatError) in
          (objectBytes[number], relations[number]) = try Self.readPart(
            number, of: parts.count, objectCount: parts[number].objectCount,
            ByteReader(buffers[number].bytes, origin: buffers[number].origin),
            numbering: numbering, into: &objects)
        }
      }
    }
    self.objectBytes += objectBytes.reduce(0, +)
    partRelations += relations
    return objects
  }

  private mutating func readObjects(defersStrings: Bool = false) throws(FormatError)
    -> PackedObjects
  {
    let count = try reader.readCount(minimumElementSize: 3)
    // Most saves insert nothing: no buffers for them (a replay of 1,000 moves made 4,000).
    guard count > 0 else { return PackedObjects() }
    // Exact for one entity; never more than the payload could hold (a value takes a byte).
    return try PackedObjects.filling(
      objectCapacity: count,
      valueCapacity: numbering.valueCapacity(objects: count, bytes: reader.remaining),
      deferredStringBytes: defersStrings ? Self.deferredStringGuess(reader.remaining) : nil
    ) { (objects: inout PackedObjects.Filler) throws(FormatError) in
      try readObjects(count: count, into: &objects)
    }
  }

  /// Room for the bytes of the deferred strings of `byteCount` bytes of objects: shared
  /// prefixes make strings take more room decoded than encoded, and memory reserved but
  /// never touched costs nothing.
  private static func deferredStringGuess(_ byteCount: Int) -> Int { 4 * byteCount }

  /// Reads `count` objects, adding them to `objects`.
  private mutating func readObjects(count: Int, into objects: inout PackedObjects.Filler)
    throws(FormatError)
  {
    // Each object's layout is read in place: a copy per object retained its arrays, whose
    // counts the cores reading a snapshot's parts then fought over (a read of records by
    // number took four times as long as one by position).
    let layouts = numbering.entities
    try layouts.withUnsafeBufferPointer { (layouts) throws(FormatError) in
      var previousID: UInt64 = 0
      for _ in 0..<count {
        let start = reader.fileOffset
        let id = ObjectID(rawValue: try reader.readDelta(from: previousID))
        previousID = id.rawValue
        let entitySlot = try reader.readInt()
        let valueCount = try reader.readCount()
        guard let entity = numbering.entityPosition(slot: entitySlot),
          layouts[entity].shortestRun <= valueCount, valueCount <= layouts[entity].longestRun
        else {
          throw Self.noSuchEntity(id, entitySlot, valueCount, at: start)
        }
        let layout = layouts.baseAddress! + entity
        guard objects.hasRoom(forValues: layout.pointee.propertyCount) else {
          throw FormatError(
            offset: start, message: "more objects or values than the record holds")
        }
        objects.beginObject(id: id, entity: entity)
        if layout.pointee.isPositional && valueCount == layout.pointee.propertyCount {
          for property in 0..<valueCount {
            try readValue(slot: property, property: property, owner: id, into: &objects)
          }
        } else if valueCount <= layout.pointee.orderedRun {
          try readOrderedRun(of: layout, valueCount: valueCount, owner: id, into: &objects)
        } else {
          try readRun(of: layout, valueCount: valueCount, owner: id, into: &objects)
        }
        objectBytes += reader.fileOffset - start
      }
    }
  }

  /// The error for object `id`, whose entity number or number of values no entity of the
  /// schema has (made out of line, as for ``ByteReader/readBytes(_:)``).
  @inline(never)
  private static func noSuchEntity(_ id: ObjectID, _ slot: Int, _ count: Int, at offset: Int)
    -> FormatError
  {
    FormatError(
      offset: offset,
      message: "object \(id) of entity number \(slot &+ 1) has \(count) values, which no "
        + "entity of the schema has")
  }

  /// Reads the `valueCount` values of an object whose run holds properties in order of
  /// position (``FileNumbering/Entity/orderedRun``) straight into place: a hole's value read
  /// and dropped, each property the run does not hold given its absent value where it goes.
  /// A store migrated by adding or removing properties reads its records this way, at
  /// about the cost of reading them by position.
  private mutating func readOrderedRun(
    of layout: UnsafePointer<FileNumbering.Entity>, valueCount: Int, owner: ObjectID,
    into objects: inout PackedObjects.Filler
  ) throws(FormatError) {
    var next = 0
    for slot in 0..<valueCount {
      let property = layout.pointee.position(ofSlot: slot)
      guard property >= 0 else {
        _ = try readValue(slot: slot, property: property, owner: owner)  // for its context
        continue
      }
      // Properties the run skips are past it (the run is in order): every one has an
      // absent value (checked with the count).
      while next < property {
        objects.appendValue(layout.pointee.absentValues[next] ?? .null)
        next += 1
      }
      try readValue(slot: slot, property: property, owner: owner, into: &objects)
      next = property + 1
    }
    while next < layout.pointee.propertyCount {
      objects.appendValue(layout.pointee.absentValues[next] ?? .null)
      next += 1
    }
  }

  /// Reads the `valueCount` values of an object of an entity not numbered by position, or
  /// written before properties were added or after some were removed: in number order into
  /// ``pending``, then added in order of position, holes dropped, a property past the
  /// record's values taking its absent value.
  private mutating func readRun(
    of layout: UnsafePointer<FileNumbering.Entity>, valueCount: Int, owner: ObjectID,
    into objects: inout PackedObjects.Filler
  ) throws(FormatError) {
    pending.removeAll(keepingCapacity: true)
    for slot in 0..<valueCount {
      let property = layout.pointee.position(ofSlot: slot)
      if property >= 0, objects.defersStrings, let tag = reader.peekByte(),
        tag == BinaryFormat.ValueTag.string.rawValue
          || tag == BinaryFormat.ValueTag.prefixedString.rawValue
      {
        _ = try reader.readByte()
        var shared = 0
        if tag == BinaryFormat.ValueTag.prefixedString.rawValue {
          shared = try readSharedCount(previousCount: deferredStrings[slot]?.count ?? 0)
        }
        let suffix = try reader.readBytes(try reader.readCount())
        pending.append(.deferredString(shared: shared, suffix: suffix))
      } else {
        // A hole's value is read for its context, and dropped.
        pending.append(.value(try readValue(slot: slot, property: property, owner: owner)))
      }
    }
    // Each value moved out, a null left in its place: no retain and release per value.
    var run: [PendingValue] = []
    swap(&run, &pending)
    defer { swap(&run, &pending) }
    run.withUnsafeMutableBufferPointer { run in
      for (position, slot) in layout.pointee.runSlotByPosition.enumerated() {
        guard slot < valueCount else {
          // Every property past `shortestRun` has one (checked with the count).
          objects.appendValue(layout.pointee.absentValues[position] ?? .null)
          continue
        }
        let value = (run.baseAddress! + slot).move()
        (run.baseAddress! + slot).initialize(to: .value(.null))
        switch value {
        case .value(let value):
          objects.appendValue(value)
        case .deferredString(let shared, let suffix):
          deferredStrings[slot] = objects.appendDeferredString(
            sharing: shared, of: deferredStrings[slot] ?? DeferredStrings.Span(), then: suffix)
        }
      }
    }
  }

  /// Reads a change of an object of the entity at position `entity`; nil for a change of a
  /// property removed since the record was written (read, and dropped).
  private mutating func readChange(entity: Int, owner: ObjectID) throws(FormatError)
    -> PropertyChange?
  {
    let propertyOffset = reader.fileOffset
    let slot = try reader.readInt()
    let layout = numbering.entities[entity]
    guard slot >= 0, slot < layout.longestRun else {
      throw FormatError(
        offset: propertyOffset,
        message: "change of object \(owner) names property number \(slot &+ 1), which entity "
          + "number \(numbering.entitySlot(entity) + 1) does not have")
    }
    let property = layout.position(ofSlot: slot)
    guard property >= 0 else {
      _ = try readChangeKind(slot: slot, property: property, owner: owner)
      return nil
    }
    return PropertyChange(
      property: property, kind: try readChangeKind(slot: slot, property: property, owner: owner))
  }

  /// Reads what a change does, after the property it names.
  private mutating func readChangeKind(slot: Int, property: Int, owner: ObjectID)
    throws(FormatError) -> PropertyChange.Kind
  {
    let kindOffset = reader.fileOffset
    let kindByte = try reader.readByte()
    switch BinaryFormat.ChangeKind(rawValue: kindByte) {
    case .set:
      return .set(try readValue(slot: slot, property: property, owner: owner))
    case .edit:
      let count = try reader.readCount(minimumElementSize: 2)
      var edits: [ListEdit] = []
      edits.reserveCapacity(count)
      for _ in 0..<count {
        let operationOffset = reader.fileOffset
        let operation = try reader.readByte()
        switch BinaryFormat.EditOperation(rawValue: operation) {
        case .insert:
          let id = ObjectID(rawValue: try reader.readDelta(from: owner.rawValue))
          edits.append(.insert(id, at: try reader.readInt()))
        case .remove:
          edits.append(.remove(at: try reader.readInt()))
        case .move:
          let from = try reader.readInt()
          edits.append(.move(from: from, to: try reader.readInt()))
        case nil:
          throw FormatError(
            offset: operationOffset, message: "unknown list edit operation \(operation)")
        }
      }
      return .edit(edits)
    case nil:
      throw FormatError(offset: kindOffset, message: "unknown change kind \(kindByte)")
    }
  }

  /// Reads a value of a whole object into `objects`: a string as bytes when `objects`
  /// defers strings, any other value decoded.
  @inline(__always)
  private mutating func readValue(
    slot: Int, property: Int, owner: ObjectID, into objects: inout PackedObjects.Filler
  ) throws(FormatError) {
    guard objects.defersStrings, let tag = reader.peekByte(),
      tag == BinaryFormat.ValueTag.string.rawValue
        || tag == BinaryFormat.ValueTag.prefixedString.rawValue
    else {
      return objects.appendValue(try readValue(slot: slot, property: property, owner: owner))
    }
    _ = try reader.readByte()
    let previous = deferredStrings[slot] ?? DeferredStrings.Span()
    var shared = 0
    if tag == BinaryFormat.ValueTag.prefixedString.rawValue {
      shared = try readSharedCount(previousCount: previous.count)
    }
    let suffix = try reader.readBytes(try reader.readCount())
    deferredStrings[slot] = objects.appendDeferredString(
      sharing: shared, of: previous, then: suffix)
  }

  /// Reads how many bytes a string shares with the property's previous string.
  private mutating func readSharedCount(previousCount: Int) throws(FormatError) -> Int {
    let sharedOffset = reader.fileOffset
    let shared = try reader.readInt()
    guard UInt(bitPattern: shared) <= UInt(bitPattern: previousCount) else {
      throw Self.sharesTooMuch(shared, previousCount, at: sharedOffset)
    }
    return shared
  }

  /// The error for a string said to share more bytes than its property's previous string
  /// has (made out of line, as for ``ByteReader/readBytes(_:)``).
  @inline(never)
  private static func sharesTooMuch(_ shared: Int, _ previousCount: Int, at offset: Int)
    -> FormatError
  {
    FormatError(
      offset: offset,
      message: "string shares \(shared) bytes with a previous string of \(previousCount) bytes")
  }

  /// Reads a value of run slot `slot` (its string and date context), of the property at
  /// position `property` (−1 for a hole, whose relationship values are not noted).
  private mutating func readValue(slot: Int, property: Int, owner: ObjectID)
    throws(FormatError) -> PersistentValue
  {
    typealias Tag = BinaryFormat.ValueTag
    let tagOffset = reader.fileOffset
    let tagByte = try reader.readByte()
    switch Tag(byte: tagByte) {
    case .null:
      return .null
    case .false:
      return .bool(false)
    case .true:
      return .bool(true)
    case .int:
      return .int(try reader.readSignedVarint())
    case .double:
      return .double(Double(bitPattern: try reader.readUInt64()))
    case .integralDouble:
      return .double(Double(try reader.readSignedVarint()))
    case .string:
      return .string(try readString(prefixed: false, slot))
    case .prefixedString:
      return .string(try readString(prefixed: true, slot))
    case .date:
      return .date(
        Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.readUInt64())))
    case .dateDelta:
      let previous = UInt64(bitPattern: dateContext[slot] ?? 0)
      let seconds = Int64(bitPattern: try reader.readDelta(from: previous))
      dateContext[slot] = seconds
      return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
    case .data:
      let bytes = try reader.readBytes(try reader.readCount())
      return .data(Data(bytes))
    case .uuid:
      // Loaded whole: copying the bytes into a zeroed tuple called `memmove` for each. A
      // `UUID` is its 16 bytes (`uuid`); made by `UUID(uuid:)`, an opaque call into
      // Foundation, each took 57 instructions.
      let bytes = try reader.readBytes(16)
      return .uuid(unsafeBitCast(bytes.loadUnaligned(as: uuid_t.self), to: UUID.self))
    case .url:
      return .url(try readURL(depth: 0))
    case .reference:
      let target = ObjectID(rawValue: try reader.readDelta(from: owner.rawValue))
      // Noted while at hand: an opened store's shapes need every reference.
      guard property >= 0 else { return .reference(target) }
      relations.toOnes.append(
        ObjectShapes.Gathered.Relations.ToOne(
          id: owner, property: Int32(truncatingIfNeeded: property), target: target))
      return .reference(target)
    case .references:
      let count = try reader.readCount()
      if count == 0 { return .references([]) }  // a leaf: no room to reserve
      var ids: [ObjectID] = []
      ids.reserveCapacity(count)
      var previous = owner.rawValue
      for _ in 0..<count {
        previous = try reader.readDelta(from: previous)
        ids.append(ObjectID(rawValue: previous))
      }
      // Shared with the value, not copied.
      guard property >= 0 else { return .references(ids) }
      relations.lists.append(
        ObjectShapes.Gathered.Relations.List(
          id: owner, property: Int32(truncatingIfNeeded: property), targets: ids))
      return .references(ids)
    case nil:
      throw FormatError(offset: tagOffset, message: "unknown value tag \(tagByte)")
    }
  }

  /// Reads a string (its tag read already): whole, or `prefixed` by bytes it shares with the
  /// run slot's previous string; it then becomes the slot's previous one.
  private mutating func readString(prefixed: Bool, _ slot: Int) throws(FormatError)
    -> String
  {
    var shared = 0
    let previous = strings.previous(slot)
    if prefixed { shared = try readSharedCount(previousCount: previous.count) }
    let suffix = try reader.readBytes(try reader.readCount())
    let string = String(
      concatenating: UnsafeRawBufferPointer(rebasing: previous[..<shared]), suffix)
    strings.remember(keepingPrefix: shared, then: suffix, for: slot)
    return string
  }

  private mutating func readURL(depth: Int) throws(FormatError) -> URL {
    let start = reader.fileOffset
    let bytes = try reader.readBytes(try reader.readCount())
    let relative = String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    let hasBase = try reader.readByte()
    var base: URL?
    switch hasBase {
    case 0: base = nil
    case 1 where depth < 8: base = try readURL(depth: depth + 1)
    default: throw FormatError(offset: reader.fileOffset - 1, message: "bad URL base marker")
    }
    guard let url = URL(string: relative, relativeTo: base) else {
      throw FormatError(offset: start, message: "undecodable URL \"\(relative)\"")
    }
    return url
  }
}

extension String {
  /// The string whose UTF-8 bytes are `prefix` then `suffix`, invalid UTF-8 repaired.
  fileprivate init(concatenating prefix: UnsafeRawBufferPointer, _ suffix: UnsafeRawBufferPointer) {
    self.init(unsafeUninitializedCapacity: prefix.count + suffix.count) { target in
      let raw = UnsafeMutableRawBufferPointer(target)
      raw.copyMemory(from: prefix)
      UnsafeMutableRawBufferPointer(rebasing: raw[prefix.count...]).copyMemory(from: suffix)
      return prefix.count + suffix.count
    }
  }
}
