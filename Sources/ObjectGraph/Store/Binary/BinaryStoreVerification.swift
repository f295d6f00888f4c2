/// What ``BinaryStoreReader/verify(fileAt:)`` checked in a store file, and the first problem
/// it found.
///
/// The checks run in this order and stop at the first problem: the header (magic, version,
/// flags, checksum, schema); every record's length and payload checksums, decoding and
/// replay; then the graph the records leave: every object id below the next object number,
/// every value of the type its property declares, unique values unique, every reference to
/// an existing object of the relationship's destination entity, ordered lists without
/// duplicates, and every relationship matched by its inverse. The counts say how much was
/// checked before the problem, or in all when there is none.
public struct BinaryStoreVerification: Sendable, Hashable {
  /// A problem found in the file.
  public struct Problem: Sendable, Hashable {
    /// The kind of a problem.
    public enum Kind: Sendable, Hashable {
      /// The file is not a store file, or its header is damaged.
      case damagedHeader
      /// A record is damaged (a checksum mismatch, bytes that do not decode) or does not fit
      /// the objects before it.
      case damagedRecord
      /// The records are whole but the graph they hold breaks an invariant (a dangling
      /// reference, an unmatched inverse, a value of the wrong type, ...).
      case brokenInvariant
      /// The file ends in a save that a crash interrupted; everything before it is whole.
      /// ``BinaryStore`` cuts it off when it next opens the file.
      case tornTail
      /// The file was written by a newer version of the format.
      case unsupportedFormat
    }

    /// The kind of problem.
    public var kind: Kind
    /// The byte offset in the file where the problem is: the damaged byte or record, the
    /// start of the torn tail, or, for a broken invariant, the last record that wrote one
    /// of the objects concerned.
    public var offset: Int
    /// What is wrong, naming the objects concerned. Not stable: do not parse it.
    public var message: String

    /// Creates a problem.
    public init(kind: Kind, offset: Int, message: String) {
      self.kind = kind
      self.offset = offset
      self.message = message
    }
  }

  /// The size of the file in bytes.
  public var fileBytes: Int
  /// The file's format version, once the header was read.
  public var formatVersion: Int?
  /// The schema recorded in the file, once the header was read.
  public var schema: Schema?
  /// The size of the header in bytes, once it was read (0 before).
  public var headerBytes = 0
  /// The number of whole records read, decoded and replayed.
  public var recordCount = 0
  /// How many of them were snapshot records.
  public var snapshotRecordCount = 0
  /// The number of checksums that matched: the header's, and two per record.
  public var checksumCount = 0
  /// The number of live objects checked.
  public var objectCount = 0
  /// The number of attribute values checked against their declared types.
  public var attributeValueCount = 0
  /// The number of values of unique attributes checked for clashes.
  public var uniqueValueCount = 0
  /// The number of references (to-one, and entries of to-many lists) checked to name an
  /// existing object of the destination entity.
  public var referenceCount = 0
  /// The number of to-many lists checked for duplicates.
  public var orderedListCount = 0
  /// The number of references checked to be matched by their inverse.
  public var inverseCount = 0
  /// The first problem found, or `nil` when the file passed every check.
  public var problem: Problem?

  /// Creates an empty report for a file of `fileBytes` bytes.
  public init(fileBytes: Int) {
    self.fileBytes = fileBytes
  }

  /// Whether the file passed every check.
  public var isValid: Bool { problem == nil }
}
