import Testing

@testable import ObjectGraph

/// An object's changes live in a `PropertyMap`: it must behave as a dictionary that keeps
/// insertion order, whichever pair (the inline first or another) is set or removed.
@Suite struct PropertyMapTests {
  @Test func randomSetsAndRemovalsMatchAnOrderedModel() {
    var random = SplitMix64(seed: TestScale.seed(11))
    for _ in 0..<200 {
      var map = PropertyMap<String>()
      var model: [(key: Int, value: String)] = []
      for step in 0..<40 {
        let property = Int.random(in: 0..<6, using: &random)
        if Int.random(in: 0..<3, using: &random) == 0 {
          map[property] = nil
          model.removeAll { $0.key == property }
        } else {
          let value = "v\(step)"
          map[property] = value
          if let position = model.firstIndex(where: { $0.key == property }) {
            model[position].value = value
          } else {
            model.append((property, value))
          }
        }
        #expect(map.count == model.count && map.isEmpty == model.isEmpty)
        #expect(map.keys == model.map(\.key))
        #expect(map.map(\.value) == model.map(\.value))
        for property in 0..<6 {
          #expect(map[property] == model.first { $0.key == property }?.value)
        }
      }
    }
  }
}
