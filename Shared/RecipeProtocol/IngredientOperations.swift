import Foundation
import RecipeModel

/// Ingredient catalogue operations of `recipe-storage`.
public enum IngredientOps {
    /// `ingredient.list`
    public enum List: WireOperation {
        public static let name = "ingredient.list"
        public static let repliesInBulk = true // grows with the collection
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var category: IngredientCategory?
            public init(category: IngredientCategory? = nil) { self.category = category }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var ingredients: [CatalogueEntry]
            public init(ingredients: [CatalogueEntry]) { self.ingredients = ingredients }
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
