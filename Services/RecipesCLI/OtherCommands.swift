import ArgumentParser
import Foundation
import Messaging
import RecipeModel
import RecipeProtocol

struct CanMake: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "can-make", abstract: "What can I make with what I have?")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "The foods you have, comma-separated: \"eggs, rice, soy sauce\".") var have: String
    @Option(help: "Allow up to this many missing foods (0-50).") var missing = 0
    @Flag(help: "Count salt, pepper, water and oil too.") var countStaples = false

    func validate() throws {
        guard (0...50).contains(missing) else { throw ValidationError("--missing must be 0 to 50; got \(missing)") }
        guard !foods.isEmpty else { throw ValidationError("--have needs at least one food, such as \"eggs, rice\"") }
    }

    var foods: [String] { have.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }

    func run() async throws {
        try await reportingFailures {
            let result = try await connection.storageClient().call(
                RecipeOps.CanMake.self, .init(have: foods, maxMissing: missing, ignoreStaples: !countStaples))
            if connection.json { return try Output.json(result) }
            if result.results.isEmpty { return print("Nothing with at most \(missing) missing food\(missing == 1 ? "" : "s"); try --missing \(missing + 1).") }
            Output.table(["ID", "NAME", "HAVE", "MISSING"], result.results.map {
                [Output.shortID($0.recipe.id), $0.recipe.name, "\($0.matched)/\($0.total)", $0.missing.joined(separator: ", ")]
            })
        }
    }
}

struct Cooked: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cooked", abstract: "Record that you cooked a recipe.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Option(help: "How it turned out, 1 to 5.") var rating: Int?
    @Option(help: "A note for next time.") var note: String?
    @Option(help: "Servings made.") var servings: Double?

    func validate() throws {
        if let rating, !(1...5).contains(rating) { throw ValidationError("--rating must be 1 to 5; got \(rating)") }
    }

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            let entry = try await client.call(CookLogOps.Add.self, .init(id: UUID.timeOrdered(), recipeID: id, rating: rating, note: note, servings: servings))
            if connection.json { return try Output.json(entry) }
            print("Logged \"\(entry.recipeName)\" on \(Output.date(entry.cookedAt))" + (rating.map { " " + Output.stars($0) } ?? "") + ".")
        }
    }
}

struct CookLog: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "log", abstract: "The cook log, newest first: one recipe's or everything.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name (all recipes when left out).") var recipe: String?
    @Option(help: "At most this many entries (1-1000).") var limit = 50
    @Option(help: ArgumentHelp("Delete this log entry instead (its id, from --json).", valueName: "entry-id")) var delete: String?

    func validate() throws {
        guard (1...1_000).contains(limit) else { throw ValidationError("--limit must be 1 to 1000; got \(limit)") }
        if let delete, UUID(uuidString: delete) == nil { throw ValidationError("--delete needs a log entry id (a UUID); got \(delete)") }
    }

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            if let entry = delete.flatMap(UUID.init(uuidString:)) {
                let result = try await client.call(CookLogOps.Delete.self, ByID(id: entry))
                if connection.json { return try Output.json(result) }
                return print(result.deleted ? "Deleted the log entry." : "That log entry was already gone.")
            }
            let id = try await recipe.asyncMap { try await RecipeReference.resolve($0, using: client) }
            let log = try await client.call(CookLogOps.List.self, .init(recipeID: id, limit: limit))
            if connection.json { return try Output.json(log) }
            if log.entries.isEmpty { return print("Nothing cooked yet.") }
            Output.table(["DATE", "RECIPE", "RATING", "NOTE"], log.entries.map {
                [Output.date($0.cookedAt), $0.recipeName + ($0.recipeID == nil ? " (deleted)" : ""), $0.rating.map(Output.stars) ?? "", $0.note ?? ""]
            })
        }
    }
}

struct BooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "books", abstract: "Your cookbooks.",
                                                    subcommands: [ListBooks.self, AddBook.self, ShowBook.self, RenameBook.self, DeleteBook.self],
                                                    defaultSubcommand: ListBooks.self)
}

struct ListBooks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List books with their recipe counts.")
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await reportingFailures {
            let books = try await connection.storageClient().call(BookOps.List.self, Empty())
            if connection.json { return try Output.json(books) }
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
        try await reportingFailures {
            let book = try await connection.storageClient().call(BookOps.Create.self, .init(id: UUID.timeOrdered(), title: title, author: author))
            if connection.json { return try Output.json(book) }
            print("Added \"\(book.title)\" (\(book.id.uuidString.lowercased())).")
        }
    }
}

struct ShowBook: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "A book and its recipes.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Book id or title.") var book: String

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            let id = try await resolveBook(book, client)
            let detail = try await client.call(BookOps.Get.self, ByID(id: id))
            if connection.json { return try Output.json(detail) }
            print(Output.bold(detail.book.title) + (detail.book.author.map { " — \($0)" } ?? ""))
            Output.table(["ID", "NAME"], detail.recipes.map { [Output.shortID($0.id), $0.name] })
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
        try await reportingFailures {
            let client = try connection.storageClient()
            let id = try await resolveBook(book, client)
            let current = try await client.call(BookOps.Get.self, ByID(id: id)).book
            let renamed = try await client.call(BookOps.Update.self, .init(id: id, title: title, author: author ?? current.author))
            if connection.json { return try Output.json(renamed) }
            print("Renamed to \"\(renamed.title)\".")
        }
    }
}

struct DeleteBook: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a book; its recipes stay.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Book id or title.") var book: String

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            let result = try await client.call(BookOps.Delete.self, ByID(id: try await resolveBook(book, client)))
            if connection.json { return try Output.json(result) }
            print(result.deleted ? "Deleted the book; its recipes stay." : "The book was already gone.")
        }
    }
}

/// A book by id, short id or title (any case).
func resolveBook(_ reference: String, _ client: MessageClient) async throws -> UUID {
    if let id = UUID(uuidString: reference) { return id }
    let books = try await client.call(BookOps.List.self, Empty()).books.map(\.book)
    let matches = books.filter { $0.title.caseInsensitiveCompare(reference) == .orderedSame || $0.id.uuidString.lowercased().hasPrefix(reference.lowercased()) }
    guard matches.count == 1 else {
        throw CLIError(matches.isEmpty ? "no book is called \"\(reference)\"; see `recipes books`" : "\"\(reference)\" matches \(matches.count) books; use an id",
                       status: matches.isEmpty ? ExitStatus.notFound : ExitStatus.refused)
    }
    return matches[0].id
}

struct IngredientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ingredients", abstract: "The ingredient catalogue.",
                                                    subcommands: [ListIngredients.self, FindIngredient.self, AddIngredient.self],
                                                    defaultSubcommand: ListIngredients.self)
}

struct ListIngredients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the catalogue.")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Only this category: protein, vegetable, fruit, dairy, grain, pantryStaple, herb, spice, condiment, other.")
    var category: IngredientCategory?

    func run() async throws {
        try await reportingFailures {
            let list = try await connection.storageClient().call(IngredientOps.List.self, .init(category: category))
            if connection.json { return try Output.json(list) }
            Output.table(["NAME", "CATEGORY", "ALSO CALLED"], list.ingredients.map {
                [$0.name, $0.category?.rawValue ?? "", $0.aliases.joined(separator: ", ")]
            })
        }
    }
}

struct FindIngredient: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "find", abstract: "Find a food by its name or another name.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "A name, such as \"scallions\".") var name: String

    func run() async throws {
        try await reportingFailures {
            let entry = try await connection.storageClient().call(IngredientOps.Find.self, .init(name: name))
            if connection.json { return try Output.json(entry) }
            print("\(entry.name)" + (entry.category.map { " (\($0.rawValue))" } ?? "") + (entry.aliases.isEmpty ? "" : " — also called " + entry.aliases.joined(separator: ", ")))
        }
    }
}

struct AddIngredient: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a food to the catalogue, or update the one with that name.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Its name, such as \"aubergine\".") var name: String
    @Option(help: "protein, vegetable, fruit, dairy, grain, pantryStaple, herb, spice, condiment or other.") var category: IngredientCategory?
    @Option(name: .customLong("alias"), help: "Another name for it, such as \"eggplant\"; repeatable (replaces the aliases).") var aliases: [String] = []

    func run() async throws {
        try await reportingFailures {
            let entry = try await connection.storageClient().call(
                IngredientOps.Upsert.self, .init(id: UUID.timeOrdered(), name: name, category: category, aliases: aliases))
            if connection.json { return try Output.json(entry) }
            print("\(entry.name)" + (entry.category.map { " (\($0.rawValue))" } ?? "") + (entry.aliases.isEmpty ? "" : " — also called " + entry.aliases.joined(separator: ", ")))
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Are the services reachable? Versions and counts.",
        discussion: "Exits 69 when recipe-storage (or the --only service) is not reachable and 78 when it refuses this client's keys: a container health check.")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Check only this service: storage or worker.")
    var only: Only?

    enum Only: String, ExpressibleByArgument, CaseIterable { case storage, worker }

    struct Report: Encodable {
        struct Service: Encodable {
            var endpoint: String
            var reachable: Bool
            var health: System.Health.Response?
            var error: String?
            /// Set when the service refused this client's CURVE keys.
            var refused: Bool?
        }
        var storage: Service?
        var worker: Service?
        var stats: StorageStats?
    }

    func run() async throws {
        try await reportingFailures {
            async let storage = only == .worker ? nil : probe(try connection.storageClient(), connection.storageEndpoint)
            async let worker = only == .storage ? nil : probe(try connection.workerClient(), connection.workerEndpoint)
            var report = Report(storage: try await storage, worker: try await worker)
            if report.storage?.reachable == true { report.stats = try? await connection.storageClient().call(StorageOps.Stats.self, Empty()) }
            if connection.json {
                try Output.json(report)
            } else {
                for (name, service) in [("recipe-storage", report.storage), ("recipe-worker", report.worker)] {
                    guard let service else { continue }
                    if let health = service.health {
                        print("\(name): up at \(service.endpoint), version \(health.version), protocol \(health.protocolVersion), up \(Output.minutes(Int(health.uptimeSeconds / 60)))")
                    } else if service.refused == true, let error = service.error {
                        print("\(name): \(error)")
                    } else {
                        print("\(name): not reachable at \(service.endpoint)")
                    }
                }
                if let stats = report.stats {
                    print("\(stats.recipes) recipes (\(stats.starters) starters, \(stats.favorites) favourites), \(stats.books) books, \(stats.ingredients) ingredients, \(stats.cookLogEntries) cooked, \(stats.photos) photos (\(ImageKind.formatBytes(stats.photoBytes)))")
                }
            }
            // The storage is required (the worker is optional: imports need it, nothing else does), unless --only says otherwise.
            let (name, required) = only == .worker ? ("recipe-worker", report.worker) : ("recipe-storage", report.storage)
            if let required, !required.reachable {
                if required.refused == true { throw CLIError("\(name) refused this client's keys", status: ExitStatus.refusedKeys) }
                let variable = only == .worker ? "RECIPES_WORKER or --worker" : "RECIPES_STORAGE or --storage"
                throw CLIError("\(name) is not reachable at \(required.endpoint); set \(variable)", status: ExitStatus.unavailable)
            }
        }
    }

    private func probe(_ client: MessageClient, _ endpoint: String) async -> Report.Service {
        do {
            return Report.Service(endpoint: endpoint, reachable: true, health: try await client.call(System.Health.self, Empty()))
        } catch let error as MessageClientError {
            if case .refused = error { return Report.Service(endpoint: endpoint, reachable: false, error: "\(error)", refused: true) }
            return Report.Service(endpoint: endpoint, reachable: false, error: "\(error)")
        } catch {
            return Report.Service(endpoint: endpoint, reachable: false, error: "\(error)")
        }
    }
}

struct Samples: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "samples", abstract: "Load the sample books, starter recipes and catalogue (once).")
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await reportingFailures {
            let result = try await connection.storageClient().call(StorageOps.LoadSamples.self, Empty())
            if connection.json { return try Output.json(result) }
            print(result.loaded ? "Loaded \(result.recipes) starter recipes, \(result.books) books and \(result.ingredients) ingredients."
                : "The samples are already loaded.")
        }
    }
}

extension IngredientCategory: ExpressibleByArgument {}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
