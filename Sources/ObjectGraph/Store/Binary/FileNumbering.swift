/// How the records of a store file name the entities and properties of its schema: by the
/// numbers the header's schema gives them (``EntityDescription/number``,
/// ``PropertyDescription/number``), which a migration keeps, never by position.
///
/// A record names an entity by its number − 1 and a property by its number − 1. An object's
/// values are a *run* in number order: slot *r* holds the property numbered *r* + 1, up to
/// the highest number of a property the entity has, and a number no property has any more
/// (a removed one) is a hole, written `null` and skipped when read. A schema whose numbers
/// are positions (one never migrated, or migrated only by adding at the end) has no holes,
/// and its records are the bytes format version 2 wrote.
///
/// ```swift
/// // Entity Note had title (1), body (2), date (3); body was removed, tag added (4).
/// // Note's run: [title, hole, date, tag]; in memory: [title, date, tag].
/// ```
struct FileNumbering: Sendable {
  /// One entity's numbering.
  struct Entity: Sendable {
    /// The number of the entity's properties (values of an object in memory).
    let propertyCount: Int
    /// By run slot (property number − 1), the property's position, or −1 for a hole.
    let positionByRunSlot: [Int]
    /// By property position, its run slot.
    let runSlotByPosition: [Int]
    /// Whether run slot and position agree for every property, and the run has no holes.
    let isPositional: Bool
    /// By property position, the value of a record written before the property was added
    /// (``PropertyDescription/absentValue``), if the schema gives one.
    let absentValues: [PersistentValue?]
    /// The fewest values a record may hold for an object: up to the last slot of a property
    /// without an absent value.
    let shortestRun: Int
    /// The most values a record may hold for an object: the entity's last number (slots
    /// past ``runLength`` are of properties removed since, holes).
    let longestRun: Int
    /// The most values of a record whose slots, holes passed over, hold properties in order
    /// of position: such a run is read straight into place, the properties between its
    /// values (added since it was written) taking their absent values. Properties moved
    /// among the others make it shorter.
    let orderedRun: Int

    /// The number of values an object of the entity has in a record written with this
    /// numbering.
    var runLength: Int { positionByRunSlot.count }

    /// The position of the property in run slot `slot`, or −1 for a hole.
    @inline(__always)
    func position(ofSlot slot: Int) -> Int {
      slot < positionByRunSlot.count ? positionByRunSlot[slot] : -1
    }
  }

  /// By entity position, its numbering.
  let entities: [Entity]
  /// By entity number − 1, the entity's position, or −1 for a retired number.
  private let positionByEntitySlot: [Int]
  /// By entity position, its number − 1.
  let entitySlotByPosition: [Int]
  /// Whether every entity and property is numbered by its position.
  let isPositional: Bool
  /// The most properties an entity has.
  let largestPropertyCount: Int
  /// The most properties with an absent value an entity has.
  let largestAbsentCount: Int

  /// The numbering of a schema whose every number is its position, for writers of records
  /// read with such a schema (tests): a store's writers take the numbering of its header.
  static let positional = FileNumbering()

  private init() {
    entities = []
    positionByEntitySlot = []
    entitySlotByPosition = []
    isPositional = true
    largestPropertyCount = 0
    largestAbsentCount = 0
  }

  /// The highest number a header may give: more is taken for damage, not a schema.
  static let largestNumber = 1 << 20

  /// The numbering of `schema`, whose numbers are checked.
  ///
  /// - Throws: ``FormatError`` at `offset` (the header's schema) when a number is below 1,
  ///   above its entity's (or the schema's) last number, or given twice, or an absent value
  ///   does not decode.
  init(_ schema: Schema, offset: Int = BinaryFormat.headerPrefixSize) throws(FormatError) {
    func failure(_ message: String) -> FormatError {
      FormatError(offset: offset, message: "the schema in the header \(message)")
    }
    let lastEntity = schema.lastEntityNumber ?? schema.entities.count
    guard lastEntity >= schema.entities.count, lastEntity <= Self.largestNumber else {
      throw failure(
        "gives \(lastEntity) as its last entity number, for \(schema.entities.count) entities")
    }
    var positionByEntitySlot = [Int](repeating: -1, count: lastEntity)
    var entitySlotByPosition: [Int] = []
    var entities: [Entity] = []
    var isPositional = true
    for (position, entity) in schema.entities.enumerated() {
      let number = entity.number ?? position + 1
      guard number >= 1, number <= lastEntity, positionByEntitySlot[number - 1] < 0 else {
        throw failure(
          "gives entity \(entity.name) the number \(number), out of 1...\(lastEntity) or taken")
      }
      positionByEntitySlot[number - 1] = position
      entitySlotByPosition.append(number - 1)
      let numbered = try Self.numbering(of: entity, offset: offset, failure: failure)
      isPositional = isPositional && number == position + 1 && numbered.isPositional
      entities.append(numbered)
    }
    self.entities = entities
    self.positionByEntitySlot = positionByEntitySlot
    self.entitySlotByPosition = entitySlotByPosition
    self.isPositional = isPositional
    largestPropertyCount = entities.map(\.propertyCount).max() ?? 0
    largestAbsentCount =
      entities.map { $0.absentValues.count { $0 != nil } }.max() ?? 0
  }

  /// Room enough for the values of `objects` objects read from `bytes` bytes: every value a
  /// record holds takes a byte, and each object may add its absent values.
  func valueCapacity(objects: Int, bytes: Int) -> Int {
    min(bytes + objects * largestAbsentCount, objects * largestPropertyCount)
  }

  /// The numbering of one entity's properties.
  private static func numbering(
    of entity: EntityDescription, offset: Int, failure: (String) -> FormatError
  ) throws(FormatError) -> Entity {
    let count = entity.properties.count
    let last = entity.lastPropertyNumber ?? count
    guard last >= count, last <= largestNumber else {
      throw failure(
        "gives \(last) as the last property number of entity \(entity.name), which has "
          + "\(count) properties")
    }
    var positionByRunSlot = [Int](repeating: -1, count: last)
    var runSlotByPosition: [Int] = []
    runSlotByPosition.reserveCapacity(count)
    var absentValues: [PersistentValue?] = []
    var shortestRun = 0
    for (position, property) in entity.properties.enumerated() {
      let number = property.number ?? position + 1
      guard number >= 1, number <= last, positionByRunSlot[number - 1] < 0 else {
        throw failure(
          "gives property \(entity.name).\(property.name) the number \(number), out of "
            + "1...\(last) or taken")
      }
      positionByRunSlot[number - 1] = position
      runSlotByPosition.append(number - 1)
      if let bytes = property.absentValue {
        do {
          absentValues.append(try RecordReader.decodeValue(bytes, at: offset))
        } catch {
          throw failure(
            "gives property \(entity.name).\(property.name) an absent value that does not "
              + "decode: \(error.message)")
        }
      } else {
        absentValues.append(nil)
        shortestRun = max(shortestRun, number)
      }
    }
    // Numbers past the highest one a property has are only retired: no run slot.
    let runLength = (runSlotByPosition.max() ?? -1) + 1
    positionByRunSlot.removeLast(last - runLength)
    var orderedRun = 0
    var lastPosition = -1
    for position in positionByRunSlot {
      if position >= 0 {
        guard position > lastPosition else { break }
        lastPosition = position
      }
      orderedRun += 1
    }
    return Entity(
      propertyCount: count, positionByRunSlot: positionByRunSlot,
      runSlotByPosition: runSlotByPosition,
      isPositional: runLength == count && runSlotByPosition.elementsEqual(0..<count),
      absentValues: absentValues, shortestRun: shortestRun, longestRun: last,
      orderedRun: orderedRun == runLength ? last : orderedRun)
  }

  /// The position of the entity a record names by `slot` (its number − 1), or nil when no
  /// entity has that number.
  func entityPosition(slot: Int) -> Int? {
    guard positionByEntitySlot.indices.contains(slot) else { return nil }
    let position = positionByEntitySlot[slot]
    return position >= 0 ? position : nil
  }

  /// The slot (number − 1) a record names the entity at `position` by.
  @inline(__always)
  func entitySlot(_ position: Int) -> Int {
    isPositional ? position : entitySlotByPosition[position]
  }

  /// The slot (number − 1) a record names property `property` of entity `entity` by.
  @inline(__always)
  func propertySlot(_ property: Int, of entity: Int) -> Int {
    isPositional ? property : entities[entity].runSlotByPosition[property]
  }
}
