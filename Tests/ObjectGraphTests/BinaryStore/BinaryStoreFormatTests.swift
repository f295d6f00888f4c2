import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// The primitive encodings behave as `FORMAT.md` says.
@Suite struct BinaryStoreFormatTests {
  @Test func crc32cMatchesTheStandardCheckValue() {
    #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    #expect(CRC32C.checksum([UInt8]()) == 0)
    let bytes = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let split = bytes.withUnsafeBytes { buffer in
      CRC32C.update(
        CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[..<333])),
        with: UnsafeRawBufferPointer(rebasing: buffer[333...]))
    }
    #expect(split == CRC32C.checksum(bytes))
  }

  /// Runs long enough to be checksummed as three interleaved thirds give what a bit at a
  /// time gives, at every length around the thresholds and from any earlier checksum.
  @Test func interleavedChecksumsMatchABitwiseOne() {
    func bitwise(_ crc: UInt32, _ bytes: ArraySlice<UInt8>) -> UInt32 {
      var crc = ~crc
      for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
      }
      return ~crc
    }
    var random = SplitMix64(seed: 11)
    let bytes = (0..<40_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    let third = CRC32C.interleavedMinimum
    for count in [3 * third - 1, 3 * third, 3 * third + 1, 3 * third + 8, 3 * third + 23, 40_000] {
      for start in [0, 1, 5] {
        let slice = bytes[start..<count]
        let expected = bitwise(0x1234_5678, slice)
        slice.withUnsafeBytes { #expect(CRC32C.update(0x1234_5678, with: $0) == expected) }
        slice.withUnsafeBytes { #expect(CRC32C.checksum($0) == bitwise(0, slice)) }
      }
    }
  }

  @Test func varintsRoundTripAtTheirExtremes() throws {
    let unsigned: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, UInt64(Int64.max), .max]
    let signed: [Int64] = [0, -1, 1, -64, 64, .min, .max]
    var writer = ByteWriter()
    for value in unsigned { writer.writeVarint(value) }
    for value in signed { writer.writeSignedVarint(value) }
    writer.writeInt(-5)
    #expect(writer.bytes.prefix(4) == [0, 1, 127, 0x80])
    try writer.bytes.withUnsafeBytes { buffer throws in
      var reader = ByteReader(buffer, origin: 0)
      for value in unsigned { #expect(try reader.readVarint() == value) }
      for value in signed { #expect(try reader.readSignedVarint() == value) }
      #expect(try reader.readInt() == -5)
      #expect(reader.isAtEnd)
    }
  }

  @Test func everyByteNamesTheTagItsRawValueDoes() {
    for byte in UInt8.min...UInt8.max {
      #expect(BinaryFormat.ValueTag(byte: byte) == BinaryFormat.ValueTag(rawValue: byte))
    }
  }

  /// A context keeps each property's last value, grows to the property written, and gives
  /// none (writing nothing) outside its limit, as the encoder and decoder both expect.
  @Test func aValueContextKeepsTheLastValueOfEachPropertyWithinItsLimit() {
    let context = ValueContext<Int64>()
    #expect(context[0] == nil)
    context[3] = 30
    #expect(context[3] == 30)
    #expect(context[2] == nil)
    context[100] = 1_000
    context[3] = 31
    #expect(context[3] == 31)
    #expect(context[100] == 1_000)
    context[3] = nil
    #expect(context[3] == nil)
    let limit = ValueContext<Int64>.limit
    context[limit - 1] = 7
    #expect(context[limit - 1] == 7)
    for outside in [-1, limit, Int.max, Int.min] {
      context[outside] = 9
      #expect(context[outside] == nil)
    }
    #expect(context[100] == 1_000)
  }

  @Test func malformedPrimitivesThrowInsteadOfTrapping() {
    let cases: [[UInt8]] = [
      [0x80],  // a varint cut short
      [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],  // more than 64 bits
      [0xFF, 0xFF, 0x03],  // a count larger than what is left
    ]
    for bytes in cases {
      bytes.withUnsafeBytes { buffer in
        var reader = ByteReader(buffer, origin: 100)
        #expect(throws: FormatError.self) {
          _ = try reader.readVarint()
          _ = try reader.readCount()
        }
      }
    }
  }

  /// Checksums of pieces combine into the checksum of the whole, at every split, so a big
  /// record is checksummed on several threads.
  @Test func checksumsOfPiecesCombineIntoTheWhole() {
    var random = SplitMix64(seed: 5)
    let bytes = (0..<5_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    let whole = CRC32C.checksum(bytes)
    for split in [0, 1, 7, 8, 9, 100, 2_500, 4_999, 5_000] {
      let first = CRC32C.checksum(Array(bytes[..<split]))
      let second = CRC32C.checksum(Array(bytes[split...]))
      #expect(CRC32C.combine(first, second, secondCount: bytes.count - split) == whole)
    }
    let big = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
    big.withUnsafeBytes { #expect(CRC32C.parallelChecksum($0) == CRC32C.checksum($0)) }
  }

  @Test func theHeaderStartsWithTheMagicAndVersion() throws {
    let header = try BinaryStoreHeader.encode(schema: ConformanceSchema.schema)
    #expect(Array(header.prefix(8)) == BinaryFormat.magic)
    #expect(header[8] == 2 && header[9] == 0)
    let decoded = try header.withUnsafeBytes { try BinaryStoreHeader.decode($0) }
    #expect(decoded.schema == ConformanceSchema.schema)
    #expect(decoded.byteCount == header.count)
  }

  @Test func aHeaderHoldingTheExpectedSchemaBytesIsNotDecodedAgain() throws {
    let header = try BinaryStoreHeader.encode(schema: ConformanceSchema.schema)
    let bytes = try BinaryStoreHeader.encodedSchema(ConformanceSchema.schema)
    // Handed another schema with those bytes, the decoder takes it as it is: no JSON read.
    let other = Schema(entities: [ConformanceSchema.schema.entities[0]])
    let taken = try header.withUnsafeBytes {
      try BinaryStoreHeader.decode($0, expecting: (schema: other, bytes: bytes))
    }
    #expect(taken.schema == other)
    #expect(taken.byteCount == header.count)
  }

  @Test func aHeaderEncodingTheSchemaOtherwiseIsDecoded() throws {
    // The same schema as JSON with other formatting, as another Foundation might write it.
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let schemaBytes = Array(try encoder.encode(ConformanceSchema.schema))
    var writer = ByteWriter(capacity: BinaryFormat.headerPrefixSize + schemaBytes.count + 4)
    writer.write(BinaryFormat.magic)
    withUnsafeBytes(of: BinaryFormat.currentVersion.littleEndian) { writer.write($0) }
    withUnsafeBytes(of: UInt16(0).littleEndian) { writer.write($0) }
    writer.writeUInt32(UInt32(schemaBytes.count))
    writer.write(schemaBytes)
    writer.writeUInt32(writer.checksum(of: 0..<writer.count))
    let header = writer.bytes
    let expected = try BinaryStoreHeader.encodedSchema(ConformanceSchema.schema)
    #expect(!schemaBytes.elementsEqual(expected))
    let decoded = try header.withUnsafeBytes {
      try BinaryStoreHeader.decode(
        $0, expecting: (schema: ConformanceSchema.schema, bytes: expected))
    }
    #expect(decoded.schema == ConformanceSchema.schema)
    // A damaged header is refused even when its schema bytes are the expected ones.
    var damaged = try BinaryStoreHeader.encode(schema: ConformanceSchema.schema)
    damaged[damaged.count - 1] ^= 0x01
    #expect(throws: FormatError.self) {
      try damaged.withUnsafeBytes {
        try BinaryStoreHeader.decode(
          $0, expecting: (schema: ConformanceSchema.schema, bytes: expected))
      }
    }
  }

  @Test func aSeedLikeObjectTakesAboutThirtyFiveBytes() throws {
    let boxes = (UInt64(1)...1_000).map { number -> ObjectSnapshot in
      var item = ConformanceSchema.item(number)
      item.values = [
        .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, UInt8(number % 256)))),
        .string("Box \(number)"),
        .string("Sed ut perspiciatis unde omnis iste natus error sit voluptatem \(number)"),
        .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(number))),
        .reference(ObjectID(rawValue: number / 10)), .references([]),
      ]
      return item
    }
    let record = try RecordWriter.encodeSnapshot(
      boxes, nextObjectNumber: 1_001, numbering: .positional)
    #expect(record.objectBytes / record.objectCount <= 36)
  }

  /// A snapshot in parts (format version 2) decodes to the same list as a plain one, each
  /// part's value context starting afresh: strings and dates that would share with the
  /// previous part's last object are written whole. Decoded for a store (strings deferred),
  /// the parts decode on several threads, each in room of its own: objects of entities with
  /// fewer values leave room that becomes removed positions between the parts.
  @Test(arguments: [1, 2, 3, 7], [false, true])
  func aSnapshotInPartsDecodesAsOneList(partCount: Int, defersStrings: Bool) throws {
    let objects = (UInt64(1)...500).map { number in
      number % 5 == 0
        ? ConformanceSchema.note(number, text: "Note number \(number)", item: number - 1)
        : ConformanceSchema.item(number, title: "Item number \(number)")
    }
    let plain = try RecordWriter.encodeSnapshot(
      objects, nextObjectNumber: 600, numbering: .positional, inParts: false)
    let parted = try RecordWriter.encodeSnapshot(
      objects, nextObjectNumber: 600, numbering: .positional, partCount: partCount)
    #expect(plain.bytes[BinaryFormat.frameHeaderSize] == BinaryFormat.RecordKind.snapshot.rawValue)
    #expect(
      parted.bytes[BinaryFormat.frameHeaderSize]
        == BinaryFormat.RecordKind.snapshotInParts.rawValue)
    #expect(parted.objectCount == objects.count)
    if defersStrings && partCount > 1 {
      let decoded = try Self.decode(
        payload: Array(parted.bytes[BinaryFormat.frameHeaderSize..<(parted.bytes.count - 4)]),
        defersStrings: true)
      guard case .snapshot(let decodedObjects, _) = decoded.record else {
        Issue.record("expected a snapshot record")
        return
      }
      #expect(
        decodedObjects.positionCount == objects.count + partCount - 1,
        "each part but the last closes its room with a removed position")
    }
    for record in [plain.bytes, parted.bytes] {
      let decoded = try Self.decode(
        payload: Array(record[BinaryFormat.frameHeaderSize..<(record.count - 4)]),
        defersStrings: defersStrings)
      guard case .snapshot(let decodedObjects, let next) = decoded.record else {
        Issue.record("expected a snapshot record")
        return
      }
      #expect(decodedObjects.snapshots == objects)
      #expect(decodedObjects.liveCount == objects.count)
      #expect(next == 600)
      #expect(decoded.objectCount == objects.count)
      #expect(defersStrings != decodedObjects.deferredStrings.isEmpty)
    }
  }

  /// A snapshot in parts whose table does not match its parts is refused with a format
  /// error, never read past its bytes, whether its parts decode in turn or at once.
  @Test(arguments: [false, true])
  func aSnapshotWithADamagedPartTableIsRefused(defersStrings: Bool) throws {
    let objects = (UInt64(1)...40).map { ConformanceSchema.item($0, title: "Item \($0)") }
    let record = try RecordWriter.encodeSnapshot(
      objects, nextObjectNumber: 50, numbering: .positional, partCount: 2)
    let payload = Array(record.bytes[BinaryFormat.frameHeaderSize..<(record.bytes.count - 4)])
    // Take the payload apart: kind, next object number, table, parts.
    var reader = ByteReader(UnsafeRawBufferPointer(start: nil, count: 0), origin: 0)
    var table: [(objects: Int, bytes: Int)] = []
    var bodyStart = 0
    try payload.withUnsafeBytes { bytes in
      reader = ByteReader(bytes, origin: 0)
      _ = try reader.readByte()
      _ = try reader.readVarint()
      for _ in 0..<(try reader.readCount()) {
        table.append((try reader.readCount(), try reader.readCount()))
      }
      bodyStart = reader.fileOffset
    }
    let body = Array(payload[bodyStart...])
    func rebuilt(_ table: [(objects: Int, bytes: Int)], body: [UInt8]) -> [UInt8] {
      var writer = ByteWriter(capacity: 64)
      writer.write(BinaryFormat.RecordKind.snapshotInParts.rawValue)
      writer.writeVarint(50)
      writer.writeVarint(UInt64(table.count))
      for part in table {
        writer.writeVarint(UInt64(part.objects))
        writer.writeVarint(UInt64(part.bytes))
      }
      return writer.bytes + body
    }
    #expect(table.count == 2 && table[0].bytes + table[1].bytes == body.count)
    let good = try Self.decode(payload: rebuilt(table, body: body), defersStrings: defersStrings)
    guard case .snapshot(let decoded, _) = good.record else {
      Issue.record("expected a snapshot record")
      return
    }
    #expect(decoded.snapshots == objects)
    let damaged: [(String, [UInt8])] = [
      ("no parts", rebuilt([], body: [])),
      (
        "parts' table gives",
        rebuilt([table[0], (table[1].objects, table[1].bytes + 1)], body: body)
      ),
      ("parts' table gives", rebuilt(table, body: body + [0])),
      (
        "unexpected bytes",
        rebuilt(
          [(table[0].objects, table[0].bytes + 1), (table[1].objects, table[1].bytes - 1)],
          body: body)
      ),
      ("end of record", rebuilt([(table[0].objects + 1, table[0].bytes), table[1]], body: body)),
      (
        "unexpected bytes", rebuilt([(table[0].objects - 1, table[0].bytes), table[1]], body: body)
      ),
    ]
    for (words, payload) in damaged {
      let error = try #require(throws: FormatError.self) {
        try Self.decode(payload: payload, defersStrings: defersStrings)
      }
      #expect(error.message.contains(words), "\(error.message)")
      #expect(error.offset >= 0 && error.offset <= payload.count)
    }
  }

  private static func decode(payload: [UInt8], defersStrings: Bool = false) throws
    -> RecordReader.Decoded
  {
    try payload.withUnsafeBytes { bytes in
      try RecordReader.decode(
        bytes, at: 0, schema: ConformanceSchema.schema, defersStrings: defersStrings)
    }
  }

  @Test func stringsSharingPrefixesOfEveryLengthDecodeAsWritten() throws {
    // Neighbours share 0 to 40 bytes, across word boundaries and inside multi-byte
    // characters, so the word-at-a-time prefix search is checked at every offset.
    let base = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH"
    var titles: [String] = []
    for length in 0...40 {
      titles.append(String(base.prefix(length)) + "é" + String(length))
      titles.append(String(base.prefix(length)) + "😀x")
    }
    titles += ["", "é", "éé", "e\u{301}", "😀", "😀😀", String(repeating: "z", count: 300)]
    let objects = titles.enumerated().map { number, title in
      ConformanceSchema.item(UInt64(number + 1), title: title)
    }
    let record = try RecordWriter.encodeSnapshot(
      objects, nextObjectNumber: 1_000, numbering: .positional)
    let decoded = try record.bytes.withUnsafeBytes { bytes in
      try RecordReader.decode(
        UnsafeRawBufferPointer(rebasing: bytes[BinaryFormat.frameHeaderSize..<(bytes.count - 4)]),
        at: BinaryFormat.frameHeaderSize, schema: ConformanceSchema.schema)
    }
    guard case .snapshot(let decodedObjects, _) = decoded.record else {
      Issue.record("expected a snapshot record")
      return
    }
    #expect(decodedObjects.snapshots == objects)
  }

  /// The writer grows its own buffer: what it holds after outgrowing its first capacity is
  /// what an array would hold, and patches and checksums see the same bytes.
  @Test func byteWriterGrowsAndKeepsEveryByte() {
    var writer = ByteWriter(capacity: 4)
    var expected: [UInt8] = []
    writer.writeUInt32(0)
    expected += [0, 0, 0, 0]
    for value in [0, 1, 127, 128, 300, 1 << 40, UInt64.max] as [UInt64] {
      writer.writeVarint(value)
      var rest = value
      while rest >= 0x80 {
        expected.append(UInt8(truncatingIfNeeded: rest) | 0x80)
        rest >>= 7
      }
      expected.append(UInt8(rest))
    }
    let text = Array("a string longer than the first capacity of the writer".utf8)
    writer.write(text)
    expected += text
    writer.writeUInt64(0x0102_0304_0506_0708)
    expected += [8, 7, 6, 5, 4, 3, 2, 1]
    writer.patchUInt32(0xAABB_CCDD, at: 0)
    expected.replaceSubrange(0..<4, with: [0xDD, 0xCC, 0xBB, 0xAA])
    #expect(writer.count == expected.count)
    #expect(writer.bytes == expected)
    #expect(writer.checksum(of: 4..<expected.count) == CRC32C.checksum(Array(expected[4...])))
  }
}
