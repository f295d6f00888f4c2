/// Figures about a binary store's file, for tools and tuning.
public struct BinaryStoreStatistics: Sendable, Hashable {
  /// The size of the file in bytes, ``reservedBytes`` included.
  public var fileBytes: Int
  /// Zero bytes after the last record, reserved by a save so that the next small saves
  /// overwrite them instead of growing the file (which syncs faster); cut off when the store
  /// closes.
  public var reservedBytes: Int
  /// The estimated size of a freshly compacted file holding the live objects.
  public var liveBytes: Int
  /// The number of live objects.
  public var objectCount: Int
  /// The number of records appended since the file was created or last compacted.
  public var recordsSinceCompaction: Int
  /// The format version of the file.
  public var formatVersion: Int
  /// What opening the store repaired: a description of the torn tail (a save interrupted by
  /// a crash) that it cut off, or `nil` when the file was whole.
  public var recovery: String?

  /// Creates statistics.
  public init(
    fileBytes: Int, liveBytes: Int, objectCount: Int, recordsSinceCompaction: Int,
    formatVersion: Int, recovery: String?, reservedBytes: Int = 0
  ) {
    self.fileBytes = fileBytes
    self.reservedBytes = reservedBytes
    self.liveBytes = liveBytes
    self.objectCount = objectCount
    self.recordsSinceCompaction = recordsSinceCompaction
    self.formatVersion = formatVersion
    self.recovery = recovery
  }
}
