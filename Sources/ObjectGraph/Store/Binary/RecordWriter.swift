import Foundation

/// Encodes changesets and snapshots into framed records of the binary format.
///
/// A record is `[length: UInt32][CRC-32C of length: UInt32][payload][CRC-32C of payload:
/// UInt32]`; the payload is the record kind's byte and its body. Values are encoded with
/// per-property context: a string stores only what differs from the previous string of the
/// same property (its run slot, see ``FileNumbering``) in the record, a whole-second date
/// only its distance from the previous one, and references their distance from the owning
/// object's id, so the seed workload's 101,100 boxes take about 40 bytes each.
struct RecordWriter: ~Copyable {
  /// An encoded, framed record. It owns the writer's buffer, so a save hands the file the
  /// bytes without copying them (3.6 MB for the seed workload's first save).
  struct Record: ~Copyable {
    private let writer: ByteWriter
    /// The bytes taken by whole objects (inserts and snapshot objects).
    let objectBytes: Int
    /// The number of whole objects encoded.
    let objectCount: Int

    fileprivate init(writer: consuming ByteWriter, objectBytes: Int, objectCount: Int) {
      self.writer = writer
      self.objectBytes = objectBytes
      self.objectCount = objectCount
    }

    /// The bytes to append to the file, for the duration of `body`.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows
      -> Result
    {
      try writer.withBytes(body)
    }

    /// A copy of the bytes to append to the file.
    var bytes: [UInt8] { writer.bytes }
  }

  private var writer: ByteWriter
  /// How the records name entities and properties (the file header's numbers).
  private let numbering: FileNumbering
  private let strings = StringContext()
  private let dateContext = ValueContext<Int64>()
  private var objectBytes = 0
  private var objectCount = 0
  /// The deferred strings of the object being written in number order, by position.
  private var objectStrings: [StoredString?] = []

  private init(kind: BinaryFormat.RecordKind, capacity: Int, numbering: FileNumbering) {
    writer = ByteWriter(capacity: capacity)
    self.numbering = numbering
    writer.writeUInt32(0)  // length, patched by `finish`
    writer.writeUInt32(0)  // length checksum, patched by `finish`
    writer.write(kind.rawValue)
  }

  /// A writer of one part of a snapshot in parts: no framing, fresh value context.
  private init(partCapacity: Int, numbering: FileNumbering) {
    writer = ByteWriter(capacity: partCapacity)
    self.numbering = numbering
  }

  /// The framed record of one save, in a file whose schema is numbered by `numbering`.
  ///
  /// - Complexity: O(*k*) in the size of the changeset.
  static func encode(_ changeset: Changeset, numbering: FileNumbering) throws -> Record {
    try encode(changeset, inserted: changeset.insertedPacked, numbering: numbering)
  }

  /// The framed record of one save, whose inserted objects are `inserted` (the
  /// changeset's ``Changeset/insertedPacked``, read once by the caller), in a file whose
  /// schema is numbered by `numbering`.
  ///
  /// - Throws: ``ObjectGraphError`` with code ``ObjectGraphError/Code/invalidValue`` when
  ///   the record would exceed the format's 4 GiB record limit.
  /// - Complexity: O(*k*) in the size of the changeset.
  static func encode(
    _ changeset: Changeset, inserted: PackedObjects, numbering: FileNumbering
  ) throws -> Record {
    var record = RecordWriter(
      kind: .changeset, capacity: 64 + inserted.count * 48, numbering: numbering)
    record.writer.writeVarint(changeset.nextObjectNumber)
    record.writeObjects(inserted)
    record.writer.writeVarint(UInt64(changeset.updated.count))
    var previousID: UInt64 = 0
    for update in changeset.updated {
      record.writer.writeDelta(update.id.rawValue, from: previousID)
      previousID = update.id.rawValue
      record.writer.writeInt(numbering.entitySlot(update.entity))
      record.writer.writeVarint(UInt64(update.changes.count))
      for change in update.changes {
        record.writeChange(
          change, slot: numbering.propertySlot(change.property, of: update.entity),
          owner: update.id)
      }
    }
    record.writer.writeVarint(UInt64(changeset.deleted.count))
    previousID = 0
    for id in changeset.deleted {
      record.writer.writeDelta(id.rawValue, from: previousID)
      previousID = id.rawValue
    }
    return try record.finish()
  }

  /// The framed record of a whole graph, as compaction writes it.
  ///
  /// - Parameter objects: The live objects, best sorted by id (it makes the record smaller).
  /// - Throws: ``ObjectGraphError`` with code ``ObjectGraphError/Code/invalidValue`` when
  ///   the record would exceed the format's 4 GiB record limit.
  /// - Complexity: O(*n*) in the number of objects and values.
  static func encodeSnapshot(
    _ objects: [ObjectSnapshot], nextObjectNumber: UInt64, numbering: FileNumbering,
    inParts: Bool = true, partCount: Int? = nil
  ) throws -> Record {
    try encodeSnapshot(
      PackedObjects(objects), nextObjectNumber: nextObjectNumber, numbering: numbering,
      inParts: inParts, partCount: partCount)
  }

  /// The framed record of a whole graph, from packed objects.
  ///
  /// - Parameters:
  ///   - inParts: Whether to write a snapshot in parts (format version 2), encoded on as
  ///     many threads as there are parts; a version 1 file takes a plain snapshot.
  ///   - partCount: The number of parts; by default four per core, each of at least
  ///     ``BinaryFormat/minimumObjectsPerPart`` objects, so that the cores of a reader take
  ///     parts as they are free (one per core left a reader's main thread waiting for a
  ///     worker that was slower to start).
  static func encodeSnapshot(
    _ objects: PackedObjects, nextObjectNumber: UInt64, numbering: FileNumbering,
    inParts: Bool = true, partCount: Int? = nil
  ) throws -> Record {
    guard inParts else {
      var record = RecordWriter(
        kind: .snapshot, capacity: 64 + objects.count * 48, numbering: numbering)
      record.writer.writeVarint(nextObjectNumber)
      record.writeObjects(objects)
      return try record.finish()
    }
    // Parts of about equal numbers of positions; each starts its value context afresh.
    let partCount = max(
      partCount
        ?? Parallel.pieceCount(
          for: objects.count, minimumPerPiece: BinaryFormat.minimumObjectsPerPart,
          piecesPerCore: 4), 1)
    let bounds = (0...partCount).map { objects.positionCount * $0 / partCount }
    var parts = [EncodedPart?](repeating: nil, count: partCount)
    parts.withUnsafeMutableBufferPointer { parts in
      Parallel.forEach(partCount) { part in
        let positions = bounds[part]..<bounds[part + 1]
        var encoder = RecordWriter(
          partCapacity: 64 + positions.count * 48, numbering: numbering)
        encoder.writeObjectRun(objects, in: positions)
        let (objectCount, objectBytes) = (encoder.objectCount, encoder.objectBytes)
        parts[part] = EncodedPart(
          writer: encoder.writer, objectCount: objectCount, objectBytes: objectBytes)
      }
    }
    var record = RecordWriter(
      kind: .snapshotInParts, capacity: 64 + objects.count * 48, numbering: numbering)
    record.writer.writeVarint(nextObjectNumber)
    record.writer.writeVarint(UInt64(partCount))
    for part in parts {
      record.writer.writeVarint(UInt64(part!.objectCount))
      record.writer.writeVarint(UInt64(part!.writer.count))
    }
    for part in parts {
      part!.writer.withBytes { record.writer.write($0) }
      record.objectBytes += part!.objectBytes
      record.objectCount += part!.objectCount
    }
    return try record.finish()
  }

  /// The bytes of `value` as a record's first value of its property (no context before it),
  /// for a schema's ``PropertyDescription/absentValue``; `.reference` and `.references`
  /// are relative to id 0.
  static func encodedValue(_ value: PersistentValue) -> [UInt8] {
    var encoder = RecordWriter(partCapacity: 16, numbering: .positional)
    encoder.writeValue(value, slot: 0, owner: ObjectID(rawValue: 0))
    return encoder.writer.bytes
  }

  /// One part of a snapshot in parts, encoded: its bytes stay in the buffer that it was
  /// written to until they are copied into the record (copied out first, into an array of
  /// their own, they cost a fresh 3.6 MB and its page faults in a save of 101,100 boxes).
  private final class EncodedPart {
    let writer: ByteWriter
    let objectCount: Int
    let objectBytes: Int

    init(writer: consuming ByteWriter, objectCount: Int, objectBytes: Int) {
      self.writer = writer
      self.objectCount = objectCount
      self.objectBytes = objectBytes
    }
  }

  private consuming func finish() throws -> Record {
    let payloadCount = writer.count - BinaryFormat.frameHeaderSize
    guard let length = UInt32(exactly: payloadCount) else {
      throw ObjectGraphError(
        .invalidValue,
        "a record of \(payloadCount) bytes exceeds the binary store's limit of 4 GiB per save")
    }
    writer.patchUInt32(length, at: 0)
    writer.patchUInt32(writer.checksum(of: 0..<4), at: 4)
    writer.writeUInt32(writer.checksum(of: BinaryFormat.frameHeaderSize..<writer.count))
    return Record(writer: writer, objectBytes: objectBytes, objectCount: objectCount)
  }

  private mutating func writeObjects(_ objects: PackedObjects) {
    writer.writeVarint(UInt64(objects.count))
    writeObjectRun(objects, in: 0..<objects.positionCount)
  }

  /// Writes the objects at `positions`, without their count; strings left as bytes are
  /// written from their bytes (a migration's objects: the decoder's strings never made into
  /// `String`s).
  private mutating func writeObjectRun(_ packed: PackedObjects, in positions: Range<Int>) {
    guard let first = positions.first else { return }
    var previousID: UInt64 = 0
    var strings = packed.deferredStrings.makeCursor(at: packed.valueRange(first).lowerBound)
    packed.values.withUnsafeBufferPointer { values in
      for position in positions where packed.isLive(position) {
        let id = packed.ids[position]
        let range = packed.valueRange(position)
        let start = writer.count
        writer.writeDelta(id.rawValue, from: previousID)
        previousID = id.rawValue
        let entity = Int(packed.entities[position])
        writer.writeInt(numbering.entitySlot(entity))
        if numbering.isPositional || numbering.entities[entity].isPositional {
          writer.writeVarint(UInt64(range.count))
          for (slot, index) in range.enumerated() {
            writeValue(at: index, of: values, strings: &strings, slot: slot, owner: id)
          }
        } else {
          // In number order, a retired number's slot null; the cursor reads the deferred
          // strings in order of position first.
          objectStrings.removeAll(keepingCapacity: true)
          for index in range {
            if case .null = values[index] {
              objectStrings.append(strings.string(at: index))
            } else {
              objectStrings.append(nil)
            }
          }
          let run = numbering.entities[entity].positionByRunSlot
          writer.writeVarint(UInt64(run.count))
          for (slot, property) in run.enumerated() {
            if property < 0 {
              writer.write(BinaryFormat.ValueTag.null.rawValue)
            } else if let string = objectStrings[property] {
              string.withBytes { writeString(bytes: $0, slot: slot) }
            } else {
              writeValue(values[range.lowerBound + property], slot: slot, owner: id)
            }
          }
        }
        objectBytes += writer.count - start
        objectCount += 1
      }
    }
  }

  /// Writes the value at `index` of `values` in run slot `slot`: a string left as bytes
  /// (a `.null` with a deferred string) from its bytes.
  @inline(__always)
  private mutating func writeValue(
    at index: Int, of values: UnsafeBufferPointer<PersistentValue>,
    strings: inout DeferredStrings.Cursor, slot: Int, owner: ObjectID
  ) {
    if case .null = values[index], let string = strings.string(at: index) {
      string.withBytes { writeString(bytes: $0, slot: slot) }
    } else {
      writeValue(values[index], slot: slot, owner: owner)
    }
  }

  /// Writes a change of the property a record names by `slot`.
  private mutating func writeChange(_ change: PropertyChange, slot: Int, owner: ObjectID) {
    writer.writeInt(slot)
    switch change.kind {
    case .set(let value):
      writer.write(BinaryFormat.ChangeKind.set.rawValue)
      writeValue(value, slot: slot, owner: owner)
    case .edit(let edits):
      writer.write(BinaryFormat.ChangeKind.edit.rawValue)
      writer.writeVarint(UInt64(edits.count))
      for edit in edits {
        switch edit {
        case .insert(let id, let index):
          writer.write(BinaryFormat.EditOperation.insert.rawValue)
          writer.writeDelta(id.rawValue, from: owner.rawValue)
          writer.writeInt(index)
        case .remove(let index):
          writer.write(BinaryFormat.EditOperation.remove.rawValue)
          writer.writeInt(index)
        case .move(let from, let to):
          writer.write(BinaryFormat.EditOperation.move.rawValue)
          writer.writeInt(from)
          writer.writeInt(to)
        }
      }
    }
  }

  /// Writes `value`, with the string and date context of run slot `slot`.
  private mutating func writeValue(_ value: PersistentValue, slot: Int, owner: ObjectID) {
    typealias Tag = BinaryFormat.ValueTag
    switch value {
    case .null:
      writer.write(Tag.null.rawValue)
    case .bool(let flag):
      writer.write(flag ? Tag.true.rawValue : Tag.false.rawValue)
    case .int(let number):
      writer.write(Tag.int.rawValue)
      writer.writeSignedVarint(number)
    case .double(let number):
      if let whole = Self.wholeNumber(number) {
        writer.write(Tag.integralDouble.rawValue)
        writer.writeSignedVarint(whole)
      } else {
        writer.write(Tag.double.rawValue)
        writer.writeUInt64(number.bitPattern)
      }
    case .string(let string):
      writeString(string, slot: slot)
    case .date(let date):
      let seconds = date.timeIntervalSinceReferenceDate
      if let whole = Self.wholeNumber(seconds) {
        writer.write(Tag.dateDelta.rawValue)
        writer.writeDelta(
          UInt64(bitPattern: whole), from: UInt64(bitPattern: dateContext[slot] ?? 0))
        dateContext[slot] = whole
      } else {
        writer.write(Tag.date.rawValue)
        writer.writeUInt64(seconds.bitPattern)
      }
    case .data(let data):
      writer.write(Tag.data.rawValue)
      writer.writeVarint(UInt64(data.count))
      data.withUnsafeBytes { writer.write($0) }
    case .uuid(let uuid):
      writer.write(Tag.uuid.rawValue)
      withUnsafeBytes(of: uuid.uuid) { writer.write($0) }
    case .url(let url):
      writer.write(Tag.url.rawValue)
      writeURL(url)
    case .reference(let id):
      writer.write(Tag.reference.rawValue)
      writer.writeDelta(id.rawValue, from: owner.rawValue)
    case .references(let ids):
      writer.write(Tag.references.rawValue)
      writer.writeVarint(UInt64(ids.count))
      var previous = owner.rawValue
      for id in ids {
        writer.writeDelta(id.rawValue, from: previous)
        previous = id.rawValue
      }
    }
  }

  private mutating func writeString(_ string: String, slot: Int) {
    // Native strings (every string Swift makes) are contiguous UTF-8: no copy.
    if string.utf8.withContiguousStorageIfAvailable({
      writeString(bytes: UnsafeRawBufferPointer($0), slot: slot)
    }) == nil {
      var contiguous = string
      contiguous.makeContiguousUTF8()
      contiguous.utf8.withContiguousStorageIfAvailable {
        writeString(bytes: UnsafeRawBufferPointer($0), slot: slot)
      }
    }
  }

  private mutating func writeString(bytes: UnsafeRawBufferPointer, slot: Int) {
    let shared = Self.sharedPrefixCount(strings.previous(slot), bytes)
    let suffix = UnsafeRawBufferPointer(rebasing: bytes[shared...])
    if shared >= BinaryFormat.minimumSharedPrefix {
      writer.write(BinaryFormat.ValueTag.prefixedString.rawValue)
      writer.writeVarint(UInt64(shared))
      writer.writeVarint(UInt64(suffix.count))
      writer.write(suffix)
    } else {
      writer.write(BinaryFormat.ValueTag.string.rawValue)
      writer.writeVarint(UInt64(bytes.count))
      writer.write(bytes)
    }
    // The shared prefix is the remembered string's already: only the rest is copied.
    strings.remember(keepingPrefix: shared, then: suffix, for: slot)
  }

  private mutating func writeURL(_ url: URL) {
    var relative = url.relativeString
    relative.makeContiguousUTF8()
    writer.writeVarint(UInt64(relative.utf8.count))
    relative.utf8.withContiguousStorageIfAvailable { writer.write(UnsafeRawBufferPointer($0)) }
    if let base = url.baseURL {
      writer.write(1)
      writeURL(base)
    } else {
      writer.write(0)
    }
  }

  /// The number of equal leading bytes, compared a word at a time.
  private static func sharedPrefixCount(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer)
    -> Int
  {
    let limit = min(a.count, b.count)
    var index = 0
    while index + 8 <= limit {
      let difference =
        a.loadUnaligned(fromByteOffset: index, as: UInt64.self)
        ^ b.loadUnaligned(fromByteOffset: index, as: UInt64.self)
      if difference != 0 {
        return index + UInt64(littleEndian: difference).trailingZeroBitCount / 8
      }
      index += 8
    }
    while index < limit && a[index] == b[index] { index += 1 }
    return index
  }

  /// The value as an `Int64` when that represents it exactly (including the sign of zero).
  static func wholeNumber(_ value: Double) -> Int64? {
    guard let whole = Int64(exactly: value), Double(whole).bitPattern == value.bitPattern else {
      return nil
    }
    return whole
  }
}
