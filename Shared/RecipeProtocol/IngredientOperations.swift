import Foundation
import RecipeModel

/// Ingredient catalogue operations of `recipe-storage`.
public enum IngredientOps {
    /// `ingredient.list`
    public enum List: WireOperation {
        public static let name = "ingredient.list"
        public static let repliesInBulk = true // grows with the collection
        public static let isWrite = false
        /// The most entries one page holds, an entry having up to 50 aliases of 100 characters (a request without
        /// a limit is answered with every one, in one reply).
        public static let maxLimit = 500
        public struct Request: Codable, Sendable, Equatable {
            public var category: IngredientCategory?
            /// At most this many (1 to `maxLimit`); every one when left out.
            public var limit: Int?
            /// The `next` of the page before.
            public var after: String?
            public init(category: IngredientCategory? = nil, limit: Int? = nil, after: String? = nil) {
                self.category = category
                self.limit = limit
                self.after = after
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var ingredients: [CatalogueEntry]
            /// Where the next page starts, when more follow; `nil` on the last page.
            public var next: String?
            public init(ingredients: [CatalogueEntry], next: String? = nil) {
                self.ingredients = ingredients
                self.next = next
            }
        }
    }

    /// `ingredient.find`: by name or alias.
    public enum Find: WireOperation {
        public static let name = "ingredient.find"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var name: String
            public init(name: String) { self.name = name }
        }
        public typealias Response = CatalogueEntry
    }

    /// `ingredient.upsert`: adds an entry or updates the one with the same name.
    public enum Upsert: WireOperation {
        public static let name = "ingredient.upsert"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var id: UUID?
            public var name: String
            public var category: IngredientCategory?
            public var aliases: [String]?
            public init(id: UUID? = nil, name: String, category: IngredientCategory? = nil, aliases: [String]? = nil) {
                self.id = id
                self.name = name
                self.category = category
                self.aliases = aliases
            }
        }
        public typealias Response = CatalogueEntry
    }
}
