import ObjectGraph

/// `objectgraph tree FILE --entity NAME --children KEY [--label ATTRIBUTE] [--depth N]`: a
/// self-referential to-many relationship printed as an indented tree.
///
/// Roots are the objects of the entity that are in no other object's `KEY` list, by id;
/// children follow in their stored order. An object met a second time (in two lists, or in a
/// cycle) is marked `(shown above)` and not descended into; objects under no root (only in
/// cycles) follow the roots. The walk is iterative, so any depth prints.
public struct TreeCommand: InspectorCommand {
  static let definition = CommandDefinition(
    name: "tree", abstract: "Print a self-referential relationship as an indented tree.",
    arguments: [("FILE", "The store file (opened read-only).")],
    options: [
      .init(
        name: "--entity", valueName: "NAME", help: "The entity.",
        isRequired: true),
      .init(
        name: "--children", valueName: "KEY",
        help: "Its to-many relationship to itself.", isRequired: true),
      .init(name: "--label", valueName: "ATTRIBUTE", help: "The attribute shown for each object."),
      .init(name: "--depth", valueName: "N", help: "Show at most N levels (roots are level 1)."),
    ],
    discussion: """
      Roots are the objects that are in no other object's KEY list, in id order; children
      are shown in their stored order. Each line is '- LABEL (#id)'.
      """)

  /// The path of the store file.
  public var path: String
  /// The entity whose objects form the tree.
  public var entity: String
  /// The entity's to-many relationship to itself that holds each object's children.
  public var children: String
  /// The attribute shown for each object, if any (otherwise only its id).
  public var label: String?
  /// The number of levels shown, if limited (roots are level 1).
  public var depth: Int?

  /// Creates the command.
  public init(
    path: String, entity: String, children: String, label: String? = nil, depth: Int? = nil
  ) {
    self.path = path
    self.entity = entity
    self.children = children
    self.label = label
    self.depth = depth
  }

  init(parsing arguments: ParsedArguments) throws(InspectorError) {
    let name = Self.definition.name
    guard let entity = arguments["--entity"] else {
      throw ArgumentParser.usageError("missing --entity NAME", command: name)
    }
    guard let children = arguments["--children"] else {
      throw ArgumentParser.usageError("missing --children KEY", command: name)
    }
    self.init(
      path: arguments.positionals[0], entity: entity, children: children,
      label: arguments["--label"],
      depth: try arguments.integer("--depth", minimum: 1, command: name))
  }

  public func execute(
    output: inout some TextOutputStream, errorOutput: inout some TextOutputStream
  ) throws(InspectorError) {
    let store = try StoreReader(path: path)
    defer { store.close() }
    let entityIndex = try store.entityIndex(named: entity, command: Self.definition.name)
    let description = store.schema.entities[entityIndex]
    let (childrenIndex, labelIndex) = try properties(of: description)
    let labelType = labelIndex.flatMap { description.properties[$0].attribute?.type }
    let replay = try store.replay()
    if let tail = replay.tornTail { errorOutput.write(store.warning(for: tail)) }

    let objects = SortedObjects(objects: replay.contents.objects)
    let members = replay.contents.objects.filter { $0.entity == entityIndex }
    var listed = Set<ObjectID>()
    for object in members {
      for child in childIDs(of: object, childrenIndex) where child != object.id {
        listed.insert(child)
      }
    }
    var shown = Set<ObjectID>()
    for root in members where !listed.contains(root.id) {
      printTree(
        from: root.id, objects, childrenIndex, labelIndex.map { ($0, labelType) }, &shown,
        &output)
    }
    if shown.count < members.count {
      // Objects that --depth hid are under a root; the others are only in cycles.
      var underRoots = shown
      var pending = Array(shown)
      while let id = pending.popLast() {
        guard let object = objects[id] else { continue }
        for child in childIDs(of: object, childrenIndex) where underRoots.insert(child).inserted {
          pending.append(child)
        }
      }
      shown = underRoots
    }
    if members.contains(where: { !shown.contains($0.id) }) {
      output.write("Not under any root (in a cycle):\n")
      for object in members where !shown.contains(object.id) {
        printTree(
          from: object.id, objects, childrenIndex, labelIndex.map { ($0, labelType) }, &shown,
          &output)
      }
    }
  }

  /// The index of the children relationship and of the label attribute.
  private func properties(of description: EntityDescription) throws(InspectorError)
    -> (children: Int, label: Int?)
  {
    let name = Self.definition.name
    guard let childrenIndex = description.propertyIndex(named: children) else {
      throw ArgumentParser.usageError(
        "\(description.name) has no property \(children) (its relationships: "
          + names(of: description) { $0.relationship != nil } + ")", command: name)
    }
    guard let relationship = description.properties[childrenIndex].relationship,
      relationship.isToMany, relationship.destination == description.name
    else {
      throw ArgumentParser.usageError(
        "\(description.name).\(children) is not a to-many relationship to \(description.name)",
        command: name)
    }
    guard let label else { return (childrenIndex, nil) }
    guard let labelIndex = description.propertyIndex(named: label),
      description.properties[labelIndex].attribute != nil
    else {
      throw ArgumentParser.usageError(
        "\(description.name) has no attribute \(label) (its attributes: "
          + names(of: description) { $0.attribute != nil } + ")", command: name)
    }
    return (childrenIndex, labelIndex)
  }

  private func names(
    of description: EntityDescription, where include: (PropertyDescription) -> Bool
  ) -> String {
    let names = description.properties.filter(include).map(\.name)
    return names.isEmpty ? "none" : names.joined(separator: ", ")
  }

  private func childIDs(of object: ObjectSnapshot, _ childrenIndex: Int) -> [ObjectID] {
    if case .references(let ids) = object.values[childrenIndex] { return ids }
    return []
  }

  /// Prints the subtree under `root`, depth first, without recursion.
  private func printTree(
    from root: ObjectID, _ objects: SortedObjects, _ childrenIndex: Int,
    _ label: (index: Int, type: AttributeType?)?,
    _ shown: inout Set<ObjectID>, _ output: inout some TextOutputStream
  ) {
    var stack = [(id: root, level: 1)]
    while let (id, level) = stack.popLast() {
      var line = String(repeating: "  ", count: level - 1) + "- "
      guard let object = objects[id] else {
        output.write(line + "\(id) (missing)\n")
        continue
      }
      if let label {
        line += ValueFormatter.plain(object.values[label.index], type: label.type) + " (\(id))"
      } else {
        line += id.description
      }
      guard shown.insert(id).inserted else {
        output.write(line + " (shown above)\n")
        continue
      }
      let children = childIDs(of: object, childrenIndex)
      if let depth, level >= depth, !children.isEmpty {
        line += " (+\(children.count) \(children.count == 1 ? "child" : "children") not shown)"
      } else {
        stack.append(contentsOf: children.reversed().map { ($0, level + 1) })
      }
      output.write(line + "\n")
    }
  }
}
