import ArgumentParser
import Foundation
import Messaging
import RecipeModel
import RecipeProtocol

struct BooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "books", abstract: "Your cookbooks.",
                                                    subcommands: [ListBooks.self, AddBook.self, ShowBook.self, RenameBook.self, DeleteBook.self],
                                                    defaultSubcommand: ListBooks.self)
}

struct ListBooks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List books with their recipe counts.")
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await connection.show {
            BookOps.List.Response(books: try await allBooks(try connection.storageClient()))
        } text: { books in
            if books.books.isEmpty { return print("No books.") }
            Output.table(["ID", "TITLE", "AUTHOR", "RECIPES"], books.books.map {
                [Output.shortID($0.book.id), $0.book.title, $0.book.author ?? "", "\($0.recipeCount)"]
            })
        }
    }
}

struct AddBook: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a book.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The title.") var title: String
    @Option(help: "The author.") var author: String?

    func run() async throws {
        var namesakes: [Book] = []
        try await connection.show {
            let client = try connection.storageClient()
            // A second book of the same title is allowed (two editions, two authors), and easily made by mistake: say so.
            namesakes = try await allBooks(client).map(\.book)
                .filter { $0.title.caseInsensitiveCompare(title.trimmingCharacters(in: .whitespaces)) == .orderedSame }
            return try await client.call(BookOps.Create.self, .init(id: UUID.timeOrdered(), title: title, author: author))
        } text: { book in
            print("Added \"\(book.title)\" (\(Output.shortID(book.id))).")
            if !namesakes.isEmpty {
                printNote("you now have \(namesakes.count + 1) books called \"\(book.title)\" (\((namesakes + [book]).map(Output.bookLabel).joined(separator: "; "))); "
                          + "name one by its id, or rename one with `recipes books rename`")
            }
        }
    }
}

struct ShowBook: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "A book and its recipes.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Book id or title.") var book: String
    @Option(help: "Recipes shown at most (0-200), by page number, then name.") var limit = RecipeListQuery.maxLimit
    @Flag(help: "Every recipe of the book, however many.") var all = false

    func validate() throws {
        guard (0...RecipeListQuery.maxLimit).contains(limit) else {
            throw ValidationError("--limit must be 0 to \(RecipeListQuery.maxLimit); got \(limit)")
        }
    }

    func run() async throws {
        try await connection.show {
            let client = try connection.storageClient()
            let id = try await resolveBook(book, client)
            guard all else { return try await client.call(BookOps.Get.self, .init(id: id, limit: limit)) }
            // Every recipe, a page at a time: a book of thousands is more than one reply may carry.
            var whole = try await client.call(BookOps.Get.self, .init(id: id, limit: RecipeListQuery.maxLimit))
            if let next = whole.next {
                whole.recipes += try await readPages(after: next) { after in
                    let page = try await client.call(BookOps.Get.self, .init(id: id, limit: RecipeListQuery.maxLimit, after: after))
                    return (page.recipes, page.next)
                }.items
                whole.next = nil
            }
            return whole
        } text: { detail in
            print(Output.bold(detail.book.title) + (detail.book.author.map { " — \($0)" } ?? "")
                  + Output.dim(" (\(Output.count(detail.recipeCount, "recipe")))"))
            Output.table(["ID", "NAME"], detail.recipes.map { [Output.shortID($0.id), $0.name] })
            if detail.recipeCount > detail.recipes.count {
                print(Output.dim("\(detail.recipeCount - detail.recipes.count) more: recipes books show \(detail.book.id.uuidString) --all"))
            }
        }
    }
}

struct RenameBook: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rename", abstract: "Change a book's title (and author).")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Book id or title.") var book: String
    @Argument(help: "The new title.") var title: String
    @Option(help: "The author (kept when left out).") var author: String?

    func run() async throws {
        try await connection.show {
            let client = try connection.storageClient()
            let id = try await resolveBook(book, client)
            let current = try await client.call(BookOps.Get.self, .init(id: id, limit: 0)).book
            return try await client.call(BookOps.Update.self, .init(id: id, title: title, author: author ?? current.author))
        } text: { renamed in
            print("Renamed to \"\(renamed.title)\".")
        }
    }
}

struct DeleteBook: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a book; its recipes stay.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Book id or title.") var book: String

    func run() async throws {
        try await connection.show {
            let client = try connection.storageClient()
            return try await client.call(BookOps.Delete.self, ByID(id: try await resolveBook(book, client)))
        } text: { result in
            print(result.deleted ? "Deleted the book; its recipes stay." : "The book was already gone.")
        }
    }
}

/// A book by id, short id or title (any case).
func resolveBook(_ reference: String, _ client: MessageClient) async throws -> UUID {
    let trimmed = reference.trimmingCharacters(in: .whitespaces)
    if let id = UUID(uuidString: trimmed) { return id }
    let books = try await allBooks(client).map(\.book)
    let matches = books.filter { $0.title.caseInsensitiveCompare(trimmed) == .orderedSame || Output.isShortID(trimmed, of: $0.id) }
    return try Output.onlyMatch(matches, none: "no book is called \"\(trimmed)\"; see `recipes books`") { count in
        let named = matches.prefix(5).map(Output.bookLabel).joined(separator: "; ")
        return "\"\(trimmed)\" could be \(count) books (\(named)\(count > 5 ? "; …" : "")); use an id"
    }.id
}
