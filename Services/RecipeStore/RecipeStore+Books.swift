import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

extension RecipeStore {
    /// Creates a book with the client's id (an existing id returns the stored book).
    public func createBook(id: UUID, title: String, author: String?) async throws -> Book {
        // Text is stored composed (NFC), as a recipe's is.
        let (title, author) = (try Self.validTitle(title.composed), try Self.validAuthor(author?.composed))
        return try await write { db in
            if let existing = try Self.fetchBookIfAny(id, in: db) { return existing }
            let now = Self.now()
            try db.execute(sql: "INSERT INTO books (id, title, author, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?)",
                           arguments: [id.databaseText, title, author?.nilIfBlank, now, now])
            // A book made again under the id of a deleted one: recipes whose records still file them in it go back in,
            // as on every replica the book reaches by a sync.
            try SyncLog.relinkWaiting(for: .book, id.databaseText, in: db)
            return try Self.fetchBook(id, in: db)
        }
    }

    /// Every book with its recipe count, by title.
    public func listBooks() async throws -> [BookSummary] {
        try await bookPage(limit: nil, after: nil).books
    }

    /// A page of the books with their recipe counts, by title (as SQLite lowercases it) and id: at most `limit`
    /// (1 to `BookOps.List.maxLimit`; every one when `nil`), from after `after` (the `next` of the page before).
    public func bookPage(limit: Int?, after: String?) async throws -> BookOps.List.Response {
        let limit = try PageMark.limit(limit, max: BookOps.List.maxLimit)
        let start = try after.map { try PageMark.read($0, op: BookOps.List.name) }
        return try await pool.read { db in
            // One row past the page tells whether more follow.
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT b.*, (SELECT COUNT(*) FROM recipes r WHERE r.bookId = b.id) AS recipeCount, lower(b.title) AS sortKey
                FROM books b WHERE (lower(b.title), b.id) > (?, ?) ORDER BY lower(b.title), b.id LIMIT ?
                """), arguments: [start?.key ?? "", start?.id ?? "", limit.map { $0 + 1 } ?? -1])
            let (books, next) = try PageMark.page(of: rows, limit: limit, key: "sortKey",
                tooLarge: PageMark.tooLargeForOneReply("book", op: BookOps.List.name, maxLimit: BookOps.List.maxLimit)) {
                BookSummary(book: Self.book($0), recipeCount: $0["recipeCount"])
            }
            return .init(books: books, next: next)
        }
    }

    /// A book, how many recipes it holds, and a page of its recipes by page number (none last), then name and id: at
    /// most `limit` (0 for the book alone, up to `RecipeListQuery.maxLimit`), from after `after` (the `next` of the page
    /// before), and the `next` of this page when more follow. Without a limit, every recipe in one reply — refused once
    /// they pass what one reply may carry (a book of thousands of recipes with long names and categories).
    public func book(_ id: UUID, limit: Int? = nil, after: String? = nil) async throws -> BookDetail {
        if let limit, !(0...RecipeListQuery.maxLimit).contains(limit) {
            throw ServiceError(.invalidArgument, "limit is \(limit); it must be 0 (the book alone) to \(RecipeListQuery.maxLimit), or left out for every recipe")
        }
        let start = try after.map(Self.bookRecipesMark)
        return try await pool.read { db in
            let book = try Self.fetchBook(id, in: db)
            let count = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM recipes WHERE bookId = ?"), arguments: [id.databaseText]) ?? 0
            var fill = PageFill<RecipeSummary, PageMark>(limit: limit,
                orElse: PageMark.tooLargeForOneReply("recipe of the book", op: BookOps.Get.name, maxLimit: RecipeListQuery.maxLimit))
            if limit != 0 {
                // The page key (number, name as SQLite lowercases it, id) follows the summary's columns; one row past
                // the page tells whether more follow.
                try db.forEachRow("""
                    SELECT \(Self.summaryColumns), COALESCE(r.sourcePageNumber, 999999), lower(r.title) FROM recipes r
                    WHERE r.bookId = ?1 AND (?2 IS NULL OR (COALESCE(r.sourcePageNumber, 999999), lower(r.title), r.id) > (?2, ?3, ?4))
                    ORDER BY COALESCE(r.sourcePageNumber, 999999), lower(r.title), r.id LIMIT ?5
                    """, [id.databaseText, start?.page, start?.title, start?.id, limit.map { $0 + 1 } ?? -1]) { row in
                    let page: Int = row[Self.summaryColumnCount, or: 0]
                    _ = try fill.add(Self.summary(row),
                                     at: PageMark(id: row[SummaryColumn.id, or: ""], key: "\(page):\(row[Self.summaryColumnCount + 1, or: ""] as String)"))
                }
            }
            return BookDetail(book: book, recipes: fill.items, recipeCount: count, next: fill.next?.text)
        }
    }

    /// The place in a book's recipes a `book.get` page mark names: `id:page:name`, the name as SQLite lowercases it.
    private static func bookRecipesMark(_ text: String) throws -> (page: Int, title: String, id: String) {
        let mark = try PageMark.read(text, op: BookOps.Get.name)
        guard let colon = mark.key.firstIndex(of: ":"), let page = Int(mark.key[..<colon]) else {
            throw PageMark.refusal(text, op: BookOps.Get.name)
        }
        return (page, String(mark.key[mark.key.index(after: colon)...]), mark.id)
    }

    /// Renames a book or changes its author.
    public func updateBook(id: UUID, title: String, author: String?) async throws -> Book {
        let (title, author) = (try Self.validTitle(title.composed), try Self.validAuthor(author?.composed))
        return try await write { db in
            _ = try Self.fetchBook(id, in: db)
            try db.execute(sql: "UPDATE books SET title = ?, author = ?, updatedAt = ? WHERE id = ?",
                           arguments: [title, author?.nilIfBlank, Self.now(), id.databaseText])
            return try Self.fetchBook(id, in: db)
        }
    }

    /// Deletes a book; its recipes stay, no longer pointing to it. `false` when it was already gone.
    @discardableResult
    public func deleteBook(id: UUID) async throws -> Bool {
        try await write { db in
            guard try Self.fetchBookIfAny(id, in: db) != nil else { return false }
            try db.execute(sql: "UPDATE recipes SET bookId = NULL, sourcePageNumber = NULL, version = version + 1, updatedAt = ? WHERE bookId = ?",
                           arguments: [Self.now(), id.databaseText])
            try db.execute(sql: "DELETE FROM books WHERE id = ?", arguments: [id.databaseText])
            return true
        }
    }

    static func book(_ row: Row) -> Book {
        Book(id: row.uuid("id") ?? UUID(), title: row["title"], author: row["author"], createdAt: row["createdAt"], updatedAt: row["updatedAt"])
    }

    static func fetchBookIfAny(_ id: UUID, in db: Database) throws -> Book? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM books WHERE id = ?"), arguments: [id.databaseText]).map(book)
    }

    static func fetchBook(_ id: UUID, in db: Database) throws -> Book {
        guard let book = try fetchBookIfAny(id, in: db) else { throw ServiceError(.notFound, "no book has id \(id.uuidString)") }
        return book
    }

    private static func validAuthor(_ author: String?) throws -> String? {
        if let problem = author?.sizeProblem("the book's author", characters: RecipeDraft.Limits.nameLength) { throw ServiceError(.invalidArgument, problem) }
        return author
    }

    private static func validTitle(_ title: String) throws -> String {
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw ServiceError(.invalidArgument, "a book title must be 1 to \(RecipeDraft.Limits.nameLength) characters; got 0") }
        if let problem = trimmed.sizeProblem("the book's title", characters: RecipeDraft.Limits.nameLength) { throw ServiceError(.invalidArgument, problem) }
        return trimmed
    }
}

extension String {
    /// `nil` for a string of only white space.
    var nilIfBlank: String? {
        trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : self
    }
}
