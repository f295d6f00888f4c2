import Foundation
import Testing

@testable import ObjectGraph

/// A store's file reads back byte for byte, whole or a prefix, however many pieces it is
/// read in.
@Suite struct StoreFileTests {
  @Test(arguments: [0, 1, 4_095, 1 << 20, 3 * (1 << 20) + 17, 5 * (1 << 20) + 5])
  func aFileReadsBackWholeAndByPrefix(size: Int) throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    var random = SplitMix64(seed: UInt64(size))
    var words = (0..<(size + 7) / 8).map { _ in random.next() }
    let bytes = words.withUnsafeMutableBytes { Array($0.prefix(size)) }
    try writeFile(url, bytes)
    let file = try StoreFile.open(url, mode: .readWrite)
    defer { file.close() }
    #expect(try file.readAll() == bytes)
    for prefix in [0, 7, size / 3, size - 1, size + 100] where prefix >= 0 {
      #expect(try file.readPrefix(prefix) == Array(bytes.prefix(prefix)))
    }
  }
}
