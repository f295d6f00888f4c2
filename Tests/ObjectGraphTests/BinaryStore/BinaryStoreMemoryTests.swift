import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// An open binary store keeps only the shape of its objects (which exist, how long their
/// lists are); it hands its opened objects to the first load and replays the file for
/// later loads and for compaction, checking every changeset against the shapes.
@Suite struct BinaryStoreMemoryTests {
  @Test func laterLoadsReplayTheFileAndSeeEverySave() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    #expect(try recorded.store.load().comparable == recorded.states.last)
    #expect(try recorded.store.load().comparable == recorded.states.last)
    try recorded.save(rename(1, "after two loads"))
    #expect(try recorded.store.load().comparable == recorded.states.last)
    try recorded.store.compact()
    #expect(try recorded.store.load().comparable == recorded.states.last)
  }

  @Test func theShapesRefuseWhatDoesNotFitAndKeepTheStoreUsable() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    let length = fileLength(recorded.url)
    let children = PropertyChange(
      property: ConformanceSchema.children, kind: .edit([.remove(at: 9)]))
    let refused: [Changeset] = [
      Changeset(
        updated: [ObjectUpdate(id: ObjectID(rawValue: 999), entity: 0, changes: [])],
        nextObjectNumber: 1),
      Changeset(
        updated: [ObjectUpdate(id: ObjectID(rawValue: 1), entity: 0, changes: [children])],
        nextObjectNumber: 1),
      Changeset(inserted: [ConformanceSchema.item(1)], nextObjectNumber: 1),
      Changeset(deleted: [ObjectID(rawValue: 999)], nextObjectNumber: 1),
      Changeset(
        updated: [
          ObjectUpdate(
            id: ObjectID(rawValue: 1), entity: 0,
            changes: [PropertyChange(property: 99, kind: .set(.null))])
        ],
        nextObjectNumber: 1),
    ]
    for changeset in refused {
      #expect(errorCode { try recorded.store.save(changeset) } == .corruptStore)
      #expect(fileLength(recorded.url) == length, "nothing written")
    }
    // An insert then an edit of the new list in one changeset fits.
    var item = ConformanceSchema.item(900)
    item.values[ConformanceSchema.children] = .references([ObjectID(rawValue: 1)])
    try recorded.save(
      Changeset(
        inserted: [item],
        updated: [
          ObjectUpdate(
            id: item.id, entity: 0,
            changes: [
              PropertyChange(property: ConformanceSchema.children, kind: .edit([.remove(at: 0)]))
            ])
        ],
        nextObjectNumber: 901))
    #expect(try recorded.store.load().comparable == recorded.states.last)
  }
}
