/// The Observation keys of model objects, made once for every model of the process.
///
/// An object tells Observation about a read or a change of its property `p` with a key of
/// its seat `s` in the registrar it shares (see ``ObservationBox``):
/// `\ManagedObject.[observationKey: s * 256 + p]`. Key paths are equal by their components,
/// so the key of a seat and property is the same for every model; making one costs the
/// runtime about 9,000 instructions, and a model needs one per seat and property (384 for
/// a model of 6 properties). Each model takes the keys made for models before it and makes
/// only those no model needed yet: a container of 7 models of up to 6 properties makes 384
/// keys instead of 1,664 (`microbench`'s models: 33.9 → 22.2 million instructions to describe
/// them, callgrind).
///
/// - Complexity: O(*s* × *p*) for a model of *p* properties in *s* seats, besides the keys
///   it is the first to need.
enum ObservationKeys {
  /// The keys made so far, by number (`seat * seatWidth + property`); nil for a number no
  /// model has needed.
  private static let made = LockedBox<[KeyPath<ManagedObject, Int>?]>([])

  /// The keys of `propertyCount` properties in each of `seats` seats: seat after seat,
  /// property after property, as ``EntityModel/observationKeys`` holds them.
  static func keys(seats: Int, propertyCount: Int) -> [KeyPath<ManagedObject, Int>] {
    made.withLock { made in
      var keys: [KeyPath<ManagedObject, Int>] = []
      keys.reserveCapacity(seats * propertyCount)
      for seat in 0..<seats {
        for property in 0..<propertyCount {
          keys.append(key(seat * ObservationBox.seatWidth + property, in: &made))
        }
      }
      return keys
    }
  }

  /// The key numbered `number`, made if no model made it before.
  private static func key(_ number: Int, in made: inout [KeyPath<ManagedObject, Int>?])
    -> KeyPath<ManagedObject, Int>
  {
    if number >= made.count {
      made.append(contentsOf: repeatElement(nil, count: number + 1 - made.count))
    }
    if let key = made[number] { return key }
    let key = \ManagedObject.[observationKey: number]
    made[number] = key
    return key
  }
}
