import Foundation
import Observation
import Testing

@testable import ObjectGraph

/// Every model object is `Observable`: reading a property inside `withObservationTracking`
/// registers it, and every change of it, direct or as a side effect, fires.
@Suite struct ObservationTests {
  @Test func anAttributeChangeFiresItsObservers() {
    let box = Box(title: "A")
    #expect(observes({ _ = box.title }) { box.title = "B" })
    #expect(!observes({ _ = box.title }) { box.detail = "other property" })
    let other = Box(title: "Other")
    #expect(!observes({ _ = box.title }) { other.title = "other object" })
  }

  @Test func objectsSharingARegistrarHearOnlyOfThemselves() throws {
    let stack = try Stack()
    // More objects than share one registrar, all read, so neighbours share one.
    let boxes = (0..<(ObservationBox.capacity + 10)).map { Box(title: "\($0)") }
    for box in boxes { stack.context.insert(box) }
    for box in boxes { _ = box.title }
    #expect(boxes[0].observation === boxes[1].observation)
    #expect(boxes[0].observation !== boxes.last!.observation)
    for (observed, other) in [(0, 1), (1, 0), (5, 63), (64, 65)] {
      #expect(!observes({ _ = boxes[observed].title }) { boxes[other].title = "changed" })
      #expect(!observes({ _ = boxes[observed].title }) { boxes[observed].detail = "other" })
      #expect(observes({ _ = boxes[observed].title }) { boxes[observed].title += "!" })
    }
    let parent = boxes[2]
    #expect(!observes({ _ = parent.children }) { _ = Box(title: "C", parent: boxes[3]) })
    #expect(observes({ _ = parent.children }) { _ = Box(title: "C", parent: parent) })
  }

  /// Every model takes the one key of a seat and property (``ObservationKeys``), made once
  /// for them all; objects of different models sharing a registrar, in different seats,
  /// still hear only of themselves.
  @Test func modelsShareTheirObservationKeys() throws {
    let boxes = ModelRegistry.model(for: Box.self)
    let items = ModelRegistry.model(for: Item.self)
    let common = min(boxes.propertyCount, items.propertyCount)
    for seat in [0, 1, ObservationBox.capacity - 1] {
      for property in 0..<common {
        let key = boxes.observationKeys[seat * boxes.propertyCount + property]
        #expect(key === items.observationKeys[seat * items.propertyCount + property])
        #expect(key == \ManagedObject.[observationKey: seat * ObservationBox.seatWidth + property])
      }
    }
    let stack = try Stack()
    let box = Box(title: "box")
    let item = Item(name: "item")
    stack.context.insert(box)
    stack.context.insert(item)
    _ = box.title
    _ = item.name
    #expect(box.observation === item.observation)
    #expect(box.observationSeat != item.observationSeat)
    #expect(!observes({ _ = box.title }) { item.name = "renamed" })
    #expect(!observes({ _ = item.name }) { box.title = "renamed" })
    #expect(observes({ _ = item.name }) { item.name += "!" })
  }

  /// A load seats its objects 64 to a registrar as it makes them, before any is read; they
  /// still hear only of themselves, and a context a migration stage loads seats none.
  @Test(arguments: StoreKind.allCases)
  func loadedObjectsShareRegistrarsAndHearOnlyOfThemselves(kind: StoreKind) throws {
    let stack = try Stack(kind)
    let count = 2 * ObservationBox.capacity + 10
    for number in 0..<count { stack.context.insert(Box(title: "\(number)")) }
    try stack.context.save()
    let loaded = try ObjectContext(stack.container)
    let boxes = try loaded.fetch(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.title)]))
    #expect(boxes.count == count)
    #expect(boxes.allSatisfy { $0.observation != nil })
    let byRegistrar = Dictionary(grouping: boxes) { ObjectIdentifier($0.observation!) }
    #expect(
      byRegistrar.values.allSatisfy { mates in
        mates.count <= ObservationBox.capacity
          && Set(mates.map(\.observationSeat)).count == mates.count
      })
    let mates = try #require(byRegistrar.values.first { $0.count > 1 })
    #expect(!observes({ _ = mates[0].title }) { mates[1].title = "changed" })
    #expect(!observes({ _ = mates[1].title }) { mates[1].detail = "other" })
    #expect(observes({ _ = mates[1].title }) { mates[1].title += "!" })

    // As a migration stage's context is made: unobserved from its load on.
    let reference = ContextReference()
    let stored = try stack.container.coordinator.load(joiningAs: reference)
    let unobserved = try ObjectContext(
      coordinator: stack.container.coordinator, contents: stored.contents,
      storeGeneration: stored.generation, container: stack.container,
      history: (reference, stored.member, stored.version), isObservable: false)
    let stageBoxes = try unobserved.fetch(FetchDescriptor<Box>())
    #expect(stageBoxes.count == count)
    #expect(stageBoxes.allSatisfy { $0.observation == nil })
  }

  @Test func childrenObserversHearOfEveryKindOfEdit() throws {
    let stack = try Stack()
    let parent = Box(title: "Parent")
    stack.context.insert(parent)
    let a = Box(title: "A", parent: parent)
    let b = Box(title: "B", parent: parent)
    try stack.context.save()
    #expect(observes({ _ = parent.children }) { _ = Box(title: "C", parent: parent) })
    #expect(observes({ _ = parent.children }) { parent.$children.move(from: 0, to: 2) })
    #expect(observes({ _ = parent.children }) { parent.children = [b, a] })
    #expect(observes({ _ = parent.children }) { a.parent = nil })
    #expect(observes({ _ = parent.children }) { stack.context.delete(b) })
    #expect(observes({ _ = parent.children }) { stack.context.rollback() })
    #expect(parent.children.map(\.title) == ["A", "B"])
  }

  @Test func theInverseSideFiresToo() {
    let old = Box(title: "Old")
    let new = Box(title: "New")
    let child = Box(title: "Child", parent: old)
    #expect(observes({ _ = old.children }) { child.parent = new })
    #expect(observes({ _ = child.parent }) { new.children.removeAll() })
  }

  @Test func aCascadeFiresObserversOfEverythingItRemoves() throws {
    let stack = try Stack()
    let root = Box(title: "Root")
    stack.context.insert(root)
    let middle = Box(title: "Middle", parent: root)
    let leaf = Box(title: "Leaf", parent: middle)
    try stack.context.save()
    #expect(
      observes({
        _ = middle.children
        _ = leaf.parent
        _ = root.children
      }) {
        stack.context.delete(middle)
      })
  }
}
