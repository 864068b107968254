import ArgumentParser
import Foundation
import Messaging
import RecipeModel
import RecipeProtocol

struct CanMake: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "can-make", abstract: "What can I make with what I have?")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The foods you have: eggs rice \"soy sauce\" (or comma-separated, as --have takes them).") var food: [String] = []
    @Option(help: "The foods you have, comma-separated: \"eggs, rice, soy sauce\".") var have: String?
    @Option(help: "Allow up to this many missing foods (0-50).") var missing = 0
    @Flag(help: "Count salt, pepper, water and oil too.") var countStaples = false
    @Option(help: "Show at most this many recipes, fewest missing first (1-200).") var limit = RecipeOps.CanMake.defaultLimit

    func validate() throws {
        guard (0...50).contains(missing) else { throw ValidationError("--missing must be 0 to 50; got \(missing)") }
        guard (1...RecipeListQuery.maxLimit).contains(limit) else { throw ValidationError("--limit must be 1 to \(RecipeListQuery.maxLimit); got \(limit)") }
        guard !foods.isEmpty else {
            throw ValidationError("say what you have: at least one food, such as `recipes can-make eggs rice` or --have \"eggs, rice\"")
        }
    }

    var foods: [String] {
        (food + [have ?? ""]).flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func run() async throws {
        try await reportingFailures {
            let result = try await connection.storageClient().call(
                RecipeOps.CanMake.self, .init(have: foods, maxMissing: missing, ignoreStaples: !countStaples, limit: limit))
            if connection.json { return try Output.json(result) }
            if result.results.isEmpty { return print("Nothing with at most \(Output.count(missing, "missing food")); try --missing \(missing + 1).") }
            Output.table(["ID", "NAME", "HAVE", "MISSING"], result.results.map {
                [Output.shortID($0.recipe.id), $0.recipe.name, "\($0.matched)/\($0.total)", $0.missing.joined(separator: ", ")]
            })
            if let matching = result.matching, matching > result.results.count {
                print("\(result.results.count) of \(Output.count(matching, "recipe")) shown; --limit shows up to \(RecipeListQuery.maxLimit)"
                      + (missing > 0 ? ", and --missing \(missing - 1) narrows the list." : "."))
            }
        }
    }
}

struct Cooked: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cooked", abstract: "Record that you cooked a recipe.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Option(help: "How it turned out, 1 to 5.") var rating: Int?
    @Option(help: "A note for next time.") var note: String?
    @Option(help: "Servings made, 0.01 to 10000.") var servings: Double?

    func validate() throws {
        if let rating, !ValueRanges.cookRating.contains(rating) { throw ValidationError("--rating must be 1 to 5; got \(rating)") }
        try NumberOptions.servings(servings)
    }

    func run() async throws {
        try await connection.show {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            return try await client.call(CookLogOps.Add.self, .init(id: UUID.timeOrdered(), recipeID: id, rating: rating, note: note, servings: servings))
        } text: { entry in
            print("Logged \"\(entry.recipeName)\" on \(Output.date(entry.cookedAt))" + (rating.map { " " + Output.stars($0) } ?? "") + ".")
        }
    }
}

struct CookLog: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "log", abstract: "The cook log, newest first: one recipe's or everything.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name (all recipes when left out).") var recipe: String?
    @Option(help: "Entries per page (1-1000).") var limit = 50
    @Option(help: "Continue from the cursor a previous page printed.") var cursor: String?
    @Flag(help: "Every page, not just the first.") var all = false
    @Option(help: ArgumentHelp("Delete this log entry instead: its id as the log shows it, or the whole id.", valueName: "entry-id"))
    var delete: String?

    func validate() throws {
        guard (1...1_000).contains(limit) else { throw ValidationError("--limit must be 1 to 1000; got \(limit)") }
        if let delete, UUID(uuidString: delete) == nil, !Output.looksLikeShortID(delete) {
            throw ValidationError("--delete needs a log entry's id as `recipes log` shows it (8 hex digits) or its whole id; got \(delete)")
        }
    }

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            if let delete {
                let entry = try await Self.resolveEntry(delete, client)
                let result = try await client.call(CookLogOps.Delete.self, ByID(id: entry.id))
                if connection.json { return try Output.json(result) }
                let which = entry.recipeName.map { " of \"\($0)\"" } ?? ""
                return print(result.deleted ? "Deleted the log entry\(which)." : "That log entry\(which) was already gone.")
            }
            let id = try await recipe.asyncMap { try await RecipeReference.resolve($0, using: client) }
            let (entries, next) = try await readPages(after: cursor, all: all) { after in
                do {
                    let page = try await client.call(CookLogOps.List.self, .init(recipeID: id, limit: limit, after: after))
                    return (page.entries, page.next)
                } catch let error as ServiceError where error.code == .invalidArgument {
                    // The limit is checked before anything is sent: what the storage refused is the cursor given.
                    guard let cursor, after == cursor else { throw error }
                    throw CLIError("--cursor \"\(cursor.prefix(80))\" is not one recipes log printed; copy it from the \"More:\" line "
                        + "of the page before, or leave --cursor out for the newest entries", status: ExitStatus.of(error.code))
                }
            }
            let log = CookLogOps.List.Response(entries: entries, next: next)
            if connection.json { return try Output.json(log) }
            if log.entries.isEmpty { return print(cursor == nil ? "Nothing cooked yet." : "Nothing older.") }
            let servings = log.entries.contains { $0.servings != nil }
            Output.table(["ID", "DATE", "RECIPE"] + (servings ? ["SERVINGS"] : []) + ["RATING", "NOTE"], log.entries.map { entry in
                [Output.shortID(entry.id), Output.date(entry.cookedAt), entry.recipeName + (entry.recipeID == nil ? " (deleted)" : "")]
                    + (servings ? [entry.servings.map(Scaling.format) ?? ""] : [])
                    + [entry.rating.map(Output.stars) ?? "", entry.note ?? ""]
            })
            if let next = log.next {
                print(Output.dim("More: " + ListRecipes.nextPageCommand(Array(CommandLine.arguments.dropFirst()), cursor: next)))
            }
        }
    }

    /// The entry `reference` names: a whole id, or the short id the log shows (looked for in the whole log).
    static func resolveEntry(_ reference: String, _ client: MessageClient) async throws -> (id: UUID, recipeName: String?) {
        let trimmed = reference.trimmingCharacters(in: .whitespaces)
        if let id = UUID(uuidString: trimmed) { return (id, nil) }
        let entries = try await readAllPages { after in
            let page = try await client.call(CookLogOps.List.self, .init(recipeID: nil, limit: 1_000, after: after))
            return (page.entries, page.next)
        }
        let matches = entries.filter { Output.isShortID(trimmed, of: $0.id) }
        let entry = try Output.onlyMatch(matches, none: "no log entry \(trimmed); `recipes log` shows each entry's id") {
            "\"\(trimmed)\" is part of \($0) log entries' ids; give more of it (or the whole id, from --json)"
        }
        return (entry.id, entry.recipeName)
    }
}
