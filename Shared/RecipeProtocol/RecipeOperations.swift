import Foundation
import RecipeModel

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
            /// When the recipe was first written, for one brought from another app (now when left out;
            /// not before 1970 nor in the future).
            public var createdAt: Date?
            public init(id: UUID? = nil, recipe: RecipeDraft, createdAt: Date? = nil) {
                self.id = id
                self.recipe = recipe
                self.createdAt = createdAt
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
        public static let repliesWithOneRecord = true
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
        /// The results a question gets when it gives no `limit`.
        public static let defaultLimit = 50
        public struct Request: Codable, Sendable, Equatable {
            /// Foods the user has, as they would write them ("eggs", "spring onions").
            public var have: [String]
            /// At most this many missing foods (0 when left out).
            public var maxMissing: Int?
            /// Leave salt, pepper, water and oil out of the count (`true` when left out).
            public var ignoreStaples: Bool?
            /// How many results at most: 1 to 200; 50 when left out.
            public var limit: Int?
            public init(have: [String], maxMissing: Int? = nil, ignoreStaples: Bool? = nil, limit: Int? = nil) {
                self.have = have
                self.maxMissing = maxMissing
                self.ignoreStaples = ignoreStaples
                self.limit = limit
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            /// The best `limit` of the recipes that qualify: fewest missing first, then by name.
            public var results: [CanMakeResult]
            /// How many recipes qualify in all (more than `results` holds when the limit cut them).
            public var matching: Int?
            public init(results: [CanMakeResult], matching: Int? = nil) {
                self.results = results
                self.matching = matching
            }
        }
    }
}
