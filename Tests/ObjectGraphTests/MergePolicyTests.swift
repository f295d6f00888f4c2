import Foundation
import Testing

@testable import ObjectGraph

/// The conflict matrix: each merge policy against a save of another context that changed an
/// attribute, a to-one, a to-many or an object this context changed or deleted. The first
/// context saves first; the second, under the policy, merges and saves; both contexts and a
/// reopened store then hold what the policy says.
@MainActor
@Suite struct MergePolicyTests {
  nonisolated static let resolving: [MergePolicy] = [
    .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .rollback, .overwrite,
  ]

  /// The first context changes a box's title and detail; the second its title and created
  /// date.
  @Test(arguments: StoreKind.allCases, resolving)
  func anAttributeChangedOnBothSidesFollowsThePolicy(_ kind: StoreKind, _ policy: MergePolicy)
    throws
  {
    let (stack, first, second) = try twoContexts(kind, policy)
    let (box, theirs) = try savedBox(in: first, seenBy: second)
    let start = theirs.created
    let later = start.addingTimeInterval(60)
    box.title = "first's"
    box.detail = "first's detail"
    try first.save()
    theirs.title = "second's"
    theirs.created = later

    try second.save()
    let (title, detail, created): (String, String, Date) =
      switch policy {
      case .mergeByPropertyStoreTrump: ("first's", "first's detail", later)
      case .mergeByPropertyObjectTrump: ("second's", "first's detail", later)
      case .rollback: ("first's", "first's detail", start)
      case .overwrite: ("second's", "start detail", later)
      case .error: ("", "", start)
      }
    #expect(!second.hasChanges)
    #expect(theirs.title == title && theirs.detail == detail && theirs.created == created)
    first.processPendingChanges()
    #expect(box.title == title && box.detail == detail && box.created == created)
    let stored = try #require(try stack.reopened().context.fetch(FetchDescriptor<Box>()).first)
    #expect(stored.title == title && stored.detail == detail && stored.created == created)
  }

  /// Before its save, the second context holds the resolved values, and its committed
  /// values are the stored ones: rolling back takes what the first context saved.
  @Test(arguments: StoreKind.allCases)
  func aResolvedChangeIsBasedOnTheStoredValue(_ kind: StoreKind) throws {
    let (_, first, second) = try twoContexts(kind, .mergeByPropertyObjectTrump)
    let (box, theirs) = try savedBox(in: first, seenBy: second)
    box.title = "first's"
    try first.save()
    theirs.title = "second's"
    second.processPendingChanges()
    #expect(theirs.title == "second's" && second.hasChanges)
    #expect(second.committedValues(of: theirs)["title"] == .string("first's"))
    second.rollback()
    #expect(theirs.title == "first's" && !second.hasChanges)
  }

  @Test(arguments: StoreKind.allCases, resolving)
  func anObjectDeletedOnOneSideStaysDeleted(_ kind: StoreKind, _ policy: MergePolicy) throws {
    // The other context deleted what this one changed.
    do {
      let (stack, first, second) = try twoContexts(kind, policy)
      let (box, theirs) = try savedBox(in: first, seenBy: second)
      first.delete(box)
      try first.save()
      theirs.title = "changed"
      try second.save()
      #expect(theirs.context == nil && !second.hasChanges)
      #expect(try stack.reopened().context.fetchCount(FetchDescriptor<Box>()) == 0)
    }
    // This context deleted what the other one changed.
    do {
      let (stack, first, second) = try twoContexts(kind, policy)
      let (box, theirs) = try savedBox(in: first, seenBy: second)
      box.title = "changed"
      try first.save()
      second.delete(theirs)
      try second.save()
      first.processPendingChanges()
      #expect(box.context == nil)
      #expect(try stack.reopened().context.fetchCount(FetchDescriptor<Box>()) == 0)
    }
  }

  /// This context deleted an object (one of whose attributes it changed first) that the
  /// other renamed and detailed: the delete wins, and the saved values are merged into the
  /// deleted object, so that a rollback of the delete brings it back as it is stored.
  @Test(arguments: StoreKind.allCases, resolving)
  func aRolledBackDeleteBringsBackTheValuesSavedMeanwhile(
    _ kind: StoreKind, _ policy: MergePolicy
  ) throws {
    let (_, first, second) = try twoContexts(kind, policy)
    let (box, theirs) = try savedBox(in: first, seenBy: second)
    theirs.title = "ours, unsaved"
    second.delete(theirs)
    box.title = "first's"
    box.detail = "first's detail"
    try first.save()
    second.processPendingChanges()
    #expect(theirs.isDeleted && second.hasChanges)
    second.rollback()
    #expect(!theirs.isDeleted && !second.hasChanges)
    #expect(theirs.title == "first's" && theirs.detail == "first's detail")
  }

  /// A child deleted on both sides: both removed it from its parent's children, alike.
  @Test(arguments: StoreKind.allCases, resolving)
  func anObjectDeletedOnBothSidesIsDeletedOnce(_ kind: StoreKind, _ policy: MergePolicy) throws {
    let (stack, first, second) = try twoContexts(kind, policy)
    let (parent, theirParent) = try savedBox(in: first, seenBy: second)
    let child = Box(title: "child", parent: parent)
    _ = Box(title: "sibling", parent: parent)
    try first.save()
    second.processPendingChanges()
    let theirChild = try #require(theirParent.children.first)
    first.delete(child)
    try first.save()
    second.delete(theirChild)
    try second.save()
    #expect(theirParent.children.map(\.title) == ["sibling"])
    #expect(!second.hasChanges)
    let reopened = try stack.reopened().context
    #expect(
      try reopened.fetch(FetchDescriptor<Box>()).map(\.title).sorted() == ["sibling", "start"])
  }

  /// A list edited on both sides: the same move is kept once; different moves merge, the
  /// later save's move winning for an element both moved under the object-trump policies and
  /// the stored one under the store-trump policies; both sides' new children are kept,
  /// except under the rollback policy, which drops a list change that added members and so
  /// cannot resolve it.
  @Test(arguments: StoreKind.allCases, resolving)
  func aListChangedOnBothSides(_ kind: StoreKind, _ policy: MergePolicy) throws {
    let (stack, first, second) = try twoContexts(kind, policy)
    let (parent, theirParent) = try savedBox(in: first, seenBy: second)
    for title in ["a", "b", "c"] { _ = Box(title: title, parent: parent) }
    try first.save()
    second.processPendingChanges()
    let titles = { theirParent.children.map(\.title) }
    // An observer of the list, told of every merge: what it heard stays the list.
    var heard = titles()
    let token = second.observe(theirParent, relationship: \.children) { change in
      heard = change.apply(to: heard, takingInsertionsFrom: titles())
    }

    parent.children.move(fromOffsets: [0], toOffset: 3)
    try first.save()
    theirParent.children.move(fromOffsets: [0], toOffset: 3)
    try second.save()
    #expect(titles() == ["b", "c", "a"] && !second.hasChanges)

    parent.children.move(fromOffsets: [0], toOffset: 3)  // c, a, b: b moved
    try first.save()
    theirParent.children.swapAt(0, 1)  // c, b, a: b moved too
    try second.save()
    let objectWins = policy == .mergeByPropertyObjectTrump || policy == .overwrite
    #expect(titles() == (objectWins ? ["c", "b", "a"] : ["c", "a", "b"]))
    first.processPendingChanges()
    #expect(parent.children.map(\.title) == titles())
    second.processPendingChanges()
    #expect(heard == titles())

    let before = titles()
    parent.children.insert(Box(title: "x"), at: 0)
    try first.save()
    theirParent.children.append(Box(title: "y"))
    if policy == .rollback {
      let error = #expect(throws: ObjectGraphError.self) { try second.save() }
      #expect(error?.code == .conflict && error?.property == "children")
      #expect(error?.message.contains("does not resolve this") == true)
      second.rollback()
      #expect(titles() == ["x"] + before)
    } else {
      try second.save()
      #expect(titles() == ["x"] + before + ["y"])
      #expect(theirParent.children.allSatisfy { $0.parent === theirParent })
    }
    let reopened = try stack.reopened().context
    let stored = try reopened.fetch(
      FetchDescriptor<Box>(predicate: #Predicate { $0.title == "start" }))
    #expect(stored.first?.children.map(\.title) == titles())
    #expect(!second.hasChanges)
    second.processPendingChanges()
    #expect(heard == titles())
    withExtendedLifetime(token) {}
  }

  /// A child given another parent on each side keeps ours under the object-trump policies
  /// and the stored one under the store-trump ones; the losing parent lets go of it, so
  /// every inverse stays in step. A delete against a relationship change conflicts under
  /// every policy.
  @Test(arguments: StoreKind.allCases, resolving)
  func aToOneSetDifferentlyOnBothSides(_ kind: StoreKind, _ policy: MergePolicy) throws {
    let (stack, first, second) = try twoContexts(kind, policy)
    let (root, theirRoot) = try savedBox(in: first, seenBy: second)
    let child = Box(title: "child", parent: root)
    let left = Box(title: "left", parent: root)
    _ = Box(title: "right", parent: root)
    try first.save()
    second.processPendingChanges()
    let theirChild = theirRoot.children[0]
    let theirLeft = theirRoot.children[1]
    let theirRight = theirRoot.children[2]

    child.parent = left
    child.detail = "first's detail"
    try first.save()
    theirChild.parent = theirRight
    theirChild.title = "renamed here"
    try second.save()
    let objectWins = policy == .mergeByPropertyObjectTrump || policy == .overwrite
    let winner = objectWins ? theirRight : theirLeft
    #expect(theirChild.parent === winner && !second.hasChanges)
    // The object policies act on the whole object in conflict.
    #expect(theirChild.title == (policy == .rollback ? "child" : "renamed here"))
    #expect(theirChild.detail == (policy == .overwrite ? "" : "first's detail"))
    #expect(theirLeft.children.map(\.objectID) == (objectWins ? [] : [theirChild.objectID]))
    #expect(theirRight.children.map(\.objectID) == (objectWins ? [theirChild.objectID] : []))
    #expect(theirRoot.children.map(\.title) == ["left", "right"])
    first.processPendingChanges()
    #expect(child.parent?.title == winner.title)
    #expect(child.title == theirChild.title && child.detail == theirChild.detail)
    let fresh = try ObjectContext(stack.container)
    let stored = try #require(fresh.registeredModel(for: theirChild.persistentModelID!) as Box?)
    #expect(stored.parent?.title == winner.title && stored.title == theirChild.title)
    #expect(stored.parent?.children.map(\.objectID) == [stored.objectID])

    // A delete against a relationship change: the child's parent (and so the child).
    first.delete(try #require(first.registeredModel(for: winner.persistentModelID!) as Box?))
    try first.save()
    theirChild.parent = theirRoot
    let error = #expect(throws: ObjectGraphError.self) { try second.save() }
    #expect(error?.code == .conflict)
    second.rollback()

    #expect(theirChild.context == nil)
    let reopened = try stack.reopened().context
    let titles = try reopened.fetch(FetchDescriptor<Box>()).map(\.title).sorted()
    #expect(titles == [objectWins ? "left" : "right", "start"])
  }

  /// A one-to-one set differently on both sides settles like a to-one: the losing object's
  /// side is cleared. A many-to-many list edited on both sides stays a conflict.
  @Test(arguments: StoreKind.allCases, resolving)
  func oneToOneAndManyToMany(_ kind: StoreKind, _ policy: MergePolicy) throws {
    let stack = try Stack(kind)
    let (first, second) = (stack.context, try stack.container.newContext())
    second.mergePolicy = policy
    let passport = Passport()
    let (ann, bob) = (Person(name: "Ann"), Person(name: "Bob"))
    let club = Club()
    for object in [passport, ann, bob, club] as [ManagedObject] { first.insert(object) }
    try first.save()
    let theirPassport = try #require(second.object(with: passport.objectID!) as? Passport)
    let theirAnn = try #require(second.object(with: ann.objectID!) as? Person)
    let theirBob = try #require(second.object(with: bob.objectID!) as? Person)
    let theirClub = try #require(second.object(with: club.objectID!) as? Club)

    passport.owner = ann
    try first.save()
    theirPassport.owner = theirBob
    try second.save()
    let objectWins = policy == .mergeByPropertyObjectTrump || policy == .overwrite
    let owner = objectWins ? theirBob : theirAnn
    #expect(theirPassport.owner === owner && owner.passport === theirPassport)
    #expect((objectWins ? theirAnn : theirBob).passport == nil)
    first.processPendingChanges()
    #expect(passport.owner?.name == owner.name && (objectWins ? ann : bob).passport == nil)
    let fresh = try ObjectContext(stack.container)
    let stored = try #require(fresh.object(with: passport.objectID!) as? Passport)
    #expect(stored.owner?.name == owner.name && stored.owner?.passport === stored)

    club.members.append(ann)
    try first.save()
    theirClub.members.append(theirBob)
    let error = #expect(throws: ObjectGraphError.self) { try second.save() }
    #expect(error?.code == .conflict)
  }

  /// Under the error policy every case above is a conflict that writes nothing.
  @Test(arguments: StoreKind.allCases)
  func theErrorPolicyResolvesNothing(_ kind: StoreKind) throws {
    let (_, first, second) = try twoContexts(kind, .error)
    let (box, theirs) = try savedBox(in: first, seenBy: second)
    box.title = "first's"
    try first.save()
    theirs.title = "second's"
    let error = #expect(throws: ObjectGraphError.self) { try second.save() }
    #expect(error?.code == .conflict)
    #expect(error?.message.contains("merge policy") == false)
  }

  // MARK: Helpers

  /// A stack and two contexts of its container, the second under `policy`.
  private func twoContexts(_ kind: StoreKind, _ policy: MergePolicy) throws
    -> (Stack, ObjectContext, ObjectContext)
  {
    let stack = try Stack(kind)
    let second = try stack.container.newContext()
    second.mergePolicy = policy
    return (stack, stack.context, second)
  }

  /// A box titled "start" saved in `first`, and `second`'s instance of it.
  private func savedBox(in first: ObjectContext, seenBy second: ObjectContext) throws -> (
    Box, Box
  ) {
    let box = Box(title: "start")
    box.detail = "start detail"
    first.insert(box)
    try first.save()
    return (box, try #require(second.object(with: box.objectID!) as? Box))
  }
}
