import Foundation
import RecipeModel

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

    /// `cooklog.list`: newest first, for one recipe or all, a page at a time.
    public enum List: WireOperation {
        public static let name = "cooklog.list"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var recipeID: UUID?
            /// 1 to 1000; 50 when left out.
            public var limit: Int?
            /// The `next` of the page before: the entries older than its last.
            public var after: String?
            public init(recipeID: UUID? = nil, limit: Int? = nil, after: String? = nil) {
                self.recipeID = recipeID
                self.limit = limit
                self.after = after
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var entries: [CookLogEntry]
            /// Where the next (older) page starts, when there is one; `nil` on the last page.
            public var next: String?
            public init(entries: [CookLogEntry], next: String? = nil) {
                self.entries = entries
                self.next = next
            }
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
