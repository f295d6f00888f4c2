import Foundation
import ObjectGraph

/// Read-only access to a store file for the commands, reporting every failure as an
/// ``InspectorError``.
///
/// Built on ``BinaryStoreReader``: the file is opened read-only with a shared lock (an app
/// that has the store open makes it fail with ``InspectorError/Code/storeInUse``), read
/// whole, and its header and schema checked; ``replay()`` gives the live objects sorted by
/// id and reports a torn tail without cutting it off.
struct StoreReader {
  /// The store file.
  let url: URL
  private let reader: BinaryStoreReader

  /// Opens the store file at `path` read-only.
  ///
  /// - Throws: ``InspectorError`` with the code for a missing, locked, damaged or newer file.
  init(path: String) throws(InspectorError) {
    url = URL(fileURLWithPath: path)
    do {
      reader = try BinaryStoreReader(url: url)
    } catch {
      throw InspectorError(error, file: url)
    }
  }

  /// The file's header: format version and schema.
  var header: BinaryStoreHeader { reader.header }
  /// The schema the file records.
  var schema: Schema { reader.header.schema }
  /// The size of the file in bytes.
  var fileBytes: Int { reader.fileBytes }

  /// The live objects, sorted by id, as the store would load them.
  ///
  /// - Throws: ``InspectorError/Code/damagedStore`` with the byte offset of the damage.
  func replay() throws(InspectorError) -> BinaryStoreReplay {
    do {
      return try reader.replay()
    } catch {
      throw InspectorError(error, file: url)
    }
  }

  /// The size of the file compaction would write for `replay`.
  func compactedByteCount(of replay: BinaryStoreReplay) throws(InspectorError) -> Int {
    do {
      return try reader.compactedByteCount(of: replay)
    } catch {
      throw InspectorError(error, file: url)
    }
  }

  /// Releases the file and its lock.
  func close() {
    reader.close()
  }

  /// The index of the entity called `name`.
  ///
  /// - Throws: ``InspectorError/Code/usage`` listing the file's entities.
  func entityIndex(named name: String, command: String) throws(InspectorError) -> Int {
    guard let index = schema.entityIndex(named: name) else {
      let names = schema.entities.map(\.name).joined(separator: ", ")
      throw ArgumentParser.usageError(
        "\(url.path) has no entity \(name) (its entities: \(names.isEmpty ? "none" : names))",
        command: command)
    }
    return index
  }

  /// The warning line for a torn tail that a read-only command leaves in place.
  func warning(for tail: BinaryStoreReplay.TornTail) -> String {
    "objectgraph: warning: \(url.path): ends in an interrupted save of \(tail.byteCount) "
      + "bytes at byte offset \(tail.offset), not shown (the app cuts it off when it next "
      + "opens the store)\n"
  }
}

/// Objects sorted by id, found by binary search (no second copy of the graph in memory).
struct SortedObjects {
  /// The objects, sorted by id.
  let objects: [ObjectSnapshot]

  /// The object with this id, if any.
  ///
  /// - Complexity: O(log *n*).
  subscript(id: ObjectID) -> ObjectSnapshot? {
    var low = 0
    var high = objects.count
    while low < high {
      let middle = (low + high) / 2
      if objects[middle].id < id { low = middle + 1 } else { high = middle }
    }
    return low < objects.count && objects[low].id == id ? objects[low] : nil
  }
}
