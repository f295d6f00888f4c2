/// What differs between a stored schema and the one a container asks for, said in words.
public struct SchemaDifference: Sendable {
  /// The differences, one phrase each, e.g. `"entity Box: attribute title was String, is Int"`.
  public let changes: [String]

  /// Compares two schemas.
  public init(stored: Schema, requested: Schema) {
    var changes: [String] = []
    let storedNames = stored.entities.map(\.name)
    let requestedNames = requested.entities.map(\.name)
    for name in storedNames where !requestedNames.contains(name) {
      changes.append("entity \(name) is stored but not in the model")
    }
    for name in requestedNames where !storedNames.contains(name) {
      changes.append("entity \(name) is in the model but not stored")
    }
    if changes.isEmpty, storedNames != requestedNames {
      changes.append(
        "entities are in another order: stored \(storedNames), model \(requestedNames)")
    }
    for entity in requested.entities {
      guard let old = stored.entities.first(where: { $0.name == entity.name }) else { continue }
      let oldNames = old.properties.map(\.name)
      let newNames = entity.properties.map(\.name)
      for name in oldNames where !newNames.contains(name) {
        changes.append("entity \(entity.name): property \(name) is stored but not in the model")
      }
      for name in newNames where !oldNames.contains(name) {
        changes.append("entity \(entity.name): property \(name) is in the model but not stored")
      }
      for property in entity.properties {
        guard let was = old.properties.first(where: { $0.name == property.name }),
          was != property
        else { continue }
        if var unshaped = property.attribute, let stored = was.attribute,
          unshaped.codableType != stored.codableType
        {
          unshaped.codableType = stored.codableType
          if unshaped == stored {
            changes.append(
              "entity \(entity.name): the Codable type of \(property.name) changed: stored "
                + "\(stored.codableType ?? "unrecorded"), model \(property.attribute!.codableType ?? "none")"
            )
            continue
          }
        }
        changes.append(
          "entity \(entity.name): property \(property.name) was \(was.kind), is \(property.kind)")
      }
      if oldNames != newNames, Set(oldNames) == Set(newNames) {
        changes.append("entity \(entity.name): properties are in another order")
      }
    }
    self.changes = changes
  }

  /// Whether the schemas are the same.
  public var isEmpty: Bool { changes.isEmpty }

  /// All differences in one line.
  public var summary: String { changes.joined(separator: "; ") }
}
