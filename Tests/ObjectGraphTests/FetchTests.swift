import Foundation
import Testing

@testable import ObjectGraph

/// Fetches see pending changes, sort on several keys, page, and use indexes that always
/// agree with a scan.
@Suite struct FetchTests {
  @Test func predicatesWithOptionalChainingFindChildren() throws {
    let stack = try Stack()
    let inbox = Box(title: "Inbox")
    let archive = Box(title: "Archive")
    stack.context.insert(inbox)
    stack.context.insert(archive)
    for index in 0..<5 {
      _ = Box(title: "\(index)", parent: index.isMultiple(of: 2) ? inbox : archive)
    }
    try stack.context.save()
    let inboxID = inbox.id
    let children = try stack.context.fetch(
      FetchDescriptor<Box>(
        predicate: #Predicate { $0.parent?.id == inboxID }, sortBy: [SortDescriptor(\.title)]))
    #expect(children.map(\.title) == ["0", "2", "4"])
    let objectID = try #require(archive.objectID)
    let archived = try stack.context.fetch(
      FetchDescriptor<Box>(predicate: #Predicate { $0.parent?.objectID == objectID }))
    #expect(archived.map(\.title) == ["1", "3"])
    let roots = try stack.context.fetch(
      FetchDescriptor<Box>(
        predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.title)]))
    #expect(roots.map(\.title) == ["Archive", "Inbox"])
  }

  @Test func sortingOnSeveralKeysWithLimitAndOffset() throws {
    let stack = try Stack()
    let people = [("Cid", 30), ("Ann", 30), ("Bob", 20), ("Dee", 40), ("Eve", 20)]
    for (name, age) in people { stack.context.insert(Person(name: name, age: age)) }
    var descriptor = FetchDescriptor<Person>(
      sortBy: [SortDescriptor(\.age, order: .reverse), SortDescriptor(\.name)])
    #expect(try stack.context.fetch(descriptor).map(\.name) == ["Dee", "Ann", "Cid", "Bob", "Eve"])
    descriptor.fetchOffset = 1
    descriptor.fetchLimit = 3
    #expect(try stack.context.fetch(descriptor).map(\.name) == ["Ann", "Cid", "Bob"])
    #expect(try stack.context.fetchCount(descriptor) == 3)
    descriptor.fetchOffset = 4
    #expect(try stack.context.fetch(descriptor).map(\.name) == ["Eve"])
    descriptor.fetchOffset = 10
    #expect(try stack.context.fetch(descriptor).isEmpty)
    #expect(try stack.context.fetchCount(descriptor) == 0)
  }

  @Test func pendingChangesAreVisible() throws {
    let stack = try Stack()
    let ann = Person(name: "Ann", age: 30)
    stack.context.insert(ann)
    try stack.context.save()
    let bob = Person(name: "Bob", age: 30)
    stack.context.insert(bob)
    ann.age = 31
    let thirty = try stack.context.fetch(
      FetchDescriptor<Person>(predicate: #Predicate { $0.age == 30 }))
    #expect(thirty == [bob])
    stack.context.delete(bob)
    #expect(
      try stack.context.fetchCount(FetchDescriptor<Person>(predicate: #Predicate { $0.age == 30 }))
        == 0)
    #expect(try stack.context.fetch(FetchDescriptor<Person>()) == [ann])
  }

  @Test func optionalAttributesCompareWithNil() throws {
    let stack = try Stack()
    let ann = Person(name: "Ann")
    ann.nickname = "A"
    stack.context.insert(ann)
    stack.context.insert(Person(name: "Bob"))
    let named = try stack.context.fetch(
      FetchDescriptor<Person>(predicate: #Predicate { $0.nickname == "A" }))
    #expect(named == [ann])
    let unnamed = try stack.context.fetch(
      FetchDescriptor<Person>(predicate: #Predicate { $0.nickname == nil }))
    #expect(unnamed.map(\.name) == ["Bob"])
  }

  @Test func equalityOnIndexedPropertiesUsesAnIndex() throws {
    let stack = try Stack()
    let root = Box(title: "Root")
    stack.context.insert(root)
    let child = Box(title: "Child", parent: root)
    let table = try stack.context.table(for: Box.self)
    let id = child.id
    // A lone equality the index answers is exact: the predicate is not evaluated again.
    let byID = stack.context.indexedCandidates(for: #Predicate<Box> { $0.id == id }, in: table)
    #expect(byID?.objects == [child] && byID?.areExact == true)
    let roots = stack.context.indexedCandidates(
      for: #Predicate<Box> { $0.parent == nil }, in: table)
    #expect(roots?.objects == [root] && roots?.areExact == true)
    let rootID = root.id
    let children = stack.context.indexedCandidates(
      for: #Predicate<Box> { $0.parent?.id == rootID && $0.title != "" }, in: table)
    #expect(children?.objects == [child] && children?.areExact == false)
    let both = stack.context.indexedCandidates(
      for: #Predicate<Box> { $0.id == id && $0.parent == nil }, in: table)
    #expect(both?.objects == [child] && both?.areExact == false)
    let childAsRoot = #Predicate<Box> { $0.id == id && $0.parent == nil }
    #expect(try stack.context.fetch(FetchDescriptor(predicate: childAsRoot)).isEmpty)
    #expect(
      stack.context.indexedCandidates(for: #Predicate<Box> { $0.title == "Root" }, in: table) == nil
    )
  }

  /// A table remembers the last key path a fetch asked about by identity: fetches that
  /// alternate between properties must each find their own.
  @Test func fetchesAlternatingBetweenIndexedPropertiesFindTheirOwn() throws {
    let stack = try Stack()
    let people = (0..<6).map { Person(name: "p\($0)", age: $0 % 3) }
    for person in people { stack.context.insert(person) }
    for round in 0..<3 {
      for person in people {
        let name = person.name
        let age = person.age
        let byName = try stack.context.fetch(
          FetchDescriptor<Person>(predicate: #Predicate { $0.name == name }))
        #expect(byName == [person])
        let byAge = try stack.context.fetch(
          FetchDescriptor<Person>(predicate: #Predicate { $0.age == age }))
        #expect(byAge == people.filter { $0.age == age }, "round \(round)")
      }
    }
  }

  /// A `Codable` attribute is indexed by its encoded bytes, but its `==` may call values
  /// equal that encode differently: a fetch by equality on it scans and evaluates.
  @Test func equalityOnAnIndexedCodableAttributeFollowsItsEquality() throws {
    let container = try ObjectContainer(for: Marker.self, store: InMemoryStore())
    let context = try ObjectContext(container)
    let marker = Marker()
    marker.spot = Spot(x: 1, label: "stored")
    context.insert(marker)
    let sought = Spot(x: 1, label: "another label, equal by x")
    let table = try context.table(for: Marker.self)
    let bySpot = #Predicate<Marker> { $0.spot == sought }
    #expect(context.indexedCandidates(for: bySpot, in: table) == nil)
    #expect(try context.fetch(FetchDescriptor(predicate: bySpot)) == [marker])
  }

  @Test(arguments: [1, 2, 3])
  func indexAnswersEqualScanAnswersOnRandomData(seed: UInt64) throws {
    var random = SplitMix64(seed: TestScale.seed(seed))
    let stack = try Stack()
    var people: [Person] = []
    var clubs: [Club] = []
    for _ in 0..<10 {
      let club = Club(name: "")
      stack.context.insert(club)
      clubs.append(club)
    }
    var boxes: [Box] = []
    for step in 0..<600 {
      switch random.next() % 6 {
      case 0, 1:
        let person = Person(name: "\(step)", age: Int(random.next() % 8))
        stack.context.insert(person)
        people.append(person)
      case 2:
        if let person = people.randomElement(using: &random) { person.age = Int(random.next() % 8) }
      case 3:
        let parent =
          boxes.isEmpty || random.next() % 4 == 0 ? nil : boxes.randomElement(using: &random)
        let box = Box(title: "\(step)", parent: parent)
        stack.context.insert(box)
        boxes.append(box)
      case 4:
        if let box = boxes.randomElement(using: &random) {
          box.parent = random.next() % 3 == 0 ? nil : boxes.randomElement(using: &random)
          if box.parent.map({ ancestors(of: $0).contains(box) }) == true { box.parent = nil }
        }
      default:
        if random.next() % 2 == 0, let person = people.randomElement(using: &random) {
          stack.context.delete(person)
          people.removeAll { $0 === person }
        } else if random.next() % 3 == 0 {
          try stack.context.save()
        } else if random.next() % 7 == 0 {
          stack.context.rollback()
          people = try stack.context.fetch(FetchDescriptor<Person>())
          boxes = try stack.context.fetch(FetchDescriptor<Box>())
        }
      }
      if step % 50 == 0 {
        for age in 0..<8 {
          let indexed = try stack.context.fetch(
            FetchDescriptor<Person>(predicate: #Predicate { $0.age == age }))
          let scanned = try stack.context.fetch(
            FetchDescriptor<Person>(predicate: #Predicate { $0.age + 0 == age }))
          #expect(indexed == scanned)
        }
        let roots = try stack.context.fetch(
          FetchDescriptor<Box>(predicate: #Predicate { $0.parent == nil }))
        #expect(roots == boxes.filter { $0.parent == nil }.sorted { $0.objectID! < $1.objectID! })
        for parent in boxes.prefix(10) {
          let parentID = parent.objectID!
          let children = try stack.context.fetch(
            FetchDescriptor<Box>(predicate: #Predicate { $0.parent?.objectID == parentID }))
          #expect(Set(children) == Set(parent.children))
        }
      }
    }
  }

  /// A loaded context indexes its attributes when first asked: the index must then hold
  /// the values as they are by then, after edits, deletes and inserts made before it.
  /// With thousands of objects, the indexes are built on another thread while the changes
  /// are made, and each change first waits for that build.
  @Test(arguments: StoreKind.allCases, [40, EntityTable.backgroundBuildThreshold + 10])
  func indexesOfALoadedStoreFollowChangesMadeBeforeTheirFirstUse(kind: StoreKind, count: Int)
    throws
  {
    let stack = try Stack(kind)
    let people = (0..<count).map { Person(name: "p\($0)", age: $0 % 5) }
    for person in people { stack.context.insert(person) }
    for name in ["red", "green"] { stack.context.insert(Tag(name: name)) }
    try stack.context.save()

    let reopened = try stack.reopened()
    let context = reopened.context
    let loaded = try context.fetch(FetchDescriptor<Person>(sortBy: [SortDescriptor(\.name)]))
    #expect(try context.table(for: Person.self).attributeIndexesAreBuilt == false)
    loaded[2].age = 7
    loaded[2].age = 3
    loaded[0].age = 7
    context.delete(loaded[1])
    context.insert(Person(name: "new", age: 7))
    for age in 0..<8 {
      let indexed = try context.fetch(
        FetchDescriptor<Person>(predicate: #Predicate { $0.age == age }))
      let scanned = try context.fetch(
        FetchDescriptor<Person>(predicate: #Predicate { $0.age + 0 == age }))
      #expect(Set(indexed) == Set(scanned), "age \(age)")
    }
    #expect(try context.table(for: Person.self).attributeIndexesAreBuilt)
    #expect(
      try context.fetch(FetchDescriptor<Person>(predicate: #Predicate { $0.age == 7 })).count == 2)

    // A unique clash with a stored value is found by a save that comes first.
    let clash = Tag(name: "red")
    context.insert(clash)
    #expect(throws: ObjectGraphError.self) { try context.save() }
    context.delete(clash)
    try context.save()
    let red = try context.fetch(FetchDescriptor<Tag>(predicate: #Predicate { $0.name == "red" }))
    #expect(red.count == 1 && red.first !== clash)
  }

  @Test func fetchingAClassOutsideTheSchemaThrows() throws {
    let container = try ObjectContainer(for: Tag.self, store: InMemoryStore())
    let context = try ObjectContext(container)
    let error = try #require(throws: ObjectGraphError.self) {
      try context.fetch(FetchDescriptor<Box>())
    }
    #expect(error.code == .unknownEntity)
    #expect(error.entity == "Box")
  }

  private func ancestors(of box: Box) -> [Box] {
    var result: [Box] = []
    var current = box.parent
    while let next = current, !result.contains(next) {
      result.append(next)
      current = next.parent
    }
    return result
  }
}

/// A place compared by `x` alone: equal values may encode differently.
struct Spot: Codable, Hashable, Sendable {
  var x: Int
  var label: String

  static func == (lhs: Spot, rhs: Spot) -> Bool { lhs.x == rhs.x }
  func hash(into hasher: inout Hasher) { hasher.combine(x) }
}

/// A model with an indexed `Codable` attribute.
final class Marker: ManagedObject {
  @Attribute(.indexed) var spot = Spot(x: 0, label: "")
}
