import ObjectGraph

/// `objectgraph info FILE`: the file's format version, its schema, object counts per entity,
/// its size against the size of its live data, and the records appended since the last
/// compaction.
public struct InfoCommand: PathOnlyCommand {
  static let definition = CommandDefinition(
    name: "info",
    abstract: "Show the format version, schema, object counts and sizes of a store file.",
    arguments: [("FILE", "The store file (opened read-only).")], options: [],
    discussion: """
      Live data is the exact size the file would have after 'objectgraph compact'. Records
      are the saves appended since the file was created or last compacted.
      """)

  /// The path of the store file.
  public var path: String

  /// Creates the command for the store file at `path`.
  public init(path: String) {
    self.path = path
  }

  public func execute(
    output: inout some TextOutputStream, errorOutput: inout some TextOutputStream
  ) throws(InspectorError) {
    let store = try StoreReader(path: path)
    defer { store.close() }
    let replay = try store.replay()
    let liveBytes = try store.compactedByteCount(of: replay)
    let schema = store.schema
    var counts = [Int](repeating: 0, count: schema.entities.count)
    for object in replay.contents.objects { counts[object.entity] += 1 }

    let changesets = replay.recordCount - replay.snapshotRecordCount
    output.write(
      """
      File:            \(path)
      Format version:  \(store.header.formatVersion)
      Schema version:  \(schema.version?.description ?? "none (written without a migration plan)")
      File size:       \(store.fileBytes) bytes
      Live data:       \(liveBytes) bytes (the file's size after compaction)
      Records:         \(replay.recordCount) since the file was created or last compacted \
      (\(plural(replay.snapshotRecordCount, "snapshot")), \(plural(changesets, "changeset")))
      Objects:         \(replay.contents.objects.count)
      Next object id:  \(ObjectID(rawValue: replay.contents.nextObjectNumber))

      """)
    if let tail = replay.tornTail {
      output.write(
        "Torn tail:       \(tail.byteCount) bytes at byte offset \(tail.offset), not counted "
          + "above: an interrupted save (\(tail.reason)); the app cuts it off when it next "
          + "opens the store\n")
    }
    for migration in schema.history ?? [] {
      let versions =
        "\(migration.fromVersion?.description ?? "unversioned") to "
        + "\(migration.toVersion?.description ?? "unversioned")"
      output.write(
        "Migrated:        \(versions) on \(migration.date.formatted(.iso8601)): "
          + (migration.changes.isEmpty
            ? "the version only" : migration.changes.joined(separator: "; "))
          + "\n")
    }
    // A migrated file's records name entities and properties by numbers that are not
    // their positions: shown where they are.
    let entityNumbers = schema.lastEntityNumber != nil
    for (index, entity) in schema.entities.enumerated() {
      let number = entityNumbers ? ", entity number \(entity.number ?? index + 1)" : ""
      output.write("\n\(entity.name): \(plural(counts[index], "object"))\(number)\n")
      let width = (entity.properties.map(\.name.count).max() ?? 0) + 2
      let propertyNumbers = entity.lastPropertyNumber != nil
      let numbered = entity.properties.enumerated().map { position, property in
        (property, propertyNumbers ? ", number \(property.number ?? position + 1)" : "")
      }
      let attributes = numbered.filter { $0.0.attribute != nil }
      let relationships = numbered.filter { $0.0.relationship != nil }
      if !attributes.isEmpty { output.write("  attributes:\n") }
      for (property, number) in attributes {
        output.write(
          "    \(padded(property.name, width))\(describe(property.attribute!))\(number)\n")
      }
      if !relationships.isEmpty { output.write("  relationships:\n") }
      for (property, number) in relationships {
        output.write(
          "    \(padded(property.name, width))\(describe(property.relationship!))\(number)\n")
      }
    }
  }

  private func describe(_ attribute: AttributeDescription) -> String {
    var parts = [attribute.type.rawValue + (attribute.isOptional ? "?" : "")]
    if attribute.isUnique { parts.append("unique") }
    if attribute.isIndexed { parts.append("indexed") }
    return parts.joined(separator: ", ")
  }

  private func describe(_ relationship: RelationshipDescription) -> String {
    var parts = [
      relationship.isToMany
        ? "to-many \(relationship.destination), ordered" : "to-one \(relationship.destination)"
    ]
    parts.append(relationship.inverse.map { "inverse \($0)" } ?? "no inverse")
    parts.append("delete rule \(relationship.deleteRule.rawValue)")
    if let minimum = relationship.minimumCount { parts.append("at least \(minimum)") }
    if let maximum = relationship.maximumCount { parts.append("at most \(maximum)") }
    return parts.joined(separator: ", ")
  }

  private func padded(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(1, width - text.count))
  }

  private func plural(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
  }
}
