import Testing

@testable import ObjectGraph

@Suite struct ChangedPropertiesTests {
  @Test func holdsEachPropertyOnceInIncreasingOrder() {
    var changed = ChangedProperties()
    #expect(changed.isEmpty && Array(changed).isEmpty)
    for property in [5, 0, 63, 5, 64, 200, 1] { changed.insert(property) }
    #expect(!changed.isEmpty)
    #expect(Array(changed) == [0, 1, 5, 63, 64, 200])
    for property in [0, 1, 5, 63, 64, 200] { #expect(changed.contains(property)) }
    for property in [2, 62, 65, 199] { #expect(!changed.contains(property)) }
  }

  @Test func onlyAPropertyBeyondTheBitsMakesItNonEmpty() {
    var changed = ChangedProperties()
    changed.insert(70)
    #expect(!changed.isEmpty && Array(changed) == [70])
    #expect(changed != ChangedProperties())
  }
}
