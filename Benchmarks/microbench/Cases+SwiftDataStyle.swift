import BenchmarkSupport
import Foundation
import ObjectGraph

/// A model declared as SwiftData apps declare it: attributes without defaults set in a
/// designated initializer, a required to-one, a `[T]?` list.
final class Session: ManagedObject {
  @Attribute var title: String
  @Attribute var starts: Date
  @Relationship var track: Track
  @Relationship(deleteRule: .cascade) var notes: [SessionNote]? = []

  init(title: String, starts: Date, track: Track) {
    super.init()
    self.title = title
    self.starts = starts
    self.track = track
  }

  required init() { super.init() }
}

final class Track: ManagedObject {
  @Attribute var name = ""
  @Relationship(deleteRule: .cascade) var sessions: [Session] = []
}

final class SessionNote: ManagedObject {
  @Attribute var text = ""
  @Relationship var session: Session?
}

extension Cases {
  // MARK: SwiftData-style declarations and the container's conveniences

  /// What this API costs at 1,000 and at 100,000 objects: creating and saving an object
  /// declared without defaults (with a required to-one, whose check at save visits only
  /// the saved objects), appending to a `[T]?` list, inserting a deleted object again
  /// (cancelling its deletion), and `deleteAllData()`, which costs O(*n*) in the objects it
  /// lets go (shown per object).
  static func swiftDataStyle() -> [MicroBenchmark] {
    [1_000, 100_000].flatMap { size -> [MicroBenchmark] in
      let label = size.formatted(.number.grouping(.automatic))
      return [
        MicroBenchmark(
          "SwiftData-style: designated init + save, beside \(label)", iterations: 1_000
        ) {
          let (container, track) = try scheduleFixture(sessions: size)
          return { number in
            _ = Session(
              title: "Talk \(number)", starts: Date(timeIntervalSince1970: Double(number)),
              track: track)
            try container.mainContext.save()
          }
        },
        MicroBenchmark("SwiftData-style: [T]? append + save, beside \(label)", iterations: 1_000) {
          let (container, track) = try scheduleFixture(sessions: size)
          let session = track.sessions[0]
          return { number in
            let note = SessionNote()
            note.text = "Note \(number)"
            session.notes?.append(note)
            try container.mainContext.save()
          }
        },
        MicroBenchmark("insert of a deleted object, in \(label)", iterations: 1_000) {
          // The deletes (each a removal from the track's list) are made first, untimed.
          let (container, track) = try scheduleFixture(sessions: size)
          let context = container.mainContext
          let deleted = Array(track.sessions.suffix(1_000))
          for session in deleted { context.delete(session) }
          return { number in context.insert(deleted[number]) }
        },
        MicroBenchmark("fetchIdentifiers of 20 of \(label) by starts", iterations: 200) {
          let (container, _) = try scheduleFixture(sessions: size)
          var descriptor = FetchDescriptor<Session>(sortBy: [SortDescriptor(\.starts)])
          descriptor.fetchLimit = 20
          return { _ in blackHole(try container.mainContext.fetchIdentifiers(descriptor)) }
        },
        MicroBenchmark("transaction { insert } beside \(label)", iterations: 1_000) {
          let (container, track) = try scheduleFixture(sessions: size)
          let context = container.mainContext
          return { number in
            try context.transaction {
              _ = Session(
                title: "Talk \(number)", starts: Date(timeIntervalSince1970: Double(number)),
                track: track)
            }
          }
        },
        MicroBenchmark("deleteAllData() of \(label) sessions", batchOf: size) {
          let (container, _) = try scheduleFixture(sessions: size)
          return { _ in try container.deleteAllData() }
        },
      ]
    }
  }

  /// A container with one track of `sessions` saved sessions, in an in-memory store.
  private static func scheduleFixture(sessions: Int) throws -> (ObjectContainer, Track) {
    let container = try ObjectContainer(
      for: Track.self, Session.self, SessionNote.self, store: InMemoryStore())
    let track = Track()
    track.name = "Main"
    container.mainContext.insert(track)
    for number in 0..<sessions {
      _ = Session(
        title: "Session \(number)", starts: Date(timeIntervalSince1970: Double(number)),
        track: track)
    }
    try container.mainContext.save()
    return (container, track)
  }
}
