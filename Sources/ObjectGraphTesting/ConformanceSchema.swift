import Foundation
import ObjectGraph

/// A hand-written schema with every attribute type, an optional, a to-one and an ordered
/// to-many relationship, and sample objects of it.
///
/// Entity 0, `Item`, has properties in this order: flag (Bool), count (Int), small (Int8),
/// big (UInt64), ratio (Double), fraction (Float), title (String), created (Date), blob
/// (Data), identifier (UUID), link (URL), payload (Codable), nickname (String?), parent
/// (to-one Item), children (ordered to-many Item). Entity 1, `Note`: text (String), item
/// (to-one Item).
public enum ConformanceSchema {
  public static let item = 0
  public static let note = 1

  // Property indexes of Item.
  public static let title = 6
  public static let blob = 8
  public static let nickname = 12
  public static let parent = 13
  public static let children = 14

  public static let schema = Schema(entities: [
    EntityDescription(
      name: "Item",
      properties: [
        attribute("flag", .bool), attribute("count", .int), attribute("small", .int8),
        attribute("big", .uint64), attribute("ratio", .double), attribute("fraction", .float),
        attribute("title", .string), attribute("created", .date), attribute("blob", .data),
        attribute("identifier", .uuid, unique: true), attribute("link", .url),
        attribute("payload", .codable), attribute("nickname", .string, optional: true),
        relationship("parent", toMany: false, inverse: "children", rule: .nullify),
        relationship("children", toMany: true, inverse: "parent", rule: .cascade),
      ]),
    EntityDescription(
      name: "Note",
      properties: [
        attribute("text", .string),
        PropertyDescription(
          name: "item",
          kind: .relationship(
            RelationshipDescription(
              destination: "Item", isToMany: false, inverse: nil, deleteRule: .nullify))),
      ]),
  ])

  /// The same schema with Item's title declared as an Int.
  public static var changedSchema: Schema {
    var schema = schema
    schema.entities[item].properties[title] = attribute("title", .int)
    return schema
  }

  /// An Item with deterministic values derived from `number`.
  public static func item(
    _ number: UInt64, title: String? = nil, parent: UInt64? = nil, children: [UInt64] = []
  ) -> ObjectSnapshot {
    let seed = Int64(truncatingIfNeeded: number) % 1_000_000_000
    var uuidBytes = [UInt8](repeating: 0, count: 16)
    withUnsafeBytes(of: number.littleEndian) { uuidBytes.replaceSubrange(0..<8, with: $0) }
    let uuid = uuidBytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    return ObjectSnapshot(
      id: ObjectID(rawValue: number), entity: item,
      values: [
        .bool(number % 2 == 0), .int(seed * 1_000_003 - 7), .int(seed % 128), .int(-seed),
        .double(Double(seed) / 3), .double(Double(Float(seed) * 0.25)),
        .string(title ?? "Item \(number)"),
        .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(seed))),
        .data(Data([UInt8(number & 0xFF), 0, 255])), .uuid(uuid),
        .url(URL(string: "https://example.com/items/\(number)?q=a%20b")!),
        .data(Data("{\"n\":\(number)}".utf8)),
        number % 3 == 0 ? .null : .string("nick \(number)"),
        parent.map { .reference(ObjectID(rawValue: $0)) } ?? .null,
        .references(children.map { ObjectID(rawValue: $0) }),
      ])
  }

  /// A Note pointing at an item.
  /// A changeset that changes one property of item `number`.
  public static func update(
    _ number: UInt64, property: Int, _ kind: PropertyChange.Kind, nextObjectNumber: UInt64
  ) -> Changeset {
    Changeset(
      updated: [
        ObjectUpdate(
          id: ObjectID(rawValue: number), entity: item,
          changes: [PropertyChange(property: property, kind: kind)])
      ], nextObjectNumber: nextObjectNumber)
  }

  public static func note(_ number: UInt64, text: String, item: UInt64?) -> ObjectSnapshot {
    ObjectSnapshot(
      id: ObjectID(rawValue: number), entity: note,
      values: [.string(text), item.map { .reference(ObjectID(rawValue: $0)) } ?? .null])
  }

  /// Items whose values are the edge cases of every type.
  public static func edgeCaseItems(startingAt first: UInt64) -> [ObjectSnapshot] {
    let large = String(repeating: "Zürich 🇨🇭 日本語 ", count: 80_000)  // > 1 MB of UTF-8
    let largeData = Data((0..<1_200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    var extreme = item(first, title: "")
    extreme.values = [
      .bool(true), .int(.max), .int(Int64(Int8.min)), .int(Int64(bitPattern: UInt64.max)),
      .double(-0.0), .double(.infinity), .string(""), .date(.distantPast), .data(Data()),
      .uuid(
        UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))
      ),
      .url(URL(fileURLWithPath: "/tmp/a folder/ü.txt")), .data(Data()), .string(""), .null,
      .references([]),
    ]
    var fractional = item(first + 1, title: large)
    fractional.values[4] = .double(.pi)
    fractional.values[5] = .double(-.greatestFiniteMagnitude)
    fractional.values[7] = .date(Date(timeIntervalSinceReferenceDate: 0.123456789))
    fractional.values[8] = .data(largeData)
    fractional.values[10] = .url(
      URL(string: "page?x=1#frag", relativeTo: URL(string: "https://example.org/dir/"))!)
    fractional.values[nickname] = .string("e\u{301} ñ \u{0} 🧑‍🚀")
    var unicode = item(first + 2, title: "Ünïcödé – 中文 – 🇯🇵")
    unicode.values[7] = .date(.distantFuture)
    unicode.values[4] = .double(.leastNonzeroMagnitude)
    return [extreme, fractional, unicode]
  }

  private static func attribute(
    _ name: String, _ type: AttributeType, optional: Bool = false, unique: Bool = false
  ) -> PropertyDescription {
    PropertyDescription(
      name: name,
      kind: .attribute(
        AttributeDescription(type: type, isOptional: optional, isUnique: unique, isIndexed: false)))
  }

  private static func relationship(
    _ name: String, toMany: Bool, inverse: String, rule: DeleteRule
  ) -> PropertyDescription {
    PropertyDescription(
      name: name,
      kind: .relationship(
        RelationshipDescription(
          destination: "Item", isToMany: toMany, inverse: inverse, deleteRule: rule)))
  }
}

extension StoreContents {
  /// The contents in a comparable form: objects by id, and the next object number.
  public var comparable: ComparableContents {
    ComparableContents(
      objects: Dictionary(uniqueKeysWithValues: objects.map { ($0.id, $0) }),
      nextObjectNumber: nextObjectNumber)
  }
}

/// Store contents that compare with `==` regardless of object order.
public struct ComparableContents: Equatable, CustomStringConvertible {
  /// The objects by id.
  public var objects: [ObjectID: ObjectSnapshot]
  /// The next object number.
  public var nextObjectNumber: UInt64

  public var description: String {
    "\(objects.count) objects, next \(nextObjectNumber)"
  }
}
