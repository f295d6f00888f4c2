import Foundation
import Testing

@testable import ObjectGraph

/// Every attribute type, optionals and `Codable` values survive a save and a reopen.
@Suite struct AttributeTests {
  @Test func everyAttributeTypeRoundTrips() throws {
    var stack = try Stack()
    let sample = Sample()
    sample.flag = true
    sample.int = -42
    sample.int8 = .min
    sample.int16 = .max
    sample.int32 = -7
    sample.int64 = .min
    sample.uint = .max
    sample.uint8 = 255
    sample.uint16 = 65_535
    sample.uint32 = .max
    sample.uint64 = .max
    sample.double = -0.5
    sample.float = 1.25
    sample.string = "Grüße, 世界 👋🏽"
    sample.date = Date(timeIntervalSince1970: 1_700_000_000.25)
    sample.data = Data([0, 1, 2, 255])
    let uuid = UUID()
    sample.uuid = uuid
    sample.url = URL(string: "file:///tmp/a%20b")!
    sample.optionalString = "here"
    sample.settings = Sample.Settings(volume: 11, labels: ["a", "b"])
    sample.optionalSettings = Sample.Settings(volume: 0, labels: [])
    stack.context.insert(sample)
    stack.context.insert(Sample())
    try stack.context.save()

    stack = try stack.reopened()
    let loaded = try stack.context.fetch(FetchDescriptor<Sample>(predicate: #Predicate { $0.flag }))
    let copy = try #require(loaded.first)
    #expect(loaded.count == 1)
    #expect(copy.int == -42)
    #expect(copy.int8 == .min)
    #expect(copy.int16 == .max)
    #expect(copy.int32 == -7)
    #expect(copy.int64 == .min)
    #expect(copy.uint == .max)
    #expect(copy.uint8 == 255)
    #expect(copy.uint16 == 65_535)
    #expect(copy.uint32 == .max)
    #expect(copy.uint64 == .max)
    #expect(copy.double == -0.5)
    #expect(copy.float == 1.25)
    #expect(copy.string == "Grüße, 世界 👋🏽")
    #expect(copy.date == Date(timeIntervalSince1970: 1_700_000_000.25))
    #expect(copy.data == Data([0, 1, 2, 255]))
    #expect(copy.uuid == uuid)
    #expect(copy.url == URL(string: "file:///tmp/a%20b")!)
    #expect(copy.optionalString == "here")
    #expect(copy.optionalInt == nil)
    #expect(copy.settings == Sample.Settings(volume: 11, labels: ["a", "b"]))
    #expect(copy.optionalSettings == Sample.Settings(volume: 0, labels: []))

    copy.optionalString = nil
    copy.optionalSettings = nil
    copy.optionalInt = 5
    try stack.context.save()
    stack = try stack.reopened()
    let again = try #require(
      try stack.context.fetch(FetchDescriptor<Sample>(predicate: #Predicate { $0.flag })).first)
    #expect(again.optionalString == nil)
    #expect(again.optionalSettings == nil)
    #expect(again.optionalInt == 5)
  }

  @Test func codableValuesAreStoredAsSortedJSON() throws {
    let stack = try Stack()
    let sample = Sample()
    sample.settings = Sample.Settings(volume: 3, labels: ["x"])
    stack.context.insert(sample)
    let value = stack.context.changedValues(of: sample)["settings"]
    let json = try #require(value.flatMap { if case .data(let data) = $0 { data } else { nil } })
    #expect(String(decoding: json, as: UTF8.self) == #"{"labels":["x"],"volume":3}"#)
  }

  @Test func uuidDefaultsAreMadeOnFirstUseAndStayPut() throws {
    let stack = try Stack()
    let first = Box(title: "first")
    let second = Box(title: "second")
    let firstID = first.id
    #expect(first.id == firstID)
    #expect(second.id != firstID)
    // Never read before insertion: made when inserted, saved, and unique.
    let unread = (0..<3).map { Box(title: "\($0)") }
    for box in unread { stack.context.insert(box) }
    try stack.context.save()
    let saved = try stack.reopened().context.fetch(FetchDescriptor<Box>())
    #expect(Set(saved.map(\.id)).count == 3)
    #expect(Set(saved.map(\.id)) == Set(unread.map(\.id)))
  }

  /// A `UUID` default runs when first needed, at most once, and never if the value is set
  /// first, even when its closure captures state.
  @Test func aUUIDDefaultRunsOnceWhenNeededAndNeverWhenOverwritten() throws {
    let calls = LockedBox(0)
    Ticket.makeID = {
      calls.withLock { $0 += 1 }
      return UUID()
    }
    let container = try ObjectContainer(for: Ticket.self, store: InMemoryStore())
    let context = try ObjectContext(container)
    calls.withLock { $0 = 0 }  // describing the class made one
    let read = Ticket()
    #expect(calls.withLock { $0 } == 0)
    let id = read.id
    #expect(read.id == id)
    #expect(calls.withLock { $0 } == 1)
    let overwritten = Ticket()
    overwritten.id = UUID()
    context.insert(overwritten)
    context.insert(Ticket())  // never read: made on insertion
    #expect(calls.withLock { $0 } == 2)
  }
}

/// A model whose `UUID` default counts its calls.
final class Ticket: ManagedObject {
  nonisolated(unsafe) static var makeID: () -> UUID = { UUID() }
  @Attribute var id = Ticket.makeID()
}
