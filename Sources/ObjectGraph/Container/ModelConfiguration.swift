import Foundation

/// Where a container keeps its objects, in SwiftData's `ModelConfiguration` shape: in
/// memory only, in the file at a URL, or in the default file for a name.
///
/// ```swift
/// let onDisk = try ObjectContainer(for: Box.self, configurations: ModelConfiguration(url: url))
/// let preview = try ObjectContainer(
///   for: Box.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
/// let standard = try ObjectContainer(for: Box.self)  // ModelConfiguration(): default.store
/// ```
///
/// A configuration stored in memory gives the container a new, empty ``InMemoryStore``; any
/// other a ``BinaryStore`` at ``url``, whose directory the container creates if it is
/// missing. Without a URL, the store is the file ``defaultStoreURL(named:environment:)``
/// names: `<name>.store` in the app's data directory.
///
/// SwiftData's `allowsSave`, `groupContainer` and `cloudKitDatabase` are not offered.
public struct ModelConfiguration: Hashable, Sendable {
  /// The configuration's name; `"default"` unless one was given.
  public let name: String
  /// The schema the container's models must have, if one was given: a container made with
  /// a configuration whose schema differs from its models' throws
  /// ``ObjectGraphError/Code/invalidConfiguration``.
  public let schema: Schema?
  /// The store file; `/dev/null` for a configuration stored in memory only (as in
  /// SwiftData).
  public let url: URL
  /// Whether the objects live in memory only, in an ``InMemoryStore``.
  public let isStoredInMemoryOnly: Bool

  /// The name of a configuration made without one.
  static let defaultName = "default"

  /// A configuration for the default store file of a name, or for memory only.
  ///
  /// ```swift
  /// let config = ModelConfiguration()                            // …/default.store
  /// let notes = ModelConfiguration("Notes")                      // …/Notes.store
  /// let preview = ModelConfiguration(isStoredInMemoryOnly: true)  // an InMemoryStore
  /// ```
  ///
  /// - Parameters:
  ///   - name: The configuration's name, which names the store file; `"default"` when nil.
  ///   - schema: The schema the container's models must have, or nil for any.
  ///   - isStoredInMemoryOnly: Whether to keep the objects in memory only.
  /// - Complexity: O(1); nothing is created until a container opens the store.
  public init(_ name: String? = nil, schema: Schema? = nil, isStoredInMemoryOnly: Bool = false) {
    self.init(
      name, schema: schema, isStoredInMemoryOnly: isStoredInMemoryOnly,
      environment: Self.environment ?? ProcessInfo.processInfo.environment)
  }

  /// The environment variables the default store file is found through: the process's,
  /// unless a task sets others (tests do, rather than change the process's).
  @TaskLocal static var environment: [String: String]?

  /// A configuration for the default store file, found through `environment` on Linux.
  init(
    _ name: String?, schema: Schema?, isStoredInMemoryOnly: Bool, environment: [String: String]
  ) {
    self.name = name ?? Self.defaultName
    self.schema = schema
    self.isStoredInMemoryOnly = isStoredInMemoryOnly
    url =
      isStoredInMemoryOnly
      ? URL(fileURLWithPath: "/dev/null")
      : Self.defaultStoreURL(named: self.name, environment: environment)
  }

  /// A configuration for the store file at a URL.
  ///
  /// ```swift
  /// let container = try ObjectContainer(
  ///   for: Box.self, configurations: ModelConfiguration(url: url))
  /// ```
  ///
  /// - Parameters:
  ///   - name: The configuration's name; `"default"` when nil.
  ///   - schema: The schema the container's models must have, or nil for any.
  ///   - url: The store file, created by the container if missing (its directory too).
  /// - Complexity: O(1).
  public init(_ name: String? = nil, schema: Schema? = nil, url: URL) {
    self.name = name ?? Self.defaultName
    self.schema = schema
    self.url = url
    isStoredInMemoryOnly = false
  }

  /// The default store file of a configuration name: `<name>.store` (`default.store`
  /// without a name; a `/` in the name becomes `_`) in the app's data directory.
  ///
  /// - On Apple platforms, the Application Support directory (`URL.applicationSupportDirectory`),
  ///   as SwiftData does.
  /// - On Linux, the program's directory in the user's data home, per the XDG base directory
  ///   specification: `<program>` in `$XDG_DATA_HOME` when it is set to an absolute path,
  ///   `$HOME/.local/share` otherwise. The program's own directory keeps two programs that
  ///   both use the default from opening each other's `default.store` (an Apple app has a
  ///   sandbox container of its own; a Linux program does not).
  ///
  /// ```swift
  /// ModelConfiguration.defaultStoreURL(environment: ["XDG_DATA_HOME": "/data"])
  /// // /data/<program>/default.store on Linux
  /// ```
  ///
  /// - Parameters:
  ///   - name: The configuration name; `"default"` when nil.
  ///   - environment: The environment variables to read (on Linux only).
  /// - Returns: The file's URL. Nothing is created: the container creates the directory
  ///   when it opens the store.
  /// - Complexity: O(*n*) in the length of the name.
  public static func defaultStoreURL(
    named name: String? = nil,
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> URL {
    defaultDirectory(environment: environment)
      .appendingPathComponent(fileName(for: name ?? defaultName), isDirectory: false)
  }

  /// The directory of the default store files.
  private static func defaultDirectory(environment: [String: String]) -> URL {
    #if canImport(Darwin)
      if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) {
        return URL.applicationSupportDirectory
      }
      return FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
    #else
      let dataHome: URL
      if let path = environment["XDG_DATA_HOME"], path.hasPrefix("/") {
        dataHome = URL(fileURLWithPath: path, isDirectory: true)
      } else {
        let home =
          environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
          ?? FileManager.default.homeDirectoryForCurrentUser.path
        dataHome = URL(fileURLWithPath: home, isDirectory: true)
          .appendingPathComponent(".local/share", isDirectory: true)
      }
      return dataHome.appendingPathComponent(programName, isDirectory: true)
    #endif
  }

  /// The running program's name, as a directory name.
  private static var programName: String {
    let name = fileSafe(ProcessInfo.processInfo.processName)
    return name.isEmpty ? "program" : name
  }

  /// `<name>.store`, with a `/` or NUL in the name replaced by `_`.
  static func fileName(for name: String) -> String {
    let safe = fileSafe(name)
    return (safe.isEmpty ? defaultName : safe) + ".store"
  }

  private static func fileSafe(_ name: String) -> String {
    String(name.map { $0 == "/" || $0 == "\0" ? "_" : $0 })
  }

  /// The store this configuration describes: a new ``InMemoryStore``, or a ``BinaryStore``
  /// at ``url`` once its directory exists.
  ///
  /// - Throws: ``ObjectGraphError/Code/io`` naming the directory when it cannot be created.
  func makeStore() throws -> any PersistentStore {
    if isStoredInMemoryOnly { return InMemoryStore() }
    let directory = url.deletingLastPathComponent()
    do {
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    } catch {
      throw ObjectGraphError(
        .io,
        "cannot create the directory \(directory.path) for the store \(url.lastPathComponent): "
          + "\(error.localizedDescription)", file: directory, underlying: error)
    }
    return BinaryStore(url: url)
  }

  /// The configuration that describes a store the app made, if it is a built-in one.
  static func describing(_ store: any PersistentStore) -> ModelConfiguration? {
    switch store {
    case let binary as BinaryStore: ModelConfiguration(url: binary.url)
    case is InMemoryStore:
      ModelConfiguration(
        nil, schema: nil, isStoredInMemoryOnly: true, environment: [:])
    default: nil
    }
  }
}
