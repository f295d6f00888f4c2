import Foundation
import ObjectGraph
import ObjectGraphTesting
import Testing

/// The stores that ship with ObjectGraph, for parameterized conformance tests.
enum ShippedStore: String, CaseIterable, Sendable, CustomStringConvertible {
  case inMemory
  case binary

  var description: String { rawValue }

  /// A conformance checker over fresh stores of this kind, kept in `directory`.
  func conformance(in directory: TemporaryDirectory) -> StoreConformance {
    switch self {
    case .inMemory:
      StoreConformance(
        makeStore: { InMemoryStore() },
        reopen: { store in
          store.close()
          return store
        })
    case .binary:
      StoreConformance(
        makeStore: { BinaryStore(url: directory.file("\(UUID().uuidString).store")) },
        reopen: { store in
          store.close()
          guard let binary = store as? BinaryStore else { return store }
          return BinaryStore(url: binary.url)
        })
    }
  }
}

@Suite struct StoreConformanceTests {
  @Test(arguments: ShippedStore.allCases)
  func everyValueTypeRoundTrips(_ kind: ShippedStore) throws {
    let directory = try TemporaryDirectory()
    try kind.conformance(in: directory).checkRoundTripOfEveryValueType()
  }

  @Test(arguments: ShippedStore.allCases)
  func listEditsApplyInOrder(_ kind: ShippedStore) throws {
    let directory = try TemporaryDirectory()
    try kind.conformance(in: directory).checkListEditsApplyInOrder()
  }

  @Test(arguments: ShippedStore.allCases)
  func deletesRemoveObjects(_ kind: ShippedStore) throws {
    let directory = try TemporaryDirectory()
    try kind.conformance(in: directory).checkDeletesRemoveObjects()
  }

  @Test(arguments: ShippedStore.allCases)
  func idsAndNextObjectNumberSurviveReopen(_ kind: ShippedStore) throws {
    let directory = try TemporaryDirectory()
    try kind.conformance(in: directory).checkIDsAndNextObjectNumberSurviveReopen()
  }

  @Test(arguments: ShippedStore.allCases)
  func aFailedSaveLeavesTheStoreUnchanged(_ kind: ShippedStore) throws {
    let directory = try TemporaryDirectory()
    try kind.conformance(in: directory).checkFailedSaveLeavesStoreUnchanged()
  }

  @Test(arguments: ShippedStore.allCases)
  func aClosedStoreThrowsStoreClosed(_ kind: ShippedStore) throws {
    let directory = try TemporaryDirectory()
    try kind.conformance(in: directory).checkClosedStoreThrowsStoreClosed()
  }

  @Test(arguments: ShippedStore.allCases)
  func openingAnOpenStoreThrowsStoreInUse(_ kind: ShippedStore) throws {
    let directory = try TemporaryDirectory()
    try kind.conformance(in: directory).checkOpeningTwiceThrowsStoreInUse()
  }

  @Test(arguments: ShippedStore.allCases)
  func anotherSchemaIsRefused(_ kind: ShippedStore) throws {
    let directory = try TemporaryDirectory()
    try kind.conformance(in: directory).checkOtherSchemaIsRefused()
  }
}

/// The conformance checks as a store's author runs them: one call from their own tests.
@Suite struct StoreConformanceUsageTests {
  @Test func theInMemoryStorePassesEveryCheckInOneCall() throws {
    try StoreConformance(
      makeStore: { InMemoryStore() },
      reopen: { store in
        store.close()
        return store
      }
    ).checkAll()
  }
}
