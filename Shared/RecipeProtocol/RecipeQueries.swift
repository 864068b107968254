import Foundation
import RecipeModel

/// A recipe in a list: enough to show a row and fetch the rest.
public struct RecipeSummary: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    public var name: String
    public var recipeCategory: String?
    public var recipeCuisine: String?
    public var bookID: UUID?
    public var isFavorite: Bool
    public var rating: Int
    public var origin: RecipeOrigin
    /// Total time in minutes (as written, or prep + cook).
    public var totalMinutes: Int?
    public var photoCount: Int
    public var createdAt: Date
    public var updatedAt: Date
    public var version: Int

    public init(
        id: UUID, name: String, recipeCategory: String?, recipeCuisine: String?, bookID: UUID?, isFavorite: Bool,
        rating: Int, origin: RecipeOrigin, totalMinutes: Int?, photoCount: Int, createdAt: Date, updatedAt: Date, version: Int
    ) {
        self.id = id
        self.name = name
        self.recipeCategory = recipeCategory
        self.recipeCuisine = recipeCuisine
        self.bookID = bookID
        self.isFavorite = isFavorite
        self.rating = rating
        self.origin = origin
        self.totalMinutes = totalMinutes
        self.photoCount = photoCount
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.version = version
    }
}

/// How a recipe list is ordered.
public enum RecipeSort: String, Codable, Sendable, CaseIterable, WireChoice {
    case name, createdAt, updatedAt, rating, totalTime
}

/// Which recipes to list, in what order, one page at a time.
public struct RecipeListQuery: Codable, Sendable, Equatable {
    /// Exact cuisine, any case ("italian").
    public var cuisine: String?
    /// Exact category, any case ("dinner").
    public var category: String?
    public var bookID: UUID?
    /// `true`: favourites only; `false`: non-favourites only.
    public var favorite: Bool?
    public var origin: RecipeOrigin?
    /// Recipes whose id starts with these hex digits (any case).
    public var idPrefix: String?
    /// Recipes whose id ends with these hex digits (any case): the CLI's short id of a time-ordered id is its last 8
    /// (ids made within a minute of each other share their first 8).
    public var idSuffix: String?
    /// Recipes of exactly this name, any case of its letters A to Z ("caesar salad"): how a name a person typed is
    /// found, however many recipes share its words.
    public var name: String?
    public var sort: RecipeSort
    public var descending: Bool
    /// 1 to 200; 50 when left out.
    public var limit: Int
    /// The `nextCursor` of the previous page, to continue from there.
    public var cursor: String?

    public static let maxLimit = 200

    public init(
        cuisine: String? = nil, category: String? = nil, bookID: UUID? = nil, favorite: Bool? = nil,
        origin: RecipeOrigin? = nil, idPrefix: String? = nil, idSuffix: String? = nil, name: String? = nil, sort: RecipeSort = .name,
        descending: Bool = false, limit: Int = 50, cursor: String? = nil
    ) {
        self.cuisine = cuisine
        self.category = category
        self.bookID = bookID
        self.favorite = favorite
        self.origin = origin
        self.idPrefix = idPrefix
        self.idSuffix = idSuffix
        self.name = name
        self.sort = sort
        self.descending = descending
        self.limit = limit
        self.cursor = cursor
    }

    private enum CodingKeys: String, CodingKey {
        case cuisine, category, bookID, favorite, origin, idPrefix, idSuffix, name, sort, descending, limit, cursor
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            cuisine: try c.decodeIfPresent(String.self, forKey: .cuisine),
            category: try c.decodeIfPresent(String.self, forKey: .category),
            bookID: try c.decodeIfPresent(UUID.self, forKey: .bookID),
            favorite: try c.decodeIfPresent(Bool.self, forKey: .favorite),
            origin: try c.decodeIfPresent(RecipeOrigin.self, forKey: .origin),
            idPrefix: try c.decodeIfPresent(String.self, forKey: .idPrefix),
            idSuffix: try c.decodeIfPresent(String.self, forKey: .idSuffix),
            name: try c.decodeIfPresent(String.self, forKey: .name),
            sort: try c.decodeIfPresent(RecipeSort.self, forKey: .sort) ?? .name,
            descending: try c.decodeIfPresent(Bool.self, forKey: .descending) ?? false,
            limit: try c.decodeIfPresent(Int.self, forKey: .limit) ?? 50,
            cursor: try c.decodeIfPresent(String.self, forKey: .cursor))
    }
}

/// One page of a recipe list.
public struct RecipePage: Codable, Sendable, Equatable {
    public var recipes: [RecipeSummary]
    /// Pass as `cursor` to get the next page; `null` on the last page.
    public var nextCursor: String?

    public init(recipes: [RecipeSummary], nextCursor: String?) {
        self.recipes = recipes
        self.nextCursor = nextCursor
    }
}

/// A search result, best first.
public struct SearchHit: Codable, Sendable, Equatable {
    public var recipe: RecipeSummary
    /// Higher is a better match.
    public var score: Double

    public init(recipe: RecipeSummary, score: Double) {
        self.recipe = recipe
        self.score = score
    }
}
