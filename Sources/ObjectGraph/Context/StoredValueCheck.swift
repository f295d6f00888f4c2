import Foundation

/// What a stored value of one property must be for its model to read it: checked as each
/// loaded object is made, so that no stored byte traps at first read.
///
/// A store hands over values of any kind (``PersistentValue``); an attribute reads only its
/// own (an `Int8` only `.int` values that fit, a non-optional only non-null ones). A value
/// that does not fit is an error naming the object, entity and property when the store is
/// loaded, instead of a trap when the app first reads it. Relationships are checked as they
/// are linked. A `Codable` attribute's bytes are decoded once with its type at load
/// (``AttributeModel/decodingProblem``): a value the app's type no longer decodes is
/// reported there.
struct StoredValueCheck {
  /// The value kind a property accepts.
  enum Kind: UInt8 {
    case bool, int, double, string, date, data, uuid, url
    /// A to-one relationship: `.null` or one reference.
    case toOne
    /// A to-many relationship: `.null` or a list of references.
    case toMany
  }

  var kind: Kind
  var isOptional: Bool
  /// For integers narrower than 64 bits, the stored values they hold.
  var integers: ClosedRange<Int64>?

  /// The check for `property`.
  init(_ property: PropertyDescription) {
    guard case .attribute(let attribute) = property.kind else {
      kind = property.relationship!.isToMany ? .toMany : .toOne
      isOptional = true
      return
    }
    isOptional = attribute.isOptional
    switch attribute.type {
    case .bool: kind = .bool
    case .int, .int64, .uint, .uint64: kind = .int
    case .int8: (kind, integers) = (.int, Int64(Int8.min)...Int64(Int8.max))
    case .int16: (kind, integers) = (.int, Int64(Int16.min)...Int64(Int16.max))
    case .int32: (kind, integers) = (.int, Int64(Int32.min)...Int64(Int32.max))
    case .uint8: (kind, integers) = (.int, 0...Int64(UInt8.max))
    case .uint16: (kind, integers) = (.int, 0...Int64(UInt16.max))
    case .uint32: (kind, integers) = (.int, 0...Int64(UInt32.max))
    case .double, .float: kind = .double
    case .string: kind = .string
    case .date: kind = .date
    case .data, .codable: kind = .data
    case .uuid: kind = .uuid
    case .url: kind = .url
    }
  }

  /// Whether the property reads `value`.
  @inline(__always)
  func accepts(_ value: PersistentValue) -> Bool {
    withUnsafePointer(to: value) { accepts(valueAt: $0) }
  }

  /// Whether the property is a relationship.
  var isRelationship: Bool { kind == .toOne || kind == .toMany }

  /// Whether the property reads the value at `value`, read in place (no copy, so no
  /// retain of a string or list for a check that reads only the kind).
  @inline(__always)
  func accepts(valueAt value: UnsafePointer<PersistentValue>) -> Bool {
    switch value.pointee {
    case .null: return isOptional
    case .bool: return kind == .bool
    case .int(let number): return kind == .int && (integers?.contains(number) ?? true)
    case .double: return kind == .double
    case .string: return kind == .string
    case .date: return kind == .date
    case .data: return kind == .data
    case .uuid: return kind == .uuid
    case .url: return kind == .url
    case .reference: return kind == .toOne
    case .references: return kind == .toMany
    }
  }

  /// The checks of each property of each entity of `schema`.
  static func checks(of schema: Schema) -> [[StoredValueCheck]] {
    schema.entities.map { $0.properties.map(StoredValueCheck.init) }
  }

  /// The error for `value`, stored (or, with `verb` "saves", about to be) in property
  /// `property` of object `id` of `entity`, which it does not fit.
  static func mismatch(
    _ value: PersistentValue, of id: ObjectID, in entity: EntityDescription, property: Int,
    verb: String = "holds"
  ) -> ObjectGraphError {
    let description = entity.properties[property]
    let declared: String
    switch description.kind {
    case .attribute(let attribute):
      declared = "a \(attribute.type.rawValue)\(attribute.isOptional ? "?" : "") attribute"
    case .relationship(let relationship):
      declared = "a to-\(relationship.isToMany ? "many" : "one") relationship"
    }
    return ObjectGraphError(
      .corruptStore,
      "stored object \(id) of \(entity.name) \(verb) \(value) in \(description.name), which is "
        + declared, entity: entity.name, property: description.name, objectID: id)
  }
}
