import Foundation

/// What a key path on a model class reads, as a query translates it.
enum ResolvedProperty {
  /// Attribute `index`, of the key path's value type.
  case attribute(Int, AttributeDescription)
  /// To-one relationship `index` (the key path's value is `Destination?`).
  case toOne(Int, RelationshipModel)
  /// To-many relationship `index` (the key path's value is `[Destination]`).
  case toMany(Int, RelationshipModel)
}

extension EntityModel {
  /// The persistent property a key path reads exactly, or nil when it reads something else (a
  /// computed property, a chain of properties, a `Codable` attribute): a query then leaves it
  /// to Foundation. Cached per key path.
  ///
  /// A key path reads a property exactly when probing it finds the property
  /// (``propertyIndex(for:)``), its value type is the property's Swift type, and, for an
  /// attribute, it returns the very values written into the property's slot on the prototype:
  /// a computed property that reads the attribute and changes it (`title.uppercased()`,
  /// `title.isEmpty ? "Untitled" : title`) answers the probe too, and fails that check.
  func resolvedProperty(for keyPath: AnyKeyPath) -> ResolvedProperty? {
    let key = ResolutionKey(model: ObjectIdentifier(self), keyPath: keyPath)
    if let cached = Self.resolutions.withLock({ $0[key] }) { return cached }
    let resolved = resolve(keyPath)
    Self.resolutions.withLock { $0[key] = .some(resolved) }
    return resolved
  }

  private struct ResolutionKey: Hashable {
    let model: ObjectIdentifier
    let keyPath: AnyKeyPath
  }

  private static let resolutions = LockedBox<[ResolutionKey: ResolvedProperty?]>([:])

  private func resolve(_ keyPath: AnyKeyPath) -> ResolvedProperty? {
    guard let index = propertyIndex(for: keyPath) else { return nil }
    let valueType = Swift.type(of: keyPath).valueType
    switch properties[index].kind {
    case .relationship(let relationship):
      let expected: Any.Type
      switch relationship.shape {
      case .toMany: expected = relationship.destinationType.arrayType
      case .optionalToOne: expected = relationship.destinationType.optionalType
      case .requiredToOne: expected = relationship.destinationType
      // `$0.animals` of a `[T]?` list reads an optional array, which reads are not made for.
      case .optionalToMany, .unsupported: return nil
      }
      guard valueType == expected else { return nil }
      return relationship.isToMany ? .toMany(index, relationship) : .toOne(index, relationship)
    case .attribute(let attribute):
      let description = attribute.description
      guard let expected = description.swiftType, valueType == expected,
        readsExactly(keyPath, attribute: index, description)
      else { return nil }
      return .attribute(index, description)
    }
  }

  /// Whether `keyPath` returns the values written into slot `index` of the prototype.
  private func readsExactly(
    _ keyPath: AnyKeyPath, attribute index: Int, _ description: AttributeDescription
  )
    -> Bool
  {
    var samples = description.type.probeValues
    if description.isOptional { samples.append(.null) }
    var readsExactly = false
    _ = propertyIndex { prototype in
      let original = prototype.slots[index]
      defer { prototype.slots[index] = original }
      readsExactly = samples.allSatisfy { sample in
        prototype.slots[index] = .value(sample)
        guard let value = prototype[keyPath: keyPath] else { return false }
        return AttributeCodec.encodeDynamically(value) == sample
      }
    }
    return readsExactly
  }
}

extension ManagedObject {
  /// `[Self]`, the value type of a to-many relationship to this class.
  static var arrayType: Any.Type { [Self].self }
  /// `Self?`, the value type of a to-one relationship to this class.
  static var optionalType: Any.Type { Optional<Self>.self }
}

extension AttributeDescription {
  /// The Swift type of the attribute's values, nil for a `Codable` one.
  var swiftType: Any.Type? {
    let base: any AttributeValue.Type
    switch type {
    case .bool: base = Bool.self
    case .int: base = Int.self
    case .int8: base = Int8.self
    case .int16: base = Int16.self
    case .int32: base = Int32.self
    case .int64: base = Int64.self
    case .uint: base = UInt.self
    case .uint8: base = UInt8.self
    case .uint16: base = UInt16.self
    case .uint32: base = UInt32.self
    case .uint64: base = UInt64.self
    case .double: base = Double.self
    case .float: base = Float.self
    case .string: base = String.self
    case .date: base = Date.self
    case .data: base = Data.self
    case .uuid: base = UUID.self
    case .url: base = URL.self
    case .codable: return nil
    }
    return isOptional ? base.optionalType : base
  }
}

extension AttributeValue {
  fileprivate static var optionalType: Any.Type { Optional<Self>.self }
}

extension AttributeType {
  /// Two stored values of the type that a computed property transforming the attribute is
  /// unlikely to return unchanged.
  fileprivate var probeValues: [PersistentValue] {
    switch self {
    case .bool: [.bool(true), .bool(false)]
    case .int, .int8, .int16, .int32, .int64: [.int(0x5A), .int(-0x21)]
    case .uint, .uint8, .uint16, .uint32, .uint64: [.int(0x5A), .int(0xC3)]
    case .double, .float: [.double(2.5), .double(-0.375)]
    case .string: [.string("ObjectGraph \u{1}probe"), .string("x")]
    case .date:
      [
        .date(Date(timeIntervalSinceReferenceDate: 12_345.5)),
        .date(Date(timeIntervalSince1970: -7)),
      ]
    case .data: [.data(Data([1, 2, 3])), .data(Data())]
    case .uuid:
      [
        .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
        .uuid(UUID(uuid: (16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1))),
      ]
    case .url: [.url(URL(string: "objectgraph://probe/a")!), .url(URL(string: "b")!)]
    case .codable: []
    }
  }
}
