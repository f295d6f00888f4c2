import Foundation

/// A monotonic clock reading in seconds (`CLOCK_MONOTONIC`).
public func monotonicSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Runs `body` and returns the seconds it took on the monotonic clock.
public func seconds(_ body: () throws -> Void) rethrows -> Double {
  let start = monotonicSeconds()
  try body()
  return monotonicSeconds() - start
}

/// The process's peak resident set in bytes (`ru_maxrss` is in KiB on Linux).
public func peakResidentBytes() -> Int {
  var usage = rusage()
  getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
  return Int(usage.ru_maxrss) * 1024
}

/// The total size of the files a store keeps at `path`: the file itself and any sibling
/// named after it with a `-` or `.` suffix (journals, locks, side files).
public func storeFileBytes(atPath path: String) -> Int {
  let url = URL(fileURLWithPath: path)
  let directory = url.deletingLastPathComponent().path
  let name = url.lastPathComponent
  let siblings = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
  return siblings.filter { isStoreFile($0, of: name) }.reduce(0) { total, sibling in
    let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + sibling)
    return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
  }
}

/// Removes a store's file and its siblings (see ``storeFileBytes(atPath:)``).
public func removeStoreFiles(atPath path: String) {
  let url = URL(fileURLWithPath: path)
  let directory = url.deletingLastPathComponent().path
  let name = url.lastPathComponent
  let siblings = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
  for sibling in siblings where isStoreFile(sibling, of: name) {
    try? FileManager.default.removeItem(atPath: directory + "/" + sibling)
  }
}

/// Whether a directory entry is a store's file `name` or one of its side files.
private func isStoreFile(_ entry: String, of name: String) -> Bool {
  entry == name || entry.hasPrefix(name + "-") || entry.hasPrefix(name + ".")
}

/// Runs what is queued on the main dispatch queue, as an app's run loop does between events.
///
/// The main context schedules its change delivery on the main queue, and that block holds
/// the context: in a command-line tool whose main thread never returns to the queue, a
/// dropped container's context and objects would stay in memory. Draining before dropping a
/// container lets "drop everything" free them.
public func drainMainQueue() {
  _ = RunLoop.main.run(mode: .default, before: Date())
}
