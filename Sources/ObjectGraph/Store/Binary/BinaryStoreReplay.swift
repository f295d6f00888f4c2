/// What replaying a binary store file found: its live objects, its records and whether it
/// ends in a torn tail. Made by ``BinaryStoreReader/replay()``.
public struct BinaryStoreReplay: Sendable {
  /// The end of a file that a crash left in the middle of a save.
  ///
  /// ``BinaryStore`` cuts it off when it next opens the file; ``BinaryStoreReader`` leaves
  /// it and reports it.
  public struct TornTail: Sendable, Hashable {
    /// The file offset of the tail's first byte: the size of the file without it.
    public var offset: Int
    /// The size of the tail in bytes.
    public var byteCount: Int
    /// Why the tail is a torn save rather than damage.
    public var reason: String

    /// Creates a torn tail description.
    public init(offset: Int, byteCount: Int, reason: String) {
      self.offset = offset
      self.byteCount = byteCount
      self.reason = reason
    }
  }

  /// The live objects, sorted by id, and the next object number.
  public var contents: StoreContents
  /// The number of complete records in the file: those appended since it was created or
  /// last compacted.
  public var recordCount: Int
  /// How many of the records are snapshots of the whole graph.
  public var snapshotRecordCount: Int
  /// The torn tail the replay stopped before, if any.
  public var tornTail: TornTail?

  /// Creates a replay result.
  public init(
    contents: StoreContents, recordCount: Int, snapshotRecordCount: Int, tornTail: TornTail?
  ) {
    self.contents = contents
    self.recordCount = recordCount
    self.snapshotRecordCount = snapshotRecordCount
    self.tornTail = tornTail
  }
}
