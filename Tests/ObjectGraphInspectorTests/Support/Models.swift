import Foundation
import ObjectGraph

/// A box tree, as in the README: boxes nested to any depth, children in the user's order.
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

/// An item with ordered notes and attributes of several types.
final class Item: ManagedObject {
  @Attribute var name = ""
  @Attribute var count = 0
  @Attribute var rating = 0.0
  @Attribute var flagged = false
  @Attribute var link: URL? = nil
  @Attribute var payload = Data()
  @Relationship(deleteRule: .cascade, inverse: \Note.item) var notes: [Note]

  convenience init(name: String) {
    self.init()
    self.name = name
  }
}

/// A note of an item.
final class Note: ManagedObject {
  @Attribute var text = ""
  @Relationship var item: Item?

  convenience init(_ text: String) {
    self.init()
    self.text = text
  }
}
