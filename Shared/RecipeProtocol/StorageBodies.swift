import Foundation
import RecipeModel

/// A book with how many recipes point to it.
public struct BookSummary: Codable, Sendable, Equatable {
    public var book: Book
    public var recipeCount: Int
    public init(book: Book, recipeCount: Int) {
        self.book = book
        self.recipeCount = recipeCount
    }
}

/// A book with its recipes.
public struct BookDetail: Codable, Sendable, Equatable {
    public var book: Book
    /// Its recipes by page number, then name: all, or the page the request asked for.
    public var recipes: [RecipeSummary]
    /// How many recipes the book holds.
    public var recipeCount: Int
    /// Where the next page of its recipes starts (`after` of `book.get`), when more follow; `nil` on the last page.
    public var next: String?
    public init(book: Book, recipes: [RecipeSummary], recipeCount: Int? = nil, next: String? = nil) {
        self.book = book
        self.recipes = recipes
        self.recipeCount = recipeCount ?? recipes.count
        self.next = next
    }
}

/// A recipe the user can make with what they have, and what is missing.
public struct CanMakeResult: Codable, Sendable, Equatable {
    public var recipe: RecipeSummary
    /// The foods still needed (normalized names), in recipe order.
    public var missing: [String]
    /// How many of the recipe's foods the user has (staples count as had when ignored).
    public var matched: Int
    /// How many distinct foods the recipe needs.
    public var total: Int
    public init(recipe: RecipeSummary, missing: [String], matched: Int, total: Int) {
        self.recipe = recipe
        self.missing = missing
        self.matched = matched
        self.total = total
    }
}

/// A recipe with what is derived from it: cook history and, on request, scaled quantities.
public struct RecipeDetail: Codable, Sendable, Equatable {
    public var recipe: Recipe
    public var timesCooked: Int
    public var lastCookedAt: Date?
    /// The serving count the quantities were scaled to, when asked.
    public var scaledServings: Double?
    /// The ingredient lines scaled to `scaledServings` (never stored).
    public var scaledIngredients: [IngredientLine]?
    public init(recipe: Recipe, timesCooked: Int, lastCookedAt: Date?, scaledServings: Double? = nil, scaledIngredients: [IngredientLine]? = nil) {
        self.recipe = recipe
        self.timesCooked = timesCooked
        self.lastCookedAt = lastCookedAt
        self.scaledServings = scaledServings
        self.scaledIngredients = scaledIngredients
    }
}

/// What the samples load did.
public struct SampleLoadResult: Codable, Sendable, Equatable {
    /// `false` when the samples were already there (they are never loaded twice).
    public var loaded: Bool
    public var books: Int
    public var recipes: Int
    public var ingredients: Int
    public init(loaded: Bool, books: Int, recipes: Int, ingredients: Int) {
        self.loaded = loaded
        self.books = books
        self.recipes = recipes
        self.ingredients = ingredients
    }
}

/// What `storage.check` found.
public struct StorageCheck: Codable, Sendable, Equatable {
    /// `["ok"]`, or SQLite's findings (at most 100 lines).
    public var database: [String]
    /// "quick_check" or "integrity_check".
    public var databaseCheck: String
    /// How many photo files were read; absent when they were not asked for.
    public var photosChecked: Int?
    /// Photos a recipe names whose file is gone from the photo folder (SHA-256 hashes, at most 1,000).
    public var missingPhotos: [String]
    /// Photos whose bytes no longer matched their hash: moved aside (`.<hash>.damaged`) and from then on missing.
    public var damagedPhotos: [String]
    /// Photo files that are there but could not be read (an input/output error of a failing disk, a folder or a
    /// file without read permission in a photo's place), each with the system's reason; absent when none.
    public var unreadablePhotos: [UnreadablePhoto]?
    /// The database's files removed or replaced under the running storage; absent while they are not.
    public var problem: String?
    /// What to do when anything is wrong; absent when all is whole.
    public var advice: String?

    /// Nothing wrong.
    public var whole: Bool {
        database == ["ok"] && missingPhotos.isEmpty && damagedPhotos.isEmpty && (unreadablePhotos ?? []).isEmpty && problem == nil
    }

    /// A photo file that is there but could not be read.
    public struct UnreadablePhoto: Codable, Sendable, Equatable {
        public var sha256: String
        public var reason: String
        public init(sha256: String, reason: String) {
            self.sha256 = sha256
            self.reason = reason
        }
    }

    public init(database: [String], databaseCheck: String, photosChecked: Int?, missingPhotos: [String], damagedPhotos: [String],
                unreadablePhotos: [UnreadablePhoto]? = nil, problem: String?, advice: String?) {
        self.database = database
        self.databaseCheck = databaseCheck
        self.photosChecked = photosChecked
        self.missingPhotos = missingPhotos
        self.damagedPhotos = damagedPhotos
        self.unreadablePhotos = unreadablePhotos
        self.problem = problem
        self.advice = advice
    }
}

/// Counts for monitoring.
public struct StorageStats: Codable, Sendable, Equatable {
    public var recipes: Int
    public var starters: Int
    public var favorites: Int
    public var books: Int
    public var ingredients: Int
    public var cookLogEntries: Int
    public var photos: Int
    public var photoBytes: Int
    public var databaseBytes: Int
    public var schemaVersion: String
    /// What is wrong with the database (damage a request met since the storage started, or its files removed under
    /// it); absent while nothing is.
    public var problem: String?
    public init(recipes: Int, starters: Int, favorites: Int, books: Int, ingredients: Int, cookLogEntries: Int,
                photos: Int, photoBytes: Int, databaseBytes: Int, schemaVersion: String, problem: String? = nil) {
        self.problem = problem
        self.recipes = recipes
        self.starters = starters
        self.favorites = favorites
        self.books = books
        self.ingredients = ingredients
        self.cookLogEntries = cookLogEntries
        self.photos = photos
        self.photoBytes = photoBytes
        self.databaseBytes = databaseBytes
        self.schemaVersion = schemaVersion
    }
}
