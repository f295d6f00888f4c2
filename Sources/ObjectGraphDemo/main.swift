import Foundation
import ObjectGraph

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

let container = try ObjectContainer(for: Box.self, store: InMemoryStore())
let context = container.mainContext

let inbox = Box(title: "Inbox")
context.insert(inbox)
let task = Box(title: "Task", parent: inbox)
let other = Box(title: "Other", parent: inbox)
print(inbox.children.map(\.title))
inbox.children.move(fromOffsets: [0], toOffset: 2)
print(inbox.children.map(\.title))
try context.save()

let roots = try context.fetch(
  FetchDescriptor<Box>(
    predicate: #Predicate { $0.parent == nil },
    sortBy: [SortDescriptor(\.created)]))
print(roots.map(\.title), task.parent?.title ?? "-", other.objectID!)
