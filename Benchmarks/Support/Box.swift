import Foundation
import ObjectGraph

/// The seed apps' box: a node of a Notion-like nested list, as `WORKLOAD.md` describes it.
///
/// Declared exactly as a user of ObjectGraph would, defaults included: `id` and `created`
/// default to `UUID()` and `Date()` for boxes the user makes; the benchmark overwrites both.
public final class Box: ManagedObject {
  @Attribute(.unique) public var id = UUID()
  @Attribute public var title = ""
  @Attribute public var detail = ""
  @Attribute public var created = Date()
  @Relationship(inverse: \Box.children) public var parent: Box?
  @Relationship(deleteRule: .cascade) public var children: [Box]

  /// Creates a box with all of its attributes, appended to `parent`'s children when given.
  public convenience init(id: UUID, title: String, detail: String, created: Date, parent: Box?) {
    self.init()
    self.id = id
    self.title = title
    self.detail = detail
    self.created = created
    self.parent = parent
  }
}
