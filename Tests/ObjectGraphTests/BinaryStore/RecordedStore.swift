import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// A binary store and an in-memory model fed the same changesets, remembering the file's
/// length and the model's contents after each save.
final class RecordedStore {
  let url: URL
  let probe: StoreIOProbe
  let store: BinaryStore
  let model = InMemoryStore()
  /// The end of the file's records after opening (first) and after each save.
  private(set) var ends: [Int] = []
  /// The model's contents after opening (first) and after each save.
  private(set) var states: [ComparableContents] = []
  /// How many events the probe had recorded when the open (first) and each save returned.
  private(set) var acknowledgedEvents: [Int] = []

  /// Opens a new store at `url` with ``ConformanceSchema/schema``; with `recordsEvents`, its
  /// probe records every change to the file system (see ``CrashStates``).
  init(url: URL, options: BinaryStoreOptions = .standard, recordsEvents: Bool = false) throws {
    self.url = url
    probe = StoreIOProbe(recordsEvents: recordsEvents)
    store = BinaryStore(url: url, options: options, probe: probe)
    try store.open(schema: ConformanceSchema.schema)
    try model.open(schema: ConformanceSchema.schema)
    try record()
  }

  /// Saves a changeset into both stores.
  func save(_ changeset: Changeset) throws {
    try store.save(changeset)
    try model.save(changeset)
    try record()
  }

  /// Saves every changeset of ``standardScript``.
  func saveStandardScript() throws {
    for changeset in Self.standardScript { try save(changeset) }
  }

  private func record() throws {
    acknowledgedEvents.append(probe.events.count)
    let statistics = store.statistics
    ends.append(statistics.fileBytes - statistics.reservedBytes)
    states.append(try model.load().comparable)
  }

  /// Saves that use every kind of change: inserts of both entities, sets of every kind of
  /// value, list inserts, removes and moves, whole-list sets, and deletes.
  static let standardScript: [Changeset] = {
    func update(_ id: UInt64, _ changes: [(Int, PropertyChange.Kind)]) -> ObjectUpdate {
      ObjectUpdate(
        id: ObjectID(rawValue: id), entity: ConformanceSchema.item,
        changes: changes.map { PropertyChange(property: $0.0, kind: $0.1) })
    }
    let id = { (number: UInt64) in ObjectID(rawValue: number) }
    return [
      Changeset(
        inserted: [
          ConformanceSchema.item(1, children: [2, 3]), ConformanceSchema.item(2, parent: 1),
          ConformanceSchema.item(3, parent: 1), ConformanceSchema.item(4),
          ConformanceSchema.note(5, text: "about one", item: 1),
        ], nextObjectNumber: 6),
      Changeset(
        updated: [
          update(1, [(ConformanceSchema.children, .edit([.insert(id(4), at: 0)]))]),
          update(
            2,
            [
              (ConformanceSchema.title, .set(.string("Item 2, renamed"))),
              (ConformanceSchema.nickname, .set(.null)),
            ]),
          update(4, [(ConformanceSchema.parent, .set(.reference(id(1))))]),
        ], nextObjectNumber: 6),
      Changeset(
        updated: [
          update(
            1, [(ConformanceSchema.children, .edit([.move(from: 0, to: 2), .remove(at: 0)]))]),
          update(2, [(ConformanceSchema.parent, .set(.null))]),
        ], nextObjectNumber: 6),
      Changeset(
        inserted: [ConformanceSchema.item(6, parent: 3)], deleted: [id(5)], nextObjectNumber: 8),
      Changeset(
        updated: [
          update(3, [(ConformanceSchema.children, .set(.references([id(6)])))]),
          update(
            6,
            [
              (0, .set(.bool(true))), (1, .set(.int(-42))), (4, .set(.double(2.5))),
              (7, .set(.date(Date(timeIntervalSinceReferenceDate: 1.5)))),
              (ConformanceSchema.blob, .set(.data(Data(repeating: 7, count: 300)))),
              (9, .set(.uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))))),
              (10, .set(.url(URL(string: "https://example.com/six")!))),
            ]),
        ], nextObjectNumber: 8),
      Changeset(
        updated: [update(1, [(ConformanceSchema.title, .set(.string("Item 1, final")))])],
        nextObjectNumber: 9),
    ]
  }()
}

/// The size of the file at `url`, or -1 if it cannot be read.
func fileLength(_ url: URL) -> Int {
  let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
  return (attributes?[.size] as? NSNumber)?.intValue ?? -1
}

/// The bytes of the file at `url`.
func fileBytes(_ url: URL) throws -> [UInt8] {
  [UInt8](try Data(contentsOf: url))
}

/// Writes `bytes` as the file at `url`, replacing it.
func writeFile(_ url: URL, _ bytes: some Collection<UInt8>) throws {
  try Data(bytes).write(to: url)
}

/// Opens a binary store at `url`, returning its contents, or the error it throws.
func openAndLoad(_ url: URL) -> Result<ComparableContents, ObjectGraphError> {
  let store = BinaryStore(url: url)
  defer { store.close() }
  do {
    try store.open(schema: ConformanceSchema.schema)
    return .success(try store.load().comparable)
  } catch let error as ObjectGraphError {
    return .failure(error)
  } catch {
    return .failure(ObjectGraphError(.io, "unexpected error \(error)"))
  }
}

/// A changeset that renames one item of ``ConformanceSchema``.
func rename(_ id: UInt64, _ title: String) -> Changeset {
  ConformanceSchema.update(
    id, property: ConformanceSchema.title, .set(.string(title)), nextObjectNumber: 9)
}
