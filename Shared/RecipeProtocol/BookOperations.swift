import Foundation
import RecipeModel

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
        public static let repliesInBulk = true // grows with the collection
        public static let isWrite = false
        public typealias Request = Empty
        public struct Response: Codable, Sendable, Equatable {
            public var books: [BookSummary]
            public init(books: [BookSummary]) { self.books = books }
        }
    }

    /// `book.get`: a book, how many recipes it holds, and its first `limit` recipes (all of them without one).
    public enum Get: WireOperation {
        public static let name = "book.get"
        public static let repliesInBulk = true // grows with the collection
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var id: UUID
            /// At most this many recipes (0 for the book alone; `RecipeListQuery.maxLimit` at most); `nil` for all.
            /// The rest are read in pages with `recipe.list` and `bookID`.
            public var limit: Int?
            public init(id: UUID, limit: Int? = nil) {
                self.id = id
                self.limit = limit
            }
        }
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
