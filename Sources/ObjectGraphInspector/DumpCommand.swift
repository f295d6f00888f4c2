import ObjectGraph

/// `objectgraph dump FILE [--entity NAME] [--format text|json] [--limit N]`: the objects with
/// their id, attributes and relationships (related ids, to-many lists in their stored order).
///
/// Objects come grouped by entity, in the schema's order, then by id. Output is written
/// object by object: JSON is never built as one string, so its size in memory is that of
/// one object, whatever the size of the store.
public struct DumpCommand: InspectorCommand {
  /// The output format.
  public enum Format: String, Sendable, CaseIterable {
    /// One block of `name: value` lines per object.
    case text
    /// One JSON document: `{"file": ..., "formatVersion": ..., "objects": [...]}`, one
    /// object per line.
    case json
  }

  static let definition = CommandDefinition(
    name: "dump", abstract: "Print the objects of a store file, as text or JSON.",
    arguments: [("FILE", "The store file (opened read-only).")],
    options: [
      .init(name: "--entity", valueName: "NAME", help: "Only objects of this entity."),
      .init(name: "--format", valueName: "text|json", help: "The output format (default: text)."),
      .init(name: "--limit", valueName: "N", help: "At most N objects."),
    ],
    discussion: """
      Objects are grouped by entity in the schema's order, then sorted by id; to-many
      relationships list the related ids in their stored order. JSON output is one valid
      document, written object by object: dates are ISO 8601 strings, data is base64, ids
      are numbers.
      """)

  /// The path of the store file.
  public var path: String
  /// Only objects of this entity, if set.
  public var entity: String?
  /// The output format.
  public var format: Format
  /// At most this many objects, if set.
  public var limit: Int?

  /// Creates the command.
  public init(path: String, entity: String? = nil, format: Format = .text, limit: Int? = nil) {
    self.path = path
    self.entity = entity
    self.format = format
    self.limit = limit
  }

  init(parsing arguments: ParsedArguments) throws(InspectorError) {
    let name = Self.definition.name
    var format = Format.text
    if let text = arguments["--format"] {
      guard let chosen = Format(rawValue: text) else {
        throw ArgumentParser.usageError(
          "--format must be text or json, not '\(text)'", command: name)
      }
      format = chosen
    }
    self.init(
      path: arguments.positionals[0], entity: arguments["--entity"], format: format,
      limit: try arguments.integer("--limit", minimum: 0, command: name))
  }

  public func execute(
    output: inout some TextOutputStream, errorOutput: inout some TextOutputStream
  ) throws(InspectorError) {
    let store = try StoreReader(path: path)
    defer { store.close() }
    let only = try entity.map { name throws(InspectorError) in
      try store.entityIndex(named: name, command: Self.definition.name)
    }
    let replay = try store.replay()
    if let tail = replay.tornTail { errorOutput.write(store.warning(for: tail)) }
    let schema = store.schema

    if format == .json {
      output.write(
        "{\n  \"file\": \(ValueFormatter.jsonString(path)),\n"
          + "  \"formatVersion\": \(store.header.formatVersion),\n"
          + "  \"tornTail\": "
          + (replay.tornTail.map { "{\"offset\": \($0.offset), \"bytes\": \($0.byteCount)}" }
            ?? "null") + ",\n  \"objects\": [")
    }
    var written = 0
    entities: for entityIndex in schema.entities.indices where only == nil || only == entityIndex {
      for object in replay.contents.objects where object.entity == entityIndex {
        if let limit, written >= limit { break entities }
        switch format {
        case .text: output.write((written == 0 ? "" : "\n") + text(object, schema))
        case .json: output.write((written == 0 ? "\n    " : ",\n    ") + json(object, schema))
        }
        written += 1
      }
    }
    if format == .json { output.write(written == 0 ? "]\n}\n" : "\n  ]\n}\n") }
  }

  private func text(_ object: ObjectSnapshot, _ schema: Schema) -> String {
    let entity = schema.entities[object.entity]
    var text = "\(entity.name) \(object.id)\n"
    for (property, value) in zip(entity.properties, object.values) {
      text +=
        "  \(property.name): "
        + ValueFormatter.text(value, type: property.attribute?.type) + "\n"
    }
    return text
  }

  private func json(_ object: ObjectSnapshot, _ schema: Schema) -> String {
    let entity = schema.entities[object.entity]
    var attributes: [String] = []
    var relationships: [String] = []
    for (property, value) in zip(entity.properties, object.values) {
      let member =
        ValueFormatter.jsonString(property.name) + ": "
        + ValueFormatter.json(value, type: property.attribute?.type)
      if property.attribute != nil {
        attributes.append(member)
      } else {
        relationships.append(member)
      }
    }
    return "{\"id\": \(object.id.rawValue), \"entity\": \(ValueFormatter.jsonString(entity.name)), "
      + "\"attributes\": {\(attributes.joined(separator: ", "))}, "
      + "\"relationships\": {\(relationships.joined(separator: ", "))}}"
  }
}
