import Foundation
import Testing

@testable import ObjectGraph

/// A migration replaces the store's file the way a compaction does, keeping the old file
/// until the migrated one has opened: a failure or a crash at any step leaves a store that
/// opens, with the old data for the old models or the migrated data for the new ones.
@Suite struct MigrationSafetyTests {
  /// Every step of the file's replacement that can fail: the new file's truncation, write
  /// and sync, the old file's link, the directory's sync before the rename, the rename.
  static let steps: [StoreIOProbe.Operation] = [
    .truncate, .write, .fullSync, .link, .directorySync, .rename,
  ]

  @Test(arguments: steps)
  func aMigrationFailingAtAStepLeavesTheOldStoreWhole(_ failing: StoreIOProbe.Operation) throws {
    let store = try VersionedStore(.binary)
    try MigrationTests.fillLibrary(store)
    let order = try MigrationTests.shelfOrder(store)
    let before = try fileBytes(store.url)
    let probe = StoreIOProbe()
    probe.failNext(failing)
    let error = try #require(throws: ObjectGraphError.self) {
      try store.open(LibraryV2.types, probe: probe) { _ in }
    }
    #expect(error.code == .io && error.file == store.url, "\(error)")
    #expect(try fileBytes(store.url) == before, "the old file is untouched")
    #expect(!store.directory.fileNames.contains("library.ogstore.partial"))
    #expect(try MigrationTests.shelfOrder(store) == order, "the old models open it")
    // Nothing was lost: it migrates when the disk works again.
    let migrated = try store.open(LibraryV2.types) { context in
      try context.fetch(FetchDescriptor<LibraryV2.Shelf>()).map { ($0.name, $0.books.map(\.name)) }
    }
    #expect(Dictionary(uniqueKeysWithValues: migrated) == order)
  }

  @Test func theOldFileIsKeptUntilTheMigratedStoreOpens() throws {
    let store = try VersionedStore(.binary)
    try MigrationTests.fillLibrary(store)
    let old = try fileBytes(store.url)
    try store.open(LibraryV2.types) { _ in }
    #expect(try fileBytes(store.backupURL) == old, "kept whole beside the migrated store")
    // The kept file is a store the old models open.
    let kept = try VersionedStore(.binary)
    try writeFile(kept.url, old)
    #expect(try MigrationTests.shelfOrder(kept).count == 3)
    try store.open(LibraryV2.types) { _ in }
    #expect(store.directory.fileNames == ["library.ogstore"])
  }

  /// A directory sync failing after the rename: the migrated store is installed, but a crash
  /// could bring the old name back, so it refuses saves until reopened (as after a
  /// compaction).
  @Test func aDirectorySyncFailingAfterTheRenameRefusesSavesUntilReopened() throws {
    let store = try VersionedStore(.binary)
    try MigrationTests.fillLibrary(store)
    let probe = StoreIOProbe()
    probe.inject(StoreIOProbe.Fault(.directorySync, attempt: 2, .error(EIO)))
    let refused = try store.open(LibraryV2.types, probe: probe) { context in
      context.insert(LibraryV2.Reader())
      return Result { try context.save() }
    }
    #expect(throws: ObjectGraphError.self) { try refused.get() }
    #expect(store.directory.fileNames.contains("library.ogstore.pre-migration"))
    let count = try store.open(LibraryV2.types) { context in
      try context.fetchCount(FetchDescriptor<LibraryV2.Book>())
    }
    #expect(count == 30)
  }

  /// Every state a crash during the migration can leave on disk opens: with the new models
  /// (migrating again, or already migrated) it holds the migrated library, and the old file
  /// is never lost.
  @Test func everyCrashStateOfAMigrationOpensWithNothingLost() throws {
    let directory = try TemporaryDirectory()
    let probe = StoreIOProbe(recordsEvents: true)
    let url = directory.file("library.ogstore")
    let source = try VersionedStore(.binary)
    try MigrationTests.fillLibrary(source)
    let order = try MigrationTests.shelfOrder(source)
    // The filled store, written through the probe so the crash states start from it.
    let original = try fileBytes(source.url)
    let file = try StoreFile.open(url, mode: .readWriteCreate, probe: probe)
    try file.append(original, synchronize: true)
    file.close()
    try StoreFile.synchronizeDirectory(of: url, probe: probe)
    let filled = probe.events.count
    let container = try ObjectContainer(
      for: LibraryV2.types, store: BinaryStore(url: url, options: .standard, probe: probe))
    container.close()
    let crashes = CrashStates(events: probe.events, acknowledged: [filled])
    #expect(crashes.states.count > 10)
    var migratedAgain = 0
    for (number, crash) in crashes.states.enumerated() where crash.acknowledgedSaves == 1 {
      let state = try VersionedStore(.binary)
      for (name, bytes) in crash.files {
        try writeFile(state.directory.file(name), bytes)
      }
      if try fileBytes(state.url) == original { migratedAgain += 1 }
      let opened = Result {
        try state.open(LibraryV2.types) { context in
          try context.fetch(FetchDescriptor<LibraryV2.Shelf>()).map {
            ($0.name, $0.books.map(\.name))
          }
        }
      }
      switch opened {
      case .success(let shelves):
        #expect(
          Dictionary(uniqueKeysWithValues: shelves) == order, "\(number): \(crash.description)")
      case .failure(let error):
        Issue.record("\(number): \(crash.description): \(error)")
      }
    }
    #expect(migratedAgain > 0, "some crashes come before the rename")
  }
}
