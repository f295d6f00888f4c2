import Foundation

@testable import ObjectGraph

/// The states a crash can leave on disk, built from the writes, syncs and renames a store
/// made (recorded by a ``StoreIOProbe``), in the way of ALICE (Pillai et al., OSDI 2014).
///
/// The file system is modelled as files (inodes) and a directory of names. A sync of a file
/// makes its writes and size changes before it durable; a sync of the directory makes its
/// creations, renames and removals before it durable. At each crash point (before each sync
/// and at the end), the file system holds the durable state plus some of the operations
/// since, and the states built are:
///
/// - every prefix of the pending operations (a crash between any two of them);
/// - all pending operations but one write (a write that never reached the disk);
/// - a write torn in 512-byte sectors and in 4 KiB pages, by file offset: a prefix of its
///   units, a suffix of them, or all but one; each with the file's size grown over the whole
///   write (the units not written read as zero) or kept as it was (as ext4's data=ordered
///   keeps it until the data is written);
/// - each of those with the directory as it was at its last sync (renames and creations
///   undone), when it has changed since.
struct CrashStates {
  /// One state a crash can leave.
  struct State {
    /// The directory's files: name, then contents.
    var files: [String: [UInt8]]
    /// How many saves had returned at the crash.
    var acknowledgedSaves: Int
    /// How the state was built, for messages.
    var description: String
  }

  /// A pending change to one file.
  private enum Change {
    case write(offset: Int, bytes: [UInt8])
    case resize(Int)
  }

  private struct File {
    var durable: [UInt8] = []
    var current: [UInt8] = []
    var pending: [Change] = []
  }

  private var files: [Int: File] = [:]
  private var names: [String: Int] = [:]
  private var durableNames: [String: Int] = [:]
  private var nextFile = 0
  private var seen = Set<Int>()
  private(set) var states: [State] = []

  /// Builds the crash states of `events`, where `acknowledged[i]` is the number of events
  /// recorded when save `i` returned. Names are the last components of the paths.
  init(events: [StoreIOProbe.Event], acknowledged: [Int]) {
    for (index, event) in events.enumerated() {
      let saves = acknowledged.filter { $0 <= index }.count
      switch event {
      case .sync, .directorySync: addStates(acknowledgedSaves: saves, at: index)
      default: break
      }
      apply(event)
    }
    addStates(acknowledgedSaves: acknowledged.filter { $0 <= events.count }.count, at: events.count)
  }

  private mutating func apply(_ event: StoreIOProbe.Event) {
    switch event {
    case .create(let path):
      if names[name(path)] == nil {
        names[name(path)] = nextFile
        files[nextFile] = File()
        nextFile += 1
      }
    case .write(let path, let offset, let bytes):
      let id = names[name(path)]!
      files[id]!.pending.append(.write(offset: offset, bytes: bytes))
      Self.apply(.write(offset: offset, bytes: bytes), to: &files[id]!.current)
    case .truncate(let path, let size):
      let id = names[name(path)]!
      files[id]!.pending.append(.resize(size))
      Self.apply(.resize(size), to: &files[id]!.current)
    case .sync(let path):
      let id = names[name(path)]!
      files[id]!.durable = files[id]!.current
      files[id]!.pending = []
    case .directorySync:
      durableNames = names
    case .rename(let from, let to):
      names[name(to)] = names.removeValue(forKey: name(from))
    case .link(let from, let to):
      names[name(to)] = names[name(from)]
    case .remove(let path):
      names[name(path)] = nil
    }
  }

  private func name(_ path: String) -> String {
    URL(fileURLWithPath: path).lastPathComponent
  }

  private static func apply(_ change: Change, to bytes: inout [UInt8]) {
    switch change {
    case .write(let offset, let data):
      if bytes.count < offset + data.count {
        bytes += [UInt8](repeating: 0, count: offset + data.count - bytes.count)
      }
      bytes.replaceSubrange(offset..<offset + data.count, with: data)
    case .resize(let size):
      if size < bytes.count {
        bytes.removeSubrange(size...)
      } else {
        bytes += [UInt8](repeating: 0, count: size - bytes.count)
      }
    }
  }

  /// Every variant of every file with pending changes (the others as they are now), under
  /// the current names and, if they differ, the durable ones.
  private mutating func addStates(acknowledgedSaves: Int, at index: Int) {
    var variants: [(file: Int, bytes: [UInt8], how: String)] = []
    for (id, file) in files.sorted(by: { $0.key < $1.key }) where !file.pending.isEmpty {
      for (bytes, how) in Self.variants(of: file) { variants.append((id, bytes, how)) }
    }
    if variants.isEmpty { variants.append((-1, [], "all synced")) }
    let namings =
      names == durableNames
      ? [(names, "")] : [(names, ""), (durableNames, ", directory as last synced")]
    for variant in variants {
      for (naming, namingNote) in namings {
        var image: [String: [UInt8]] = [:]
        for (name, id) in naming {
          image[name] = id == variant.file ? variant.bytes : files[id]!.current
        }
        var hasher = Hasher()
        for (name, bytes) in image.sorted(by: { $0.key < $1.key }) {
          hasher.combine(name)
          hasher.combine(bytes)
        }
        guard seen.insert(hasher.finalize()).inserted else { continue }
        states.append(
          State(
            files: image, acknowledgedSaves: acknowledgedSaves,
            description: "before event \(index): \(variant.how)\(namingNote)"))
      }
    }
  }

  /// The contents a crash can leave of one file with pending changes.
  private static func variants(of file: File) -> [([UInt8], String)] {
    var result: [([UInt8], String)] = []
    let pending = file.pending
    func replaying(_ changes: some Sequence<Change>) -> [UInt8] {
      var bytes = file.durable
      for change in changes { apply(change, to: &bytes) }
      return bytes
    }
    for count in 0...pending.count {
      result.append(
        (replaying(pending[..<count]), "the first \(count) of \(pending.count) changes"))
    }
    for (index, change) in pending.enumerated() {
      guard case .write(let offset, let bytes) = change else { continue }
      var others = Array(pending)
      others.remove(at: index)
      result.append((replaying(others), "write \(index) dropped"))
      let before = replaying(pending[..<index])
      for unit in [512, 4096] {
        let pieces = Self.pieces(of: offset..<offset + bytes.count, unit: unit)
        guard pieces.count > 1 else { continue }
        for written in Self.tears(of: pieces.count) {
          for grown in [true, false] {
            var torn = before
            let end = offset + bytes.count
            if grown && torn.count < end {
              torn += [UInt8](repeating: 0, count: end - torn.count)
            }
            for piece in written.map({ pieces[$0] }) {
              let kept = piece.clamped(to: 0..<torn.count)
              guard !kept.isEmpty else { continue }
              torn.replaceSubrange(
                kept, with: bytes[(kept.lowerBound - offset)..<(kept.upperBound - offset)])
            }
            result.append(
              (
                torn,
                "write \(index) torn in \(unit)-byte units, \(written.count) of \(pieces.count) "
                  + "written (\(written.first!)...), size \(grown ? "grown" : "kept")"
              ))
          }
        }
      }
    }
    return result
  }

  /// The file offsets of `range` split at multiples of `unit`.
  private static func pieces(of range: Range<Int>, unit: Int) -> [Range<Int>] {
    var pieces: [Range<Int>] = []
    var start = range.lowerBound
    while start < range.upperBound {
      let end = min((start / unit + 1) * unit, range.upperBound)
      pieces.append(start..<end)
      start = end
    }
    return pieces
  }

  /// Which units of a write of `count` units reach the disk: prefixes, suffixes and all but
  /// one (at most about 40 of each for long writes).
  private static func tears(of count: Int) -> [[Int]] {
    let step = max(1, count / 40)
    var tears: [[Int]] = []
    for kept in stride(from: 1, to: count, by: step) {
      tears.append(Array(0..<kept))
      tears.append(Array(count - kept..<count))
    }
    for missing in stride(from: 0, to: count, by: step) {
      tears.append((0..<count).filter { $0 != missing })
    }
    return tears
  }
}
