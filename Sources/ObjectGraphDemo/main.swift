import Foundation
import ObjectGraph

// The README's demo: a box tree in a durable store file, reordered, observed and reopened.
//
//   swift run objectgraph-demo [STORE]      (default: demo.ogstore in the current directory)

final class Box: ManagedObject {
  @Attribute(.unique) var id = UUID()
  @Attribute var title = ""
  @Attribute var detail = ""
  @Attribute var created = Date()
  @Relationship(inverse: \Box.children) var parent: Box?
  @Relationship(deleteRule: .cascade) var children: [Box]

  convenience init(title: String, parent: Box? = nil) {
    self.init()
    self.title = title
    self.parent = parent
  }
}

let path = CommandLine.arguments.dropFirst().first ?? "demo.ogstore"
let url = URL(fileURLWithPath: path)

/// Prints the tree under `box`, children in their stored order.
func printTree(_ box: Box, depth: Int = 0) {
  print(String(repeating: "  ", count: depth) + "- " + box.title)
  for child in box.children { printTree(child, depth: depth + 1) }
}

func roots(in context: ObjectContext) throws -> [Box] {
  try context.fetch(
    FetchDescriptor<Box>(
      predicate: #Predicate { $0.parent == nil }, sortBy: [SortDescriptor(\.created)]))
}

do {
  // A fresh demo each run.
  try? FileManager.default.removeItem(at: url)
  do {
    let container = try ObjectContainer(for: Box.self, storeURL: url)
    let context = container.mainContext

    let inbox = Box(title: "Inbox")
    context.insert(inbox)
    for title in ["Buy milk", "Call Ann", "Write report"] { _ = Box(title: title, parent: inbox) }
    let projects = Box(title: "Projects")
    context.insert(projects)
    let garden = Box(title: "Garden", parent: projects)
    for title in ["Plant tulips", "Fix the fence"] { _ = Box(title: title, parent: garden) }
    try context.save()

    // A view of the inbox's children, kept current by observation alone.
    var rows = inbox.children.map(\.title)
    let token = context.observe(inbox, relationship: \.children) { change in
      rows = change.apply(to: rows, takingInsertionsFrom: inbox.children.map(\.title))
      print(
        "inbox changed: moved \(change.moved.map { "\($0.from)→\($0.to)" }), "
          + "inserted \(Array(change.inserted)), removed \(Array(change.removed))")
    }
    inbox.children.move(fromOffsets: [2], toOffset: 0)  // drag "Write report" to the top
    inbox.children[1].parent = garden  // "Buy milk" moves to the garden
    try context.save()  // delivers the changes, then saves one move and one re-parenting
    print("inbox rows from observation: \(rows)")
    withExtendedLifetime(token) {}
    container.close()
  }

  // Reopen: the order is the order the user gave.
  let container = try ObjectContainer(for: Box.self, storeURL: url)
  let context = container.mainContext
  print("reopened \(path):")
  for root in try roots(in: context) { printTree(root) }
  print("\(try context.fetchCount(FetchDescriptor<Box>())) boxes")
} catch {
  print("objectgraph-demo: \(error)")
  exit(1)
}
