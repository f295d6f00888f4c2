import Foundation

/// The header of a binary store file: its format version and the schema it was written with.
///
/// Read it without the app's model, for example to inspect a file:
///
/// ```swift
/// let header = try BinaryStoreHeader.read(from: url)
/// print(header.formatVersion, header.schema.entities.map(\.name))
/// let store = BinaryStore(url: url)
/// try store.open(schema: header.schema)
/// ```
public struct BinaryStoreHeader: Sendable, Hashable {
  /// The version of the format the file was written in.
  public var formatVersion: Int
  /// The schema the file's objects follow.
  public var schema: Schema
  /// The size of the header in bytes: the file offset of the first record.
  public var byteCount: Int

  /// Reads the header of the store file at `url`, without locking or changing it.
  ///
  /// - Throws: ``ObjectGraphError`` naming the file: ``ObjectGraphError/Code/io`` when it
  ///   cannot be read, ``ObjectGraphError/Code/corruptStore`` when it is not a binary store
  ///   or its header is damaged, ``ObjectGraphError/Code/unsupportedFormat`` when it was
  ///   written by a newer format version.
  /// - Complexity: O(*s*) in the size of the header.
  public static func read(from url: URL) throws -> BinaryStoreHeader {
    let file = try StoreFile.open(url, mode: .readOnly)
    defer { file.close() }
    // The fixed prefix says how long the schema is; read just the header.
    var bytes = try file.readPrefix(BinaryFormat.headerPrefixSize)
    if bytes.count == BinaryFormat.headerPrefixSize {
      let schemaCount = bytes[12..<16].reversed().reduce(0) { $0 << 8 | Int($1) }
      bytes = try file.readPrefix(BinaryFormat.headerPrefixSize + schemaCount + 4)
    }
    let result = bytes.withUnsafeBytes { buffer in
      Result { () throws(FormatError) in try decode(buffer) }
    }
    return try result.mapError { $0.error(file: url) }.get()
  }

  /// The bytes of `schema` in a header: JSON with sorted keys, so that one schema always
  /// encodes the same.
  static func encodedSchema(_ schema: Schema) throws -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    do {
      return Array(try encoder.encode(schema))
    } catch {
      throw ObjectGraphError(.invalidValue, "the schema cannot be encoded", underlying: error)
    }
  }

  /// The encoded header for a new file with `schema`.
  static func encode(schema: Schema) throws -> [UInt8] {
    let schemaBytes = try encodedSchema(schema)
    var writer = ByteWriter(capacity: BinaryFormat.headerPrefixSize + schemaBytes.count + 4)
    writer.write(BinaryFormat.magic)
    withUnsafeBytes(of: BinaryFormat.version(for: schema).littleEndian) { writer.write($0) }
    withUnsafeBytes(of: UInt16(0).littleEndian) { writer.write($0) }  // flags
    writer.writeUInt32(UInt32(schemaBytes.count))
    writer.write(schemaBytes)
    writer.writeUInt32(writer.checksum(of: 0..<writer.count))
    return writer.bytes
  }

  /// Decodes and checks the header at the start of `buffer` (the whole file).
  ///
  /// A schema the caller expects, with its ``encodedSchema(_:)``, is taken as it is when the
  /// header holds exactly those bytes, without decoding the JSON (about 3 million
  /// instructions, a millisecond of every open); the rest of the header is checked all the
  /// same.
  ///
  /// - Throws: ``FormatError`` saying what is wrong and where.
  static func decode(
    _ buffer: UnsafeRawBufferPointer, expecting expected: (schema: Schema, bytes: [UInt8])? = nil
  ) throws(FormatError) -> BinaryStoreHeader {
    guard !buffer.isEmpty else {
      throw FormatError(offset: 0, message: "the file is empty (0 bytes), not an ObjectGraph store")
    }
    let magicCount = BinaryFormat.magic.count
    guard buffer.count >= magicCount, buffer.prefix(magicCount).elementsEqual(BinaryFormat.magic)
    else {
      if buffer.prefix(BinaryFormat.headerPrefixSize).allSatisfy({ $0 == 0 }) {
        throw FormatError(
          offset: 0, message: "the file is zero-filled, not an ObjectGraph store")
      }
      throw FormatError(
        offset: 0, message: "wrong magic bytes: not an ObjectGraph binary store")
    }
    var reader = ByteReader(buffer, origin: 0)
    guard buffer.count >= BinaryFormat.headerPrefixSize else {
      throw FormatError(
        offset: buffer.count,
        message: "the header is cut short: the file has only \(buffer.count) bytes")
    }
    _ = try reader.readBytes(magicCount)
    let versionBytes = try reader.readBytes(2)
    let version = UInt16(littleEndian: versionBytes.loadUnaligned(as: UInt16.self))
    guard version != 0 else {
      throw FormatError(offset: magicCount, message: "invalid format version 0")
    }
    guard version <= BinaryFormat.currentVersion else {
      throw FormatError(
        kind: .unsupportedVersion, offset: magicCount,
        message: "the file has format version \(version), newer than the newest this "
          + "ObjectGraph reads (\(BinaryFormat.currentVersion))")
    }
    let flagBytes = try reader.readBytes(2)
    let flags = UInt16(littleEndian: flagBytes.loadUnaligned(as: UInt16.self))
    guard flags == 0 else {
      throw FormatError(offset: magicCount + 2, message: "unknown header flags \(flags)")
    }
    let schemaCount = Int(try reader.readUInt32())
    let checksumOffset = BinaryFormat.headerPrefixSize + schemaCount
    guard checksumOffset + BinaryFormat.headerChecksumSize <= buffer.count else {
      throw FormatError(
        offset: 12,
        message: "the header of \(checksumOffset + BinaryFormat.headerChecksumSize) bytes "
          + "runs past the end of the file (\(buffer.count) bytes)")
    }
    let schemaBytes = try reader.readBytes(schemaCount)
    let stored = try reader.readUInt32()
    let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<checksumOffset]))
    guard stored == computed else {
      throw FormatError(offset: checksumOffset, message: "header checksum mismatch")
    }
    let schema: Schema
    if let expected, schemaBytes.elementsEqual(expected.bytes) {
      schema = expected.schema
    } else {
      do {
        schema = try JSONDecoder().decode(Schema.self, from: Data(schemaBytes))
      } catch {
        throw FormatError(
          offset: BinaryFormat.headerPrefixSize,
          message: "the schema in the header does not decode")
      }
    }
    _ = try FileNumbering(schema)  // its numbers are checked before any record is read
    return BinaryStoreHeader(
      formatVersion: Int(version), schema: schema, byteCount: reader.fileOffset)
  }
}
