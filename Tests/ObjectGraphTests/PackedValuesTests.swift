import Foundation
import Testing

@testable import ObjectGraph

/// The packed values buffer behaves as an array of values (copied on write, grown as it
/// fills), and hands its memory over whole to a loader.
@Suite struct PackedValuesTests {
  private let sample: [PersistentValue] = [
    .string("Box 1"), .int(7), .null, .references([ObjectID(rawValue: 3)]),
    .date(Date(timeIntervalSince1970: 9)),
  ]

  @Test func appendsReadsAndReplacesLikeAnArray() {
    var values = PackedValues()
    var reference: [PersistentValue] = []
    for round in 0..<40 {
      values.append(sample[round % sample.count])
      reference.append(sample[round % sample.count])
      if round % 7 == 0 {
        values.append(contentsOf: sample)
        reference.append(contentsOf: sample)
      }
    }
    #expect(values.count == reference.count)
    #expect(values[0..<values.count] == reference)
    values.replaceSubrange(2..<5, with: [.bool(true), .int(1), .string("x")])
    reference.replaceSubrange(2..<5, with: [.bool(true), .int(1), .string("x")])
    values[10] = .string("changed")
    reference[10] = .string("changed")
    #expect(values[0..<values.count] == reference)
    #expect(values[10] == .string("changed"))
    // A removed object's values become `.null`s in place, a copy keeping its own.
    let copy = values
    values.nullify(3..<7)
    for index in 3..<7 { reference[index] = .null }
    #expect(values[0..<values.count] == reference)
    #expect(copy[3..<7] != Array(reference[3..<7]))
  }

  @Test func aCopyIsNotChangedByTheOriginal() {
    var values = PackedValues()
    values.append(contentsOf: sample)
    let copy = values
    values[0] = .string("changed")
    values.append(.int(99))
    values.reserveCapacity(1_000)
    #expect(copy[0..<copy.count] == sample)
    #expect(values[0] == .string("changed"))
    #expect(values.count == sample.count + 1)
  }

  @Test func fillingWritesStraightIntoTheMemory() {
    let values = PackedValues(uninitializedCapacity: 8) { base in
      for (offset, value) in sample.enumerated() { (base + offset).initialize(to: value) }
      return sample.count
    }
    #expect(values[0..<values.count] == sample)
  }

  @Test func takingTheMemoryLeavesNoValuesAndTheCopiesTheirOwn() {
    var values = PackedValues()
    values.append(contentsOf: sample)
    let copy = values
    let (base, count) = values.takeMemory()
    #expect(count == sample.count)
    #expect(Array(UnsafeBufferPointer(start: base, count: count)) == sample)
    #expect(values.isEmpty)
    // The copy shared the buffer, so the taker got its own memory and the copy kept it.
    #expect(copy[0..<copy.count] == sample)
    base.deinitialize(count: count)
    base.deallocate()
  }

  @Test func emptyValuesShareTheirBufferButNoChange() {
    // Every empty value (a save that inserts nothing reads one) has the same buffer; each
    // way of changing one makes it its own first.
    var appended = PackedValues()
    var appendedMany = PackedValues()
    var reserved = PackedValues()
    var taken = PackedValues()
    let untouched = PackedValues()
    appended.append(.int(1))
    appendedMany.append(contentsOf: sample)
    reserved.reserveCapacity(64)
    reserved.append(.string("kept"))
    let (base, count) = taken.takeMemory()
    #expect(count == 0)
    base.deallocate()
    taken.append(.bool(true))
    #expect(appended[0..<appended.count] == [.int(1)])
    #expect(appendedMany[0..<appendedMany.count] == sample)
    #expect(reserved[0..<reserved.count] == [.string("kept")])
    #expect(taken[0..<taken.count] == [.bool(true)])
    #expect(untouched.isEmpty && PackedValues().isEmpty)
    #expect(PackedObjects().isEmpty)
  }

  @Test func aSlotFitsInTheMemoryOfAValue() {
    // Loading turns each object's run of decoded values into its slots in place.
    #expect(SlotSlab.fitsInPlace)
  }
}
