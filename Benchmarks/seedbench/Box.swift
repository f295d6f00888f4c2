import Foundation
import ObjectGraph

/// The seed apps' box: a node of a Notion-like nested list, as `WORKLOAD.md` describes it.
///
/// Declared exactly as a user of ObjectGraph would, defaults included: `id` and `created`
/// default to `UUID()` and `Date()` for boxes the user makes; the benchmark overwrites both.
final class Box: ManagedObject {
  @Attribute(.unique) var id = UUID()
  @Attribute var title = ""
  @Attribute var detail = ""
  @Attribute var created = Date()
  @Relationship(inverse: \Box.children) var parent: Box?
  @Relationship(deleteRule: .cascade) var children: [Box]

  /// Creates a box with all of its attributes, appended to `parent`'s children when given.
  convenience init(id: UUID, title: String, detail: String, created: Date, parent: Box?) {
    self.init()
    self.id = id
    self.title = title
    self.detail = detail
    self.created = created
    self.parent = parent
  }
}
