import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// Long histories of small saves replay to exactly what was saved.
@Suite struct BinaryStoreManySavesTests {
  @Test func reopenAfterTenThousandSmallSavesEqualsTheModel() throws {
    let directory = try TemporaryDirectory()
    var options = BinaryStoreOptions.standard
    options.synchronizesSaves = false  // the fdatasync path is tested by the durability suite
    let recorded = try RecordedStore(url: directory.file("store"), options: options)
    var generator = ChangeGenerator()
    try recorded.save(generator.initialInsert())
    for _ in 0..<10_000 {
      try recorded.save(generator.next())
    }
    recorded.store.close()
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
  }

  @Test func concurrentSavesAreSerialized() async throws {
    let directory = try TemporaryDirectory()
    let url = directory.file("store")
    let store = BinaryStore(url: url)
    try store.open(schema: ConformanceSchema.schema)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<4 {
        group.addTask {
          for index in 0..<25 {
            let id = UInt64(task * 100 + index + 1)
            try store.save(
              Changeset(inserted: [ConformanceSchema.item(id)], nextObjectNumber: id + 1))
          }
        }
      }
      try await group.waitForAll()
    }
    store.close()
    #expect(try openAndLoad(url).get().objects.count == 100)
  }

  @Test func stringsSharingPrefixesRoundTripWhateverTheyShare() throws {
    let directory = try TemporaryDirectory()
    let titles = [
      "", "a", "abc", "abcdef", "abcdeX", "ab", "日本語のテキスト", "日本語の文字", "日本",
      "🇨🇭🇩🇪", "🇨🇭🇫🇷", "e\u{301}", "e\u{301}\u{301}", "Box 9", "Box 10", "Box 100", "Box 1000",
      String(repeating: "z", count: 70_000), String(repeating: "z", count: 69_999) + "y",
    ]
    let items = titles.enumerated().map {
      ConformanceSchema.item(UInt64($0.offset + 1), title: $0.element)
    }
    let url = directory.file("store")
    let store = BinaryStore(url: url)
    try store.open(schema: ConformanceSchema.schema)
    // One save into the empty store (a snapshot record), one into a non-empty one.
    try store.save(Changeset(inserted: Array(items.prefix(10)), nextObjectNumber: 100))
    try store.save(Changeset(inserted: Array(items.dropFirst(10)), nextObjectNumber: 100))
    store.close()
    let expected = StoreContents(objects: items, nextObjectNumber: 100).comparable
    #expect(try openAndLoad(url).get() == expected)
  }
}
