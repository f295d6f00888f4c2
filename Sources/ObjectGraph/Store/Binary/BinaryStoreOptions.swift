/// Tuning of a ``BinaryStore`` that tests change; production uses ``standard``.
struct BinaryStoreOptions: Sendable {
  /// Whether each save ends with `fdatasync` (only tests that count on a later check of the
  /// real sync path turn it off, to run thousands of saves quickly).
  var synchronizesSaves = true
  /// A save compacts the file once it is larger than this many bytes...
  var compactionMinimumBytes = 1 << 20
  /// ...and more than this many times the estimated size of its live data.
  var compactionGrowthFactor = 2.0

  /// The options of every public ``BinaryStore``.
  static let standard = BinaryStoreOptions()
}
