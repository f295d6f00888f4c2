/// The constants of the binary store's file format, version 3.
///
/// The layout is described byte by byte in the design notes (`DesignNotes.md`, "BinaryStore:
/// the file format"); every number here appears there.
/// All multi-byte integers are little-endian; `varint` is unsigned LEB128 (at most 10 bytes)
/// and a signed varint is the zigzag encoding of an `Int64` written as a varint.
enum BinaryFormat {
  /// The eight bytes that open every store file: `\x89 O G B S \r \n \x1A`.
  ///
  /// The high first byte and the line endings catch files mangled by text-mode transfers.
  static let magic: [UInt8] = [0x89, 0x4F, 0x47, 0x42, 0x53, 0x0D, 0x0A, 0x1A]

  /// The newest format version this code reads and writes. Version 2 added the snapshot in
  /// parts (record kind 3); version 3 numbers entities and properties in the header's schema
  /// (``FileNumbering``). A version 1 file is still read, and written to with version 1
  /// records; a file takes the oldest version that describes it (``version(for:)``).
  static let currentVersion: UInt16 = 3

  /// The format version of a new file (a creation, compaction or migration) with `schema`'s
  /// header: 3 when the schema numbers an entity or property (a reader of version 2 would
  /// take its records by position), else 2, so that a file never migrated stays readable
  /// by the apps that wrote version 2.
  static func version(for schema: Schema) -> UInt16 {
    schema.hasNumbers ? 3 : 2
  }

  /// The fewest objects in each part of a snapshot in parts (see
  /// ``RecordKind/snapshotInParts``).
  static let minimumObjectsPerPart = 8_192

  /// Bytes before the schema in the header: magic, version, flags, schema length.
  static let headerPrefixSize = 16
  /// Bytes of the header's trailing checksum.
  static let headerChecksumSize = 4

  /// Bytes before a record's payload: its length and the checksum of that length.
  static let frameHeaderSize = 8
  /// Bytes after a record's payload: the payload's checksum.
  static let frameTrailerSize = 4
  /// Framing bytes around every payload.
  static var frameOverhead: Int { frameHeaderSize + frameTrailerSize }

  /// Strings sharing fewer bytes than this with the previous string of the same property are
  /// written whole.
  static let minimumSharedPrefix = 3

  /// The kind of a record: its payload's first byte.
  enum RecordKind: UInt8 {
    /// One save: inserts, updates (sets and list edits) and deletes.
    case changeset = 1
    /// The whole live graph, replacing everything before it (written by compaction).
    case snapshot = 2
    /// A snapshot whose objects are split into parts that decode on their own, so that
    /// several threads decode it at once (format version 2).
    case snapshotInParts = 3
  }

  /// The kind of a change in an update.
  enum ChangeKind: UInt8 {
    case set = 0
    case edit = 1
  }

  /// The operation of a list edit.
  enum EditOperation: UInt8 {
    case insert = 0
    case remove = 1
    case move = 2
  }

  /// The first byte of every encoded value.
  enum ValueTag: UInt8 {
    case null = 0
    case `false` = 1
    case `true` = 2
    /// Signed varint.
    case int = 3
    /// Eight bytes: the IEEE 754 bit pattern.
    case double = 4
    /// A double holding a whole number: signed varint of that number.
    case integralDouble = 5
    /// Varint byte count, then UTF-8 bytes.
    case string = 6
    /// Varint count of bytes shared with the previous string of the property, varint count
    /// of the remaining bytes, then those bytes.
    case prefixedString = 7
    /// Eight bytes: the bit pattern of the seconds since 2001-01-01 (`Double`).
    case date = 8
    /// Whole seconds since 2001-01-01, as a signed varint difference from the previous
    /// whole-second date of the property.
    case dateDelta = 9
    /// Varint byte count, then the bytes.
    case data = 10
    /// Sixteen bytes.
    case uuid = 11
    /// A string (relative part), then a byte 0 (no base) or 1 followed by the base URL.
    case url = 12
    /// Signed varint: the referenced id minus the owning object's id.
    case reference = 13
    /// Varint count, then per id a signed varint difference from the previous id (the first
    /// from the owning object's id).
    case references = 14

    /// The tag `byte` stands for, `nil` for none: ``init(rawValue:)`` spelled out, so that
    /// it is inlined where the decoder reads every value's tag (the derived one was a call).
    @inline(__always)
    init?(byte: UInt8) {
      switch byte {
      case 0: self = .null
      case 1: self = .false
      case 2: self = .true
      case 3: self = .int
      case 4: self = .double
      case 5: self = .integralDouble
      case 6: self = .string
      case 7: self = .prefixedString
      case 8: self = .date
      case 9: self = .dateDelta
      case 10: self = .data
      case 11: self = .uuid
      case 12: self = .url
      case 13: self = .reference
      case 14: self = .references
      default: return nil
      }
    }
  }
}
