/// The numbers a store file names entities and properties by (see ``EntityDescription/number``
/// and ``PropertyDescription/number``): given when first stored, kept through every
/// migration, never given again once retired.
extension Schema {
  /// Takes the numbers a store file gave the entities and properties of `stored`, a schema
  /// with as many entities, each with as many properties (one this schema
  /// ``matches(stored:)``).
  mutating func adoptNumbers(of stored: Schema) {
    lastEntityNumber = stored.lastEntityNumber
    for (entity, storedEntity) in zip(entities.indices, stored.entities) {
      entities[entity].number = storedEntity.number
      entities[entity].lastPropertyNumber = storedEntity.lastPropertyNumber
      for (property, storedProperty) in zip(
        entities[entity].properties.indices, storedEntity.properties)
      {
        entities[entity].properties[property].number = storedProperty.number
        entities[entity].properties[property].absentValue = storedProperty.absentValue
      }
    }
  }

  /// Whether an entity or property has a number (else all are numbered by position).
  var hasNumbers: Bool {
    lastEntityNumber != nil
      || entities.contains { entity in
        entity.number != nil || entity.lastPropertyNumber != nil
          || entity.properties.contains { $0.number != nil || $0.absentValue != nil }
      }
  }

  /// Forgets every number: the entities and properties are numbered by position.
  mutating func removeNumbers() {
    lastEntityNumber = nil
    for entity in entities.indices {
      entities[entity].number = nil
      entities[entity].lastPropertyNumber = nil
      for property in entities[entity].properties.indices {
        entities[entity].properties[property].number = nil
        entities[entity].properties[property].absentValue = nil
      }
    }
  }

  /// Where an entity of a migrated schema came from: the stored entity whose objects became
  /// its objects, and for each of its properties the stored property whose values it took.
  struct NumberOrigin {
    /// The stored entity's position.
    var entity: Int
    /// By property position, the stored property's position, or nil for a new property.
    var properties: [Int?]
    /// By property position, the value every object of a new property starts with, if the
    /// migration gives one.
    var values: [PersistentValue?]

    init(entity: Int, properties: [Int?], values: [PersistentValue?]? = nil) {
      self.entity = entity
      self.properties = properties
      self.values = values ?? properties.map { _ in nil }
    }
  }

  /// This schema (a migration's target) numbered after `stored`: an entity or property
  /// that came from a stored one (`origins`, by entity position, nil for a new entity)
  /// keeps its number, and a new one takes the next number never given; numbers that are
  /// positions are left out (nil). With `keepingRecords` (the stored records stay in the
  /// file), each new property records the value of its origin as its
  /// ``PropertyDescription/absentValue``, and each kept one keeps its stored one.
  ///
  /// - Complexity: O(*p*) in the number of properties of both schemas.
  func numbered(
    after stored: Schema, origins: [NumberOrigin?], keepingRecords: Bool = false
  ) -> Schema {
    var result = self
    result.removeNumbers()
    var lastEntity = stored.lastEntityNumber ?? stored.entities.count
    for (position, origin) in origins.enumerated() {
      var entity = result.entities[position]
      var lastProperty = 0
      if let origin {
        let storedEntity = stored.entities[origin.entity]
        entity.number = storedEntity.number ?? origin.entity + 1
        lastProperty = storedEntity.lastPropertyNumber ?? storedEntity.properties.count
        var taken = Set<Int>()
        for (property, source) in origin.properties.enumerated() {
          guard let source else { continue }
          // A stored property that feeds two new ones gives its number to the first.
          let number = storedEntity.properties[source].number ?? source + 1
          guard taken.insert(number).inserted else { continue }
          entity.properties[property].number = number
          if keepingRecords {
            entity.properties[property].absentValue = storedEntity.properties[source].absentValue
          }
        }
      } else {
        lastEntity += 1
        entity.number = lastEntity
      }
      for property in entity.properties.indices where entity.properties[property].number == nil {
        lastProperty += 1
        entity.properties[property].number = lastProperty
        if keepingRecords, let value = origin?.values[property] {
          entity.properties[property].absentValue = RecordWriter.encodedValue(value)
        }
      }
      entity.lastPropertyNumber = lastProperty
      result.entities[position] = entity
    }
    result.lastEntityNumber = lastEntity
    result.normalizeNumbers()
    return result
  }

  /// Leaves out numbers that are positions: an entity's properties when each one's number
  /// is its position + 1 and none was retired, the entities likewise.
  private mutating func normalizeNumbers() {
    var entitiesPositional = lastEntityNumber == entities.count
    for index in entities.indices {
      let properties = entities[index].properties
      if entities[index].lastPropertyNumber == properties.count,
        properties.indices.allSatisfy({ properties[$0].number == $0 + 1 })
      {
        entities[index].lastPropertyNumber = nil
        for property in properties.indices { entities[index].properties[property].number = nil }
      }
      entitiesPositional = entitiesPositional && entities[index].number == index + 1
    }
    if entitiesPositional {
      lastEntityNumber = nil
      for index in entities.indices { entities[index].number = nil }
    }
  }
}
