import Foundation

/// A cookbook a recipe can point to.
public struct Book: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    public var title: String
    public var author: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: UUID = .timeOrdered(), title: String, author: String? = nil, createdAt: Date = Date(), updatedAt: Date = Date()) {
        self.id = id
        self.title = title
        self.author = author
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A food in the ingredient catalogue: its normalized name, kind and other names.
public struct CatalogueEntry: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    /// Normalized: lowercase, singular ("spring onion").
    public var name: String
    public var category: IngredientCategory?
    /// Other names, normalized the same way ("scallion", "green onion").
    public var aliases: [String]
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: UUID = .timeOrdered(), name: String, category: IngredientCategory? = nil, aliases: [String] = [],
        createdAt: Date = Date(), updatedAt: Date = Date()
    ) {
        self.id = id
        self.name = IngredientParser.normalizeFood(name)
        self.category = category
        self.aliases = aliases.map(IngredientParser.normalizeFood)
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A time a recipe was cooked, with a snapshot of its name then.
public struct CookLogEntry: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    /// The recipe, while it exists; `nil` after it was deleted.
    public var recipeID: UUID?
    /// The recipe's name when it was cooked.
    public var recipeName: String
    public var cookedAt: Date
    /// 1 to 5, if given.
    public var rating: Int?
    public var note: String?
    public var servings: Double?
    public var createdAt: Date

    public init(
        id: UUID = .timeOrdered(), recipeID: UUID?, recipeName: String, cookedAt: Date = Date(), rating: Int? = nil,
        note: String? = nil, servings: Double? = nil, createdAt: Date = Date()
    ) {
        self.id = id
        self.recipeID = recipeID
        self.recipeName = recipeName
        self.cookedAt = cookedAt
        self.rating = rating
        self.note = note
        self.servings = servings
        self.createdAt = createdAt
    }
}
