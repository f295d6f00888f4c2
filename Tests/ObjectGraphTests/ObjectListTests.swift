import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// Inserted objects and loaded contents travel packed (one buffer of values) inside the
/// framework and show as snapshots in the public API: both views must always agree.
@Suite struct ObjectListTests {
  /// Filling packed objects in place: exactly what was written is kept, nothing at all
  /// included, and a failure part way frees what was written.
  @Test func packedObjectsFilledInPlaceKeepWhatWasWritten() throws {
    struct Stop: Error {}
    let snapshots = (1...4).map { ConformanceSchema.item(UInt64($0), title: "item \($0)") }
    let valueCount = snapshots[0].values.count
    let filled = PackedObjects.filling(objectCapacity: 4, valueCapacity: 4 * valueCount) {
      (filler: inout PackedObjects.Filler) in
      for snapshot in snapshots {
        #expect(filler.hasRoom(forValues: valueCount))
        filler.beginObject(id: snapshot.id, entity: snapshot.entity)
        for value in snapshot.values { filler.appendValue(value) }
      }
      #expect(!filler.hasRoom(forValues: 1))
    }
    #expect(filled.snapshots == snapshots)
    let empty = PackedObjects.filling(objectCapacity: 0, valueCapacity: 0) {
      (filler: inout PackedObjects.Filler) in #expect(!filler.hasRoom(forValues: 0))
    }
    #expect(empty.positionCount == 0 && empty.snapshots.isEmpty)
    #expect(throws: Stop.self) {
      _ = try PackedObjects.filling(objectCapacity: 4, valueCapacity: 4 * valueCount) {
        (filler: inout PackedObjects.Filler) throws(Stop) in
        filler.beginObject(id: snapshots[0].id, entity: snapshots[0].entity)
        filler.appendValue(snapshots[0].values[0])
        throw Stop()
      }
    }
  }

  /// Most saves insert nothing: their list holds no packed buffers (copying a changeset
  /// then copies one reference, not a dozen), and packing it again makes none.
  @Test func aListOfNoObjectsHoldsNoPackedBuffers() throws {
    let empty = PackedObjects.filling(objectCapacity: 4, valueCapacity: 16) {
      (_: inout PackedObjects.Filler) in
    }
    let list = ObjectList(packed: empty)
    guard case .snapshots(let snapshots) = list.storage else {
      Issue.record("an empty list keeps its packed buffers")
      return
    }
    #expect(snapshots.isEmpty && list.isEmpty)
    #expect(list.packed.positionCount == 0 && list.packed.ids.capacity == 0)
    let one = [ConformanceSchema.item(1, title: "one")]
    guard case .packed = ObjectList(packed: PackedObjects(one)).storage else {
      Issue.record("a list of one object is not packed")
      return
    }
    let recording = RecordingStore()
    let container = try ObjectContainer(for: allModels, store: recording)
    let context = try ObjectContext(container)
    let box = Box(title: "saved")
    context.insert(box)
    try context.save()
    box.title = "renamed"
    try context.save()
    let changesets = recording.changesets
    #expect(changesets.count == 2)
    guard case .packed = changesets[0].insertedObjects.storage,
      case .snapshots(let none) = changesets[1].insertedObjects.storage
    else {
      Issue.record("an insert is not packed, or a rename holds packed buffers")
      return
    }
    #expect(none.isEmpty && changesets[0].inserted.count == 1)
  }

  @Test func packedObjectsKeepTheirOrderAndPositionsThroughRemovals() {
    let snapshots = (1...5).map { ConformanceSchema.item(UInt64($0)) }
    var packed = PackedObjects(snapshots)
    #expect(packed.positionCount == 5)
    #expect(packed.snapshots == snapshots)

    packed.remove(at: 1)
    packed.remove(at: 3)
    packed.remove(at: 3)  // removing twice changes nothing
    var renamed = snapshots[2]
    renamed.values[6] = .string("renamed")
    packed.replaceValues(at: 2, with: renamed.values)

    #expect(packed.positionCount == 5)
    #expect(packed.liveCount == 3)
    #expect(!packed.isLive(1) && !packed.isLive(3) && packed.isLive(4))
    #expect(packed.snapshots == [snapshots[0], renamed, snapshots[4]])
    #expect(packed.values[packed.valueRange(1)].allSatisfy { $0 == .null })
    #expect(packed.snapshot(at: 4) == snapshots[4])
  }

  @Test func storeContentsShowPackedObjectsAsSnapshotsAndTurnIntoSnapshotsWhenChanged() {
    let snapshots = (1...3).map { ConformanceSchema.item(UInt64($0)) }
    var contents = StoreContents(
      list: ObjectList(packed: PackedObjects(snapshots)), nextObjectNumber: 9)
    #expect(contents.objects == snapshots)
    // A change turns packed contents into snapshots once, so appending one object at a
    // time does not repack every object each time.
    contents.objects.removeFirst()
    guard case .snapshots(let changed) = contents.list.storage else {
      Issue.record("changed contents are still packed")
      return
    }
    #expect(changed == Array(snapshots.dropFirst()))
    contents.objects.append(snapshots[0])
    #expect(contents.objects == Array(snapshots.dropFirst()) + [snapshots[0]])
    #expect(contents.nextObjectNumber == 9)
    #expect(contents.list.takePacked().snapshots == Array(snapshots.dropFirst()) + [snapshots[0]])
    #expect(contents.objects.isEmpty)
  }

  @Test func aPackedChangesetEqualsAndHashesLikeTheSameSnapshots() {
    let snapshots = (1...4).map { ConformanceSchema.item(UInt64($0)) }
    let deleted = [ObjectID(rawValue: 9)]
    let plain = Changeset(inserted: snapshots, deleted: deleted, nextObjectNumber: 20)
    var packed = Changeset(nextObjectNumber: 20)
    packed.insertedObjects = ObjectList(packed: PackedObjects(snapshots))
    packed.deleted = deleted
    #expect(packed == plain)
    #expect(packed.hashValue == plain.hashValue)
    #expect(packed.inserted == snapshots)
    #expect(packed.insertedObjects.count == 4)
    #expect(!packed.isEmpty)

    var visited: [ObjectSnapshot] = []
    packed.insertedObjects.forEach { id, entity, values in
      visited.append(ObjectSnapshot(id: id, entity: entity, values: Array(values)))
    }
    #expect(visited == snapshots)

    packed.inserted.removeLast()
    #expect(packed != plain)
    #expect(packed.inserted == Array(snapshots.dropLast()))
  }

  @Test func aContextSavesItsInsertsPackedAndObserversSeeThemAsSnapshots() throws {
    let stack = try Stack(.binary)
    let context = stack.context
    var saved: [Changeset] = []
    let token = context.observeSaves { event in
      if case .didSave(let changeset) = event { saved.append(changeset) }
    }
    defer { token.cancel() }
    let box = Box(title: "one")
    context.insert(box)
    try context.save()
    #expect(saved.count == 1)
    guard case .packed = saved.first?.insertedObjects.storage else {
      Issue.record("the context's changeset is not packed")
      return
    }
    #expect(saved.first?.inserted.map(\.id) == [box.objectID!])
    let reopened = try stack.reopened()
    #expect(try reopened.store.load().objects == saved.first?.inserted)
  }
}
