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

    /// `book.list`: the books with their recipe counts, by title, a page at a time (however many books there are,
    /// no reply passes the 16 MiB one may carry).
    public enum List: WireOperation {
        public static let name = "book.list"
        public static let repliesInBulk = true // grows with the collection
        public static let isWrite = false
        /// The most books one page holds (a request without a limit is answered with every one, in one reply).
        public static let maxLimit = 1_000
        public typealias Request = PageRequest
        public struct Response: Codable, Sendable, Equatable {
            public var books: [BookSummary]
            /// Where the next page starts, when more follow; `nil` on the last page.
            public var next: String?
            public init(books: [BookSummary], next: String? = nil) {
                self.books = books
                self.next = next
            }
        }
    }

    /// `book.get`: a book, how many recipes it holds, and a page of its recipes (all of them without a limit, when
    /// they fit in one reply).
    public enum Get: WireOperation {
        public static let name = "book.get"
        public static let repliesInBulk = true // grows with the collection
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var id: UUID
            /// At most this many recipes (0 for the book alone; `RecipeListQuery.maxLimit` at most); `nil` for all.
            public var limit: Int?
            /// The `next` of the page before; left out for the first page.
            public var after: String?
            public init(id: UUID, limit: Int? = nil, after: String? = nil) {
                self.id = id
                self.limit = limit
                self.after = after
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
