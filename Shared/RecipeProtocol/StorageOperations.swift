import Foundation
import RecipeModel

/// `{"deleted": true}`: whether the record was there to delete (deleting twice is not an error).
public struct Deleted: Codable, Sendable, Equatable {
    public var deleted: Bool
    public init(deleted: Bool) { self.deleted = deleted }
}

/// `{"id": "…"}`: the record to act on.
public struct ByID: Codable, Sendable, Equatable {
    public var id: UUID
    public init(id: UUID) { self.id = id }
}

/// Recipe operations of `recipe-storage`.
public enum RecipeOps {
    /// `recipe.create`: stores a new recipe under the client's id.
    public enum Create: WireOperation {
        public static let name = "recipe.create"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            /// Chosen by the client, so a retry lands once; a new one is made when left out.
            public var id: UUID?
            public var recipe: RecipeDraft
            public init(id: UUID? = nil, recipe: RecipeDraft) {
                self.id = id
                self.recipe = recipe
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var recipe: Recipe
            /// `false` when a recipe with that id already existed (it is returned unchanged).
            public var created: Bool
            public init(recipe: Recipe, created: Bool) {
                self.recipe = recipe
                self.created = created
            }
        }
    }

    /// `recipe.get`: a recipe with its cook history; scaled quantities when `servings` is given.
    public enum Get: WireOperation {
        public static let name = "recipe.get"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var id: UUID
            public var servings: Double?
            public init(id: UUID, servings: Double? = nil) {
                self.id = id
                self.servings = servings
            }
        }
        public typealias Response = RecipeDetail
    }

    /// `recipe.update`: replaces a recipe's content, if it is still at `expectedVersion`.
    public enum Update: WireOperation {
        public static let name = "recipe.update"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var id: UUID
            /// The `version` the client last saw; another one means someone else changed it (`conflict`).
            public var expectedVersion: Int
            public var recipe: RecipeDraft
            public init(id: UUID, expectedVersion: Int, recipe: RecipeDraft) {
                self.id = id
                self.expectedVersion = expectedVersion
                self.recipe = recipe
            }
        }
        public typealias Response = Recipe
    }

    /// `recipe.delete`: deletes a recipe (not a starter); its cook-log entries stay.
    public enum Delete: WireOperation {
        public static let touchesFiles = true // photos no recipe uses any more are collected
        public static let name = "recipe.delete"
        public static let isWrite = true
        public typealias Request = ByID
        public typealias Response = Deleted
    }

    /// `recipe.list`: a page of recipe summaries.
    public enum List: WireOperation {
        public static let name = "recipe.list"
        public static let isWrite = false
        public typealias Request = RecipeListQuery
        public typealias Response = RecipePage
    }

    /// `recipe.search`: full-text search, best first.
    public enum Search: WireOperation {
        public static let name = "recipe.search"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var text: String
            /// 1 to 200; 20 when left out.
            public var limit: Int?
            public init(text: String, limit: Int? = nil) {
                self.text = text
                self.limit = limit
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var hits: [SearchHit]
            public init(hits: [SearchHit]) { self.hits = hits }
        }
    }

    /// `recipe.duplicate`: a `custom` copy of any recipe (the way to change a starter).
    public enum Duplicate: WireOperation {
        public static let name = "recipe.duplicate"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var id: UUID
            /// The copy's id, chosen by the client; made when left out.
            public var newID: UUID?
            /// The copy's name; the original's when left out.
            public var name: String?
            public init(id: UUID, newID: UUID? = nil, name: String? = nil) {
                self.id = id
                self.newID = newID
                self.name = name
            }
        }
        public typealias Response = Recipe
    }

    /// `recipe.favorite`: marks or unmarks a favourite.
    public enum Favorite: WireOperation {
        public static let name = "recipe.favorite"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var id: UUID
            public var isFavorite: Bool
            public init(id: UUID, isFavorite: Bool) {
                self.id = id
                self.isFavorite = isFavorite
            }
        }
        public typealias Response = Recipe
    }

    /// `recipe.rate`: sets the rating, 0 (unrated) to 5.
    public enum Rate: WireOperation {
        public static let name = "recipe.rate"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var id: UUID
            public var rating: Int
            public init(id: UUID, rating: Int) {
                self.id = id
                self.rating = rating
            }
        }
        public typealias Response = Recipe
    }

    /// `recipe.canMake`: what can I make with what I have?
    public enum CanMake: WireOperation {
        public static let name = "recipe.canMake"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            /// Foods the user has, as they would write them ("eggs", "spring onions").
            public var have: [String]
            /// At most this many missing foods (0 when left out).
            public var maxMissing: Int?
            /// Leave salt, pepper, water and oil out of the count (`true` when left out).
            public var ignoreStaples: Bool?
            public init(have: [String], maxMissing: Int? = nil, ignoreStaples: Bool? = nil) {
                self.have = have
                self.maxMissing = maxMissing
                self.ignoreStaples = ignoreStaples
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var results: [CanMakeResult]
            public init(results: [CanMakeResult]) { self.results = results }
        }
    }
}

/// Book operations of `recipe-storage`.
public enum BookOps {
    /// The fields of a book a client sets.
    public struct Fields: Codable, Sendable, Equatable {
        /// Chosen by the client on create; made when left out.
        public var id: UUID?
        public var title: String
        public var author: String?
        public init(id: UUID? = nil, title: String, author: String? = nil) {
            self.id = id
            self.title = title
            self.author = author
        }
    }

    /// `book.create`
    public enum Create: WireOperation {
        public static let name = "book.create"
        public static let isWrite = true
        public typealias Request = Fields
        public typealias Response = Book
    }

    /// `book.list`: every book with its recipe count.
    public enum List: WireOperation {
        public static let name = "book.list"
        public static let isWrite = false
        public typealias Request = Empty
        public struct Response: Codable, Sendable, Equatable {
            public var books: [BookSummary]
            public init(books: [BookSummary]) { self.books = books }
        }
    }

    /// `book.get`: a book with its recipes.
    public enum Get: WireOperation {
        public static let name = "book.get"
        public static let isWrite = false
        public typealias Request = ByID
        public typealias Response = BookDetail
    }

    /// `book.update`: `id` is required.
    public enum Update: WireOperation {
        public static let name = "book.update"
        public static let isWrite = true
        public typealias Request = Fields
        public typealias Response = Book
    }

    /// `book.delete`: its recipes stay, no longer pointing to it.
    public enum Delete: WireOperation {
        public static let name = "book.delete"
        public static let isWrite = true
        public typealias Request = ByID
        public typealias Response = Deleted
    }
}

/// Ingredient catalogue operations of `recipe-storage`.
public enum IngredientOps {
    /// `ingredient.list`
    public enum List: WireOperation {
        public static let name = "ingredient.list"
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

/// Cook log operations of `recipe-storage`.
public enum CookLogOps {
    /// `cooklog.add`: records that a recipe was cooked.
    public enum Add: WireOperation {
        public static let name = "cooklog.add"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var id: UUID?
            public var recipeID: UUID
            /// When; now when left out.
            public var cookedAt: Date?
            /// 1 to 5.
            public var rating: Int?
            public var note: String?
            public var servings: Double?
            public init(id: UUID? = nil, recipeID: UUID, cookedAt: Date? = nil, rating: Int? = nil, note: String? = nil, servings: Double? = nil) {
                self.id = id
                self.recipeID = recipeID
                self.cookedAt = cookedAt
                self.rating = rating
                self.note = note
                self.servings = servings
            }
        }
        public typealias Response = CookLogEntry
    }

    /// `cooklog.list`: newest first, for one recipe or all.
    public enum List: WireOperation {
        public static let name = "cooklog.list"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var recipeID: UUID?
            /// 1 to 1000; 50 when left out.
            public var limit: Int?
            public init(recipeID: UUID? = nil, limit: Int? = nil) {
                self.recipeID = recipeID
                self.limit = limit
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var entries: [CookLogEntry]
            public init(entries: [CookLogEntry]) { self.entries = entries }
        }
    }

    /// `cooklog.delete`
    public enum Delete: WireOperation {
        public static let name = "cooklog.delete"
        public static let isWrite = true
        public typealias Request = ByID
        public typealias Response = Deleted
    }
}

/// Whole-storage operations of `recipe-storage`.
public enum StorageOps {
    /// `samples.load`: the seed-004 sample books, starter recipes and catalogue, once.
    public enum LoadSamples: WireOperation {
        public static let name = "samples.load"
        public static let isWrite = true
        public typealias Request = Empty
        public typealias Response = SampleLoadResult
    }

    /// `storage.stats`: counts for monitoring.
    public enum Stats: WireOperation {
        public static let name = "storage.stats"
        public static let isWrite = false
        public typealias Request = Empty
        public typealias Response = StorageStats
    }
}
