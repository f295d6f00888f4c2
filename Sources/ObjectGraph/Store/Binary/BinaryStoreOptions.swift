/// Tuning of a ``BinaryStore`` that tests change; production uses ``standard``.
struct BinaryStoreOptions: Sendable {
  /// Whether each save ends with `fdatasync` (only tests that count on a later check of the
  /// real sync path turn it off, to run thousands of saves quickly).
  var synchronizesSaves = true
  /// A save that grows the file reserves zero bytes after its record for the saves that
  /// follow, growing the file to a multiple of this many bytes (see ``StoreFile``); 0
  /// reserves none.
  var reservedRoom = 64 * 1024
  /// A save compacts the file once it is larger than this many bytes...
  var compactionMinimumBytes = 1 << 20
  /// ...and more than this many times the estimated size of its live data.
  var compactionGrowthFactor = 2.0

  /// The options of every public ``BinaryStore``.
  static let standard = BinaryStoreOptions()
}
