// A libFuzzer target over the BinaryStore file decoder.
//
// Built by Tests/Fuzz/build.sh into one module with every file of Sources/ObjectGraph (so it
// reaches internal API), never by SwiftPM: no target names Tests/Fuzz. Each input is a whole
// store file. It is decoded twice:
//
// 1. Raw: the header and then every record, replayed by `StoreReplayer` with the schema the
//    header holds, with and without deferred strings (what the inspector and a store's open
//    do), and checked by the reader's verification.
// 2. As an app opens it: written to a file, opened by `ObjectContainer` over a `BinaryStore`
//    with the fuzz models below, every object fetched and every property and relationship
//    read, then one change saved.
//
// A thrown error is an expected outcome; a crash, trap or sanitizer report is a finding.
// `--make-corpus DIR` writes the seed stores of Tests/Fuzz/corpus instead of fuzzing.

import Foundation

// MARK: - The fuzz schema

/// A folder tree: every relationship kind the format stores.
final class FuzzFolder: ManagedObject {
  @Attribute(.unique) var id = UUID()
  @Attribute var name = ""
  @Attribute(.indexed) var rank = 0
  @Relationship(inverse: \FuzzFolder.children) var parent: FuzzFolder?
  @Relationship(deleteRule: .cascade) var children: [FuzzFolder]
  @Relationship(deleteRule: .cascade, inverse: \FuzzRecord.folder) var records: [FuzzRecord]
  @Relationship var pinned: [FuzzRecord]
}

/// Every supported attribute type, optionals, a Codable value and a one-to-one relationship.
final class FuzzRecord: ManagedObject {
  struct Settings: Codable, Equatable {
    var volume: Int
    var labels: [String]
  }

  @Attribute var flag = false
  @Attribute var int = 0
  @Attribute var int32: Int32 = 0
  @Attribute var uint8: UInt8 = 0
  @Attribute var double = 0.0
  @Attribute var float: Float = 0
  @Attribute(.indexed) var string = ""
  @Attribute var date = Date(timeIntervalSinceReferenceDate: 0)
  @Attribute var data = Data()
  @Attribute var uuid = UUID()
  @Attribute var url = URL(string: "https://example.com")!
  @Attribute var optionalString: String? = nil
  @Attribute var optionalInt: Int? = nil
  @Attribute var optionalDate: Date? = nil
  @Attribute var optionalURL: URL? = nil
  @Attribute var settings = Settings(volume: 1, labels: [])
  @Attribute var optionalSettings: Settings? = nil
  @Relationship var folder: FuzzFolder?
  @Relationship(inverse: \FuzzRecord.previous) var next: FuzzRecord?
  @Relationship var previous: FuzzRecord?
}

/// The model classes the fuzzer opens stores with.
let fuzzModels: [ManagedObject.Type] = [FuzzFolder.self, FuzzRecord.self]

// MARK: - The entry points

/// Whether each stage prints what it found (`OBJECTGRAPH_FUZZ_VERBOSE=1`), for reproducing.
private let verbose = ProcessInfo.processInfo.environment["OBJECTGRAPH_FUZZ_VERBOSE"] == "1"

private func note(_ message: @autoclosure () -> String) {
  if verbose { FileHandle.standardError.write(Data("fuzz: \(message())\n".utf8)) }
}

/// Where each input is written: in memory when /dev/shm exists.
nonisolated(unsafe) private var scratchDirectory: URL?

private func storeURL() -> URL {
  if let scratchDirectory { return scratchDirectory.appendingPathComponent("input.ogstore") }
  let shm = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
  let base =
    FileManager.default.fileExists(atPath: shm.path)
    ? shm : FileManager.default.temporaryDirectory
  let parent = base.appendingPathComponent("objectgraph-fuzz", isDirectory: true)
  // A process that crashed (a finding) left its directory: remove those of dead processes.
  let entries = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
  for entry in entries {
    if let pid = Int32(entry), kill(pid, 0) != 0, errno == ESRCH {
      try? FileManager.default.removeItem(at: parent.appendingPathComponent(entry))
    }
  }
  let directory = parent.appendingPathComponent("\(getpid())", isDirectory: true)
  try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  scratchDirectory = directory
  atexit {
    if let scratchDirectory { try? FileManager.default.removeItem(at: scratchDirectory) }
  }
  return directory.appendingPathComponent("input.ogstore")
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
  _ argc: UnsafeMutablePointer<Int32>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>
) -> Int32 {
  let arguments = (0..<Int(argc.pointee)).map { String(cString: argv.pointee[$0]!) }
  if let flag = arguments.firstIndex(of: "--make-corpus") {
    guard flag + 1 < arguments.count else {
      FileHandle.standardError.write(Data("usage: --make-corpus DIR\n".utf8))
      exit(2)
    }
    do {
      try makeCorpus(in: URL(fileURLWithPath: arguments[flag + 1], isDirectory: true))
      exit(0)
    } catch {
      FileHandle.standardError.write(Data("making the corpus failed: \(error)\n".utf8))
      exit(1)
    }
  }
  _ = storeURL()
  return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let input = UnsafeRawBufferPointer(start: data, count: size)
  // As it is: what checksums and torn-tail rules catch.
  decodeRaw(input)
  // With every checksum made right, so that mutations reach the decoders behind them.
  let repaired = withChecksumsRepaired(input)
  repaired.withUnsafeBytes { repaired in
    if !repaired.elementsEqual(input) { decodeRaw(repaired) }
    openAsAnApp(repaired)
  }
  return 0
}

// MARK: - Mutation

/// libFuzzer's own mutator, over `size` bytes of a buffer of `maxSize`; returns the new size.
@_silgen_name("LLVMFuzzerMutate")
private func libFuzzerMutate(
  _ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int
) -> Int

/// Mutates mostly the records. The header is 3 KB of schema JSON, most of the file, and a
/// mutation there makes a file the fuzz models do not open; one mutation in eight still goes
/// anywhere, for the header's decoder.
@_cdecl("LLVMFuzzerCustomMutator")
public func fuzzerCustomMutator(
  _ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32
) -> Int {
  var headerEnd = 0
  if size >= BinaryFormat.headerPrefixSize {
    let schemaCount = (0..<4).reduce(0) { $0 | Int(data[12 + $1]) << (8 * $1) }
    headerEnd = BinaryFormat.headerPrefixSize + schemaCount + BinaryFormat.headerChecksumSize
  }
  guard headerEnd > 0, headerEnd < size, seed % 8 != 0 else {
    return libFuzzerMutate(data, size, maxSize)
  }
  return headerEnd + libFuzzerMutate(data + headerEnd, size - headerEnd, maxSize - headerEnd)
}

// MARK: - Checksums

/// The input with the header's checksum and each record's length and payload checksums
/// recomputed, as far as the framing can be followed (to a zero length or a record that runs
/// past the end).
private func withChecksumsRepaired(_ input: UnsafeRawBufferPointer) -> [UInt8] {
  var bytes = Array(input)
  func uint32(at offset: Int) -> Int {
    (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
  }
  func setChecksum(of range: Range<Int>, at offset: Int) {
    let checksum = bytes.withUnsafeBytes {
      CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[range]))
    }
    for byte in 0..<4 { bytes[offset + byte] = UInt8(truncatingIfNeeded: checksum >> (8 * byte)) }
  }
  let prefix = BinaryFormat.headerPrefixSize
  guard bytes.count >= prefix else { return bytes }
  let headerEnd = prefix + uint32(at: 12)
  guard headerEnd + BinaryFormat.headerChecksumSize <= bytes.count else { return bytes }
  setChecksum(of: 0..<headerEnd, at: headerEnd)
  var offset = headerEnd + BinaryFormat.headerChecksumSize
  while offset + BinaryFormat.frameHeaderSize <= bytes.count {
    let length = uint32(at: offset)
    guard length > 0 else { break }
    setChecksum(of: offset..<offset + 4, at: offset + 4)
    let payload = offset + BinaryFormat.frameHeaderSize
    guard payload + length + BinaryFormat.frameTrailerSize <= bytes.count else { break }
    setChecksum(of: payload..<payload + length, at: payload + length)
    offset = payload + length + BinaryFormat.frameTrailerSize
  }
  return bytes
}

// MARK: - Raw decoding

/// Decodes the header and replays the records with the header's own schema.
private func decodeRaw(_ input: UnsafeRawBufferPointer) {
  let header: BinaryStoreHeader
  do {
    header = try BinaryStoreHeader.decode(input)
  } catch {
    return note("header: \(error.message)")
  }
  for defersStrings in [false, true] {
    var replayer = StoreReplayer(file: input, start: header.byteCount, schema: header.schema)
    replayer.defersStrings = defersStrings
    replayer.indexesGraph = !defersStrings
    let outcome: StoreReplayer.Outcome
    do {
      outcome = try replayer.replay()
    } catch {
      return note("replay: \(error.message)")
    }
    note(
      "replay (deferred strings: \(defersStrings)): \(outcome.records) records, "
        + "torn tail: \(outcome.tornTail?.reason ?? "none")")
    if !defersStrings {
      // Re-encoding what was decoded must not trap either.
      if let numbering = try? FileNumbering(header.schema) {
        _ = try? RecordWriter.encodeSnapshot(
          outcome.graph.sortedObjects, nextObjectNumber: outcome.graph.nextObjectNumber,
          numbering: numbering)
      }
    }
  }
}

// MARK: - Opening as an app

/// Writes the input to a file and opens it with the fuzz models.
private func openAsAnApp(_ input: UnsafeRawBufferPointer) {
  let url = storeURL()
  let partial = url.appendingPathExtension("partial")
  try? FileManager.default.removeItem(at: partial)
  guard FileManager.default.createFile(atPath: url.path, contents: Data(input)) else {
    fatalError("cannot write \(url.path)")
  }
  defer { try? FileManager.default.removeItem(at: url) }
  let container: ObjectContainer
  do {
    container = try ObjectContainer(for: fuzzModels, store: BinaryStore(url: url))
  } catch {
    return note("open: \(error)")
  }
  defer { container.close() }
  MainActor.assumeIsolated {
    let context = container.mainContext
    guard let folders = try? context.fetch(FetchDescriptor<FuzzFolder>()),
      let records = try? context.fetch(FetchDescriptor<FuzzRecord>())
    else { return }
    var sink = Hasher()
    for folder in folders { read(folder, into: &sink) }
    for record in records { read(record, into: &sink) }
    note("open: \(folders.count) folders, \(records.count) records")
    blackHole(sink.finalize())
    // One save: the store checks it against the shapes it built from the file.
    let folder = FuzzFolder()
    folder.name = "fuzz"
    folder.parent = folders.first
    context.insert(folder)
    records.first?.string += "!"
    do {
      try context.save()
    } catch {
      note("save: \(error)")
    }
  }
}

private func read(_ folder: FuzzFolder, into sink: inout Hasher) {
  sink.combine(folder.id)
  sink.combine(folder.name)
  sink.combine(folder.rank)
  sink.combine(folder.parent?.name)
  for child in folder.children { sink.combine(child.name) }
  for record in folder.records { sink.combine(record.string) }
  for record in folder.pinned { sink.combine(record.int) }
}

private func read(_ record: FuzzRecord, into sink: inout Hasher) {
  sink.combine(record.flag)
  sink.combine(record.int)
  sink.combine(record.int32)
  sink.combine(record.uint8)
  sink.combine(record.double)
  sink.combine(record.float)
  sink.combine(record.string)
  sink.combine(record.date)
  sink.combine(record.data)
  sink.combine(record.uuid)
  sink.combine(record.url)
  sink.combine(record.optionalString)
  sink.combine(record.optionalInt)
  sink.combine(record.optionalDate)
  sink.combine(record.optionalURL)
  sink.combine(record.settings.volume)
  sink.combine(record.settings.labels)
  sink.combine(record.optionalSettings?.labels)
  sink.combine(record.folder?.name)
  sink.combine(record.next?.string)
  sink.combine(record.previous?.string)
}

@inline(never)
private func blackHole(_ value: Int) {
  if value == 0x5EED_F00D { print("") }
}
