/// The saves of a container's contexts, in order, kept until every other live context has
/// merged them (see ``ObjectContext/mergeSavedChanges()``).
///
/// The main context starts dormant: until the app first asks for it
/// (``ObjectContainer/mainContext``), no one holds it or its objects, so each save is merged
/// into it at once, by the saving thread under the coordinator's lock, instead of being kept
/// for it: an app that only uses contexts of its own keeps no history for a main context
/// it never reads.
///
/// Each save of the store's current generation gets the next version; a context remembers
/// the version it has merged up to, and may save only from the latest: a context that is
/// behind merges the saves it missed first, so that no save is based on a stale list or
/// value. A save is recorded only when another context is live to merge it, and dropped once
/// all of them have: with one context, nothing is kept.
///
/// Kept by ``StoreCoordinator`` under its lock, with the store's generation.
struct SaveHistory {
  /// One recorded save.
  struct Entry {
    let version: UInt64
    let changeset: Changeset
  }

  /// A live context: the generation its objects come from, the version it has merged up
  /// to, and whether it merges on the main queue (the main context) or when next used.
  struct Member {
    var generation: UInt64
    var mergedVersion: UInt64
    let mergesOnMainQueue: Bool
    /// Whether the context is a main context nobody has asked for yet.
    var isDormant: Bool
    let reference: ContextReference
  }

  /// The times ``StoreCoordinator/removeAllObjects()`` emptied the store.
  var generation: UInt64 = 0
  /// The number of saves of this generation.
  private(set) var version: UInt64 = 0
  /// Saves some live context has not merged, in version order.
  private(set) var entries: [Entry] = []
  private var members: [Int: Member] = [:]
  private var nextMember = 0
  /// The objects as the contexts load them, once kept (see ``SharedContents``); nil before,
  /// and after they were dropped.
  var sharedContents: SharedContents?
  /// How many times contexts made after the main one had the store load every object.
  var storeLoads = 0

  /// Adds a context that has merged every save so far; returns its key.
  mutating func join(mergesOnMainQueue: Bool, reference: ContextReference) -> Int {
    nextMember += 1
    members[nextMember] = Member(
      generation: generation, mergedVersion: version, mergesOnMainQueue: mergesOnMainQueue,
      isDormant: mergesOnMainQueue, reference: reference)
    return nextMember
  }

  /// Moves a context to the current generation, having emptied it.
  mutating func renew(_ member: Int) {
    let (generation, version) = (self.generation, self.version)
    update(member) { member in
      member.generation = generation
      member.mergedVersion = version
    }
    trim()
  }

  /// Removes a context that went away.
  mutating func leave(_ member: Int) {
    members[member] = nil
    trim()
  }

  /// Wakes a dormant context (its app asked for it): from now on it merges for itself.
  mutating func wake(_ member: Int) {
    update(member) { $0.isDormant = false }
  }

  /// Records a save made by `member`, which had merged every save before it: returns the
  /// new version, the dormant contexts to merge it into now, and the contexts to tell on the
  /// main queue.
  mutating func record(_ changeset: Changeset, by member: Int) -> (
    version: UInt64, dormantContexts: [ContextReference], mainQueueContexts: [ContextReference]
  ) {
    version += 1
    var dormant: [ContextReference] = []
    var mainQueue: [ContextReference] = []
    var othersMerge = false
    for index in members.indices {
      let (key, other) = members[index]
      guard other.generation == generation else { continue }
      guard key != member else {
        members.values[index].mergedVersion = version
        continue
      }
      if other.isDormant {
        dormant.append(other.reference)
        members.values[index].mergedVersion = version
      } else {
        othersMerge = true
        if other.mergesOnMainQueue { mainQueue.append(other.reference) }
      }
    }
    if othersMerge { entries.append(Entry(version: version, changeset: changeset)) }
    if sharedContents?.note(changeset) == false { sharedContents = nil }
    return (version, dormant, mainQueue)
  }

  /// The saves `member` has not merged, in order; none for a context of an earlier
  /// generation, whose objects are gone.
  func saves(missedBy member: Int) -> ArraySlice<Entry> {
    guard let member = members[member], member.generation == generation else { return [] }
    let version = member.mergedVersion
    let first = entries.firstIndex { $0.version > version } ?? entries.endIndex
    return entries[first...]
  }

  /// Notes that `member` merged every save up to `version`.
  mutating func noteMerged(_ member: Int, upTo version: UInt64) {
    update(member) { $0.mergedVersion = version }
    trim()
  }

  /// Whether `member` has merged every save and may save.
  func isCurrent(_ member: Int) -> Bool {
    members[member].map { $0.generation == generation && $0.mergedVersion == version } ?? false
  }

  /// Starts a new generation: the saves of the old one are of objects that are gone.
  mutating func startGeneration() {
    generation += 1
    version = 0
    entries = []
    sharedContents = nil
  }

  /// Changes a member in place. (Not `members[key]?.field = value`: that `_modify` of the
  /// dictionary's optional subscript allocates a coroutine frame each time, three
  /// allocations a save.)
  private mutating func update(_ member: Int, _ body: (inout Member) -> Void) {
    guard let index = members.index(forKey: member) else { return }
    body(&members.values[index])
  }

  /// Drops the saves every live context of this generation has merged.
  private mutating func trim() {
    let current = generation
    let merged =
      members.values.lazy.filter { $0.generation == current && !$0.isDormant }
      .map(\.mergedVersion).min() ?? version
    if let first = entries.firstIndex(where: { $0.version > merged }) {
      if first > 0 { entries.removeFirst(first) }
    } else {
      entries = []
    }
  }
}

/// A context, held weakly, to reach from the main queue.
final class ContextReference: @unchecked Sendable {
  // Set once, by the context's initializer; read on the main queue only, for a main
  // context, which is used there.
  weak var context: ObjectContext?
}
