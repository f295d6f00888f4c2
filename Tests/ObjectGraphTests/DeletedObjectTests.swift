import Foundation
import ObjectGraphTesting
import Testing

@testable import ObjectGraph

/// No save may refer to an object it deletes: relating an object to one deleted earlier in
/// the same context follows the delete rule as if the relation had been there at the
/// delete, a no-action rule's leftover reference fails the save, and the store itself
/// refuses a changeset that would leave it unopenable.
@Suite struct DeletedObjectTests {
  @Test(arguments: StoreKind.allCases)
  func aChildGivenADeletedParentIsDeletedByItsCascade(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let parent = Box(title: "Parent")
    stack.context.insert(parent)
    try stack.context.save()
    stack.context.delete(parent)
    let child = Box(title: "Child", parent: parent)  // the "relate a new object to it"
    #expect(child.isDeleted == false && child.context == nil, "cascaded: never inserted")
    try stack.context.save()
    let reopened = try stack.reopened()
    #expect(try reopened.context.fetchCount(FetchDescriptor<Box>()) == 0)
  }

  @Test(arguments: StoreKind.allCases)
  func aDeletedChildAppendedToAParentIsNullifiedByItsRule(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let old = Box(title: "Old parent")
    let child = Box(title: "Child", parent: old)
    stack.context.insert(old)
    try stack.context.save()
    stack.context.delete(child)
    let parent = Box(title: "New parent")
    stack.context.insert(parent)
    parent.children.append(child)  // parent's nullify rule: the relation is undone
    #expect(parent.children.isEmpty && child.parent == nil)
    try stack.context.save()
    let reopened = try stack.reopened()
    let titles = try reopened.context.fetch(FetchDescriptor<Box>()).map(\.title).sorted()
    #expect(titles == ["New parent", "Old parent"])
  }

  @Test(arguments: StoreKind.allCases)
  func aReferenceLeftByNoActionFailsTheSaveNamingIt(_ kind: StoreKind) throws {
    let stack = try Stack(kind)
    let owner = Person()
    let pet = Pet()
    pet.name = "Rex"
    owner.pets = [pet]
    stack.context.insert(owner)
    try stack.context.save()
    stack.context.delete(owner)
    #expect(pet.owner === owner, "no action leaves the inverse alone")
    let error = try #require(throws: ObjectGraphError.self) { try stack.context.save() }
    #expect(error.code == .danglingReference && error.entity == "Pet" && error.property == "owner")
    #expect(error.objectID == pet.objectID && error.message.contains("Person"))
    pet.owner = nil
    try stack.context.save()
    let reopened = try stack.reopened()
    #expect(try reopened.context.fetch(FetchDescriptor<Pet>()).map(\.name) == ["Rex"])
  }

  @Test func theBinaryStoreRefusesAChangesetThatWouldNotOpen() throws {
    let directory = try TemporaryDirectory()
    let recorded = try RecordedStore(url: directory.file("store"))
    try recorded.saveStandardScript()
    let before = try fileBytes(recorded.url)
    let reference = { (id: UInt64) in PersistentValue.reference(ObjectID(rawValue: id)) }
    let refused: [(Changeset, String)] = [
      (
        Changeset(
          inserted: [ConformanceSchema.item(20, parent: 3)], deleted: [ObjectID(rawValue: 3)],
          nextObjectNumber: 21),
        "refers through parent to #3, which this save deletes"
      ),
      (
        Changeset(inserted: [ConformanceSchema.item(20, parent: 99)], nextObjectNumber: 21),
        "refers through parent to #99, which is not stored"
      ),
      (
        Changeset(
          updated: [
            ObjectUpdate(
              id: ObjectID(rawValue: 2), entity: ConformanceSchema.item,
              changes: [
                PropertyChange(property: ConformanceSchema.parent, kind: .set(reference(77)))
              ])
          ], nextObjectNumber: 21),
        "refers through parent to #77"
      ),
      (
        Changeset(
          updated: [
            ObjectUpdate(
              id: ObjectID(rawValue: 1), entity: ConformanceSchema.item,
              changes: [
                PropertyChange(
                  property: ConformanceSchema.children,
                  kind: .edit([.insert(ObjectID(rawValue: 55), at: 0)]))
              ])
          ], nextObjectNumber: 21),
        "refers through children to #55"
      ),
      (
        ConformanceSchema.update(2, property: 0, .set(.int(57)), nextObjectNumber: 21),
        "saves 57 in flag, which is a bool attribute"
      ),
      (
        ConformanceSchema.update(
          2, property: ConformanceSchema.title, .set(.null), nextObjectNumber: 21),
        "in title, which is a string attribute"
      ),
    ]
    for (changeset, message) in refused {
      let error = try #require(throws: ObjectGraphError.self) { try recorded.store.save(changeset) }
      #expect(error.code == .corruptStore, "\(message)")
      #expect(error.message.contains("nothing written") && error.message.contains(message))
      #expect(try fileBytes(recorded.url) == before, "nothing written: \(message)")
    }
    try recorded.save(rename(2, "still usable"))
    recorded.store.close()
    #expect(try openAndLoad(recorded.url).get() == recorded.states.last)
  }
}
