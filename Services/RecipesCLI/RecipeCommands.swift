import ArgumentParser
import Foundation
import Messaging
import RecipeMigration
import RecipeModel
import RecipeProtocol

struct ListRecipes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List recipes, a page at a time.")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Only this cuisine.") var cuisine: String?
    @Option(help: "Only this category.") var category: String?
    @Option(help: ArgumentHelp("Only recipes from this book (title, id or short id).", valueName: "book")) var book: String?
    @Flag(name: [.long, .customLong("favorite")], help: "Only favourites.") var favorites = false
    @Option(help: "Only this origin: starter, custom, imported, conflictedCopy.") var origin: RecipeOrigin?
    @Option(help: "Sort by name, createdAt (or created), updatedAt (or updated), rating or totalTime (or time).") var sort: RecipeSort = .name
    @Flag(help: "Largest first.") var descending = false
    @Option(help: "Recipes per page (1-200).") var limit = 50
    @Option(help: "Continue from the cursor a previous page printed.") var cursor: String?
    @Flag(help: "Every page, not just the first.") var all = false

    func validate() throws {
        guard (1...RecipeListQuery.maxLimit).contains(limit) else { throw ValidationError("--limit must be 1 to 200; got \(limit)") }
    }

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            let bookID = try await book.asyncMap { try await resolveBook($0, client) }
            var query = RecipeListQuery(cuisine: cuisine, category: category, bookID: bookID,
                                        favorite: favorites ? true : nil, origin: origin, sort: sort, descending: descending,
                                        limit: limit, cursor: cursor)
            var recipes: [RecipeSummary] = []
            var next: String?
            repeat {
                let page: RecipePage
                do {
                    page = try await client.call(RecipeOps.List.self, query)
                } catch let error as ServiceError where error.code == .invalidArgument {
                    // The limit and filters are checked before anything is sent: what the storage refused is the cursor given.
                    guard let cursor, query.cursor == cursor else { throw error }
                    let why = error.message.contains("sorted another way")
                        ? "belongs to a list in another order; give the --sort and --descending of the command that printed it (the \"More:\" line has them)"
                        : "is not one recipes list printed; copy it from the \"More:\" line of the page before, or leave --cursor out for the first page"
                    throw CLIError("--cursor \"\(cursor.prefix(80))\" \(why)", status: ExitStatus.of(error.code))
                }
                recipes += page.recipes
                next = page.nextCursor
                query.cursor = next
            } while all && next != nil
            if connection.json { return try Output.json(RecipePage(recipes: recipes, nextCursor: next)) }
            if recipes.isEmpty { return print("No recipes.") }
            Output.table(["ID", "NAME", "CUISINE", "CATEGORY", "TIME", "RATING", ""], recipes.map {
                [Output.shortID($0.id), $0.name, $0.recipeCuisine ?? "", $0.recipeCategory ?? "", Output.minutes($0.totalMinutes),
                 Output.stars($0.rating), ($0.isFavorite ? "♥" : "") + ($0.origin == .starter ? " starter" : "")]
            })
            if let next { print(Output.dim("More: " + Self.nextPageCommand(Array(CommandLine.arguments.dropFirst()), cursor: next))) }
        }
    }
}

extension ListRecipes {
    /// The command for the next page: the one given, with its filters and order (a cursor belongs to them), and the
    /// cursor in place of any given before. Words a shell would split are quoted.
    static func nextPageCommand(_ arguments: [String], cursor: String) -> String {
        var kept: [String] = []
        var skipNext = false
        for argument in arguments {
            if skipNext { skipNext = false; continue }
            if argument == "--cursor" { skipNext = true; continue }
            if argument.hasPrefix("--cursor=") || argument == "--all" { continue }
            kept.append(argument)
        }
        return ShellWords.command(kept + ["--cursor", cursor])
    }
}

struct ShowRecipe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show a recipe: ingredients, steps, photos, cook history.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Option(help: "Show quantities for this many servings, 0.01 to 10000.") var servings: Double?

    func validate() throws { try NumberOptions.servings(servings) }

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            let detail = try await client.call(RecipeOps.Get.self, .init(id: id, servings: servings))
            if connection.json { return try Output.json(detail) }
            let r = detail.recipe
            print(Output.bold(r.name) + (r.isFavorite ? "  ♥" : "") + (r.rating > 0 ? "  " + Output.stars(r.rating) : ""))
            let facts = [r.recipeCuisine, r.recipeCategory, Output.yield(r),
                         r.prepMinutes.map { "prep " + Output.minutes($0) }, r.cookMinutes.map { "cook " + Output.minutes($0) },
                         r.totalMinutes.map { "total " + Output.minutes($0) }].compactMap { $0 }
            if !facts.isEmpty { print(facts.joined(separator: " · ")) }
            if let author = r.author { print("By \(author)") }
            if let bookID = r.bookID, let book = try? await client.call(BookOps.Get.self, .init(id: bookID, limit: 0)).book {
                print("From \"\(book.title)\"" + (r.sourcePageNumber.map { ", p. \($0)" } ?? ""))
            }
            if let website = r.website { print("From \(website)") }
            if let description = r.description { print("\n\(description)") }
            print("\n" + Output.bold("Ingredients") + (detail.scaledServings.map { " (for \(Output.servings($0)))" } ?? ""))
            let lines = detail.scaledIngredients.map { $0.map(Output.scaled) } ?? r.ingredients.map(\.text)
            for (index, line) in lines.enumerated() { print(String(format: "%3d. ", index + 1) + line) }
            print("\n" + Output.bold("Steps"))
            var section: String?
            for (index, step) in r.instructions.enumerated() {
                if step.section != section {
                    section = step.section
                    if let name = section { print("\n  " + Output.bold(name)) }
                }
                if let title = step.title {
                    print(String(format: "%3d. ", index + 1) + Output.bold(title))
                    print("     " + step.text)
                } else {
                    print(String(format: "%3d. ", index + 1) + step.text)
                }
            }
            if let notes = r.notes { print("\n" + Output.bold("Notes") + "\n" + notes) }
            if !r.photos.isEmpty {
                let bytes = r.photos.reduce(0) { $0 + $1.byteCount }
                print("\nPhotos: \(r.photos.count) (\(ImageKind.formatBytes(bytes))) — recipes photo get \(Output.shortID(r.id)) N -o FILE")
            }
            print("\n" + (detail.timesCooked == 0 ? "Not cooked yet."
                : "Cooked \(Output.count(detail.timesCooked, "time")), last on \(detail.lastCookedAt.map(Output.date) ?? "?")."))
            print(Output.dim("id \(r.id.uuidString.lowercased()) · version \(r.version) · \(r.origin.rawValue)"))
        }
    }
}

struct SearchRecipes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "search", abstract: "Search names, descriptions, ingredients, keywords and notes.")
    @OptionGroup var connection: ConnectionOptions
    // Every word not an option of the command is a word of the search, "-pecan" too.
    @Argument(parsing: .allUnrecognized,
              help: "Words to look for; each matches as a prefix. Words joined by OR are alternatives (rice OR noodles); a word after - leaves out the recipes that have it (pie -pecan).")
    var text: [String]
    @Option(help: "At most this many results (1-200).") var limit = 20

    func validate() throws {
        guard !text.joined().trimmingCharacters(in: .whitespaces).isEmpty else { throw ValidationError("give some words to search for") }
        // A word after "--" is a mistyped option (--limt 5), not a word to leave out: said, not searched for.
        if let option = text.first(where: { $0.hasPrefix("--") }) {
            throw ValidationError("search has no option \(option); it takes --limit (1-200), --json and the connection options (recipes search --help), "
                                  + "and words to look for: rice OR noodles, pie -pecan")
        }
        guard (1...200).contains(limit) else { throw ValidationError("--limit must be 1 to 200; got \(limit)") }
    }

    func run() async throws {
        try await connection.show {
            return try await connection.storageClient().call(RecipeOps.Search.self, .init(text: text.joined(separator: " "), limit: limit))
        } text: { result in
            if result.hits.isEmpty { return print("No recipe matches \"\(text.joined(separator: " "))\".") }
            Output.table(["ID", "NAME", "CUISINE", "TIME"], result.hits.map {
                [Output.shortID($0.recipe.id), $0.recipe.name, $0.recipe.recipeCuisine ?? "", Output.minutes($0.recipe.totalMinutes)]
            })
        }
    }
}

struct AddRecipe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a recipe from flags, or from a JSON file (- for standard input).",
        discussion: "The file holds a recipe draft as docs/PROTOCOL.md describes it, or a schema.org Recipe in JSON-LD.")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: ArgumentHelp("A JSON or JSON-LD file; - reads standard input.", valueName: "file")) var file: String?
    @Option(help: "The name.") var name: String?
    @Option(help: "A short description.") var description: String?
    @Option(name: .customLong("ingredient"), help: "An ingredient line as written; repeat for each.") var ingredients: [String] = []
    @Option(name: .customLong("step"), help: "A step; repeat for each, in order.") var steps: [String] = []
    @Option(help: "Servings it makes, 0.01 to 10000.") var servings: Double?
    @Option(help: ArgumentHelp("Preparation time: 15m, 1h30m, 2d, 90 or PT15M.", valueName: "duration")) var prep: String?
    @Option(help: ArgumentHelp("Cooking time.", valueName: "duration")) var cook: String?
    @Option(help: ArgumentHelp("Total time, when it is more than preparation and cooking (rising, chilling); left out, it is their sum.",
                               valueName: "duration")) var total: String?
    @Option(help: "Cuisine, such as Italian.") var cuisine: String?
    @Option(help: "Category, such as Dinner.") var category: String?
    @Option(name: .customLong("keyword"), help: "A keyword; repeat for each.") var keywords: [String] = []
    @Option(help: "Your notes.") var notes: String?
    @Option(help: "The page it came from.") var website: String?
    @Option(help: "Who wrote it.") var author: String?
    @Option(name: .customLong("yield"), help: ArgumentHelp("What it makes, as written: \"8 slices\", \"1 loaf\".", valueName: "text"))
    var yield: String?
    @Option(help: ArgumentHelp("File it in a book (title, id or short id).", valueName: "book")) var book: String?
    @Option(help: ArgumentHelp("The page it is on in that book (with --book).", valueName: "number")) var page: Int?
    @Flag(help: "Mark it a favourite.") var favorite = false

    func validate() throws {
        guard (file == nil) != (name == nil) else { throw ValidationError("give either --file or --name (with --ingredient and --step flags)") }
        try NumberOptions.servings(servings)
        if page != nil && book == nil { throw ValidationError("--page goes with --book: the page of that book the recipe is on") }
        if let page, !ValueRanges.pageNumber.contains(page) {
            throw ValidationError("--page must be 1 to \(ValueRanges.pageNumber.upperBound); got \(page)")
        }
    }

    func draft() throws -> RecipeDraft {
        var draft: RecipeDraft
        if let file {
            let data = try readFile(file, what: "a recipe file", standardInput: true)
            draft = try DraftFile.decode(data, source: file == "-" ? "standard input" : file)
        } else {
            draft = RecipeDraft(name: name ?? "", description: description, ingredients: ingredients.map { .init(text: $0) },
                                instructions: steps.map { .init(text: $0) }, servings: servings, recipeCuisine: cuisine, keywords: keywords,
                                notes: notes, website: website, sourceType: website == nil ? .manual : .url, isFavorite: favorite)
            draft.recipeCategory = category
            draft.author = author
            draft.recipeYield = yield
            if book != nil, website == nil { draft.sourceType = .book }
            draft.sourcePageNumber = page
            draft.prepTime = try prep.map(isoDuration)
            draft.cookTime = try cook.map(isoDuration)
            draft.totalTime = try total.map(isoDuration)
        }
        try draft.validate()
        return draft
    }

    func run() async throws {
        try await connection.show {
            var draft = try draft()
            let client = try connection.storageClient()
            if let book { draft.bookID = try await resolveBook(book, client) }
            return try await client.call(RecipeOps.Create.self, .init(id: UUID.timeOrdered(), recipe: draft))
        } text: { created in
            print("Added \"\(created.recipe.name)\" (\(Output.shortID(created.recipe.id))) with \(Output.count(created.recipe.ingredients.count, "ingredient")) and \(Output.count(created.recipe.instructions.count, "step")).")
        }
    }
}

/// The bytes of a file named on the command line (or found in a folder named there): a regular file of at most
/// `limit` bytes (one frame, unless told), `what` naming it in a refusal. `standardInput`: `-` reads standard
/// input (only where the option says so: a file named "-" in a stranger's export is a file, not the terminal).
func readFile(_ path: String, what: String, atMost limit: Int = WireProtocol.defaultMaxFrameBytes, standardInput: Bool = false) throws -> Data {
    do {
        if standardInput && path == "-" { return try LocalFile.readStandardInput(atMost: limit, what: what) }
        return try LocalFile.read(path, atMost: limit, what: what)
    } catch {
        throw CLIError(error.message, status: error.missing ? ExitStatus.notFound : ExitStatus.refused)
    }
}

struct DeleteRecipe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a recipe (its cook log stays).")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Flag(help: "Do not ask.") var yes = false

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            let name = try await client.call(RecipeOps.Get.self, .init(id: id)).recipe.name
            if !yes {
                guard isatty(STDIN_FILENO) == 1 else { throw CLIError("not deleting \"\(name)\" without --yes (no terminal to ask on)") }
                print("Delete \"\(name)\"? [y/N] ", terminator: "")
                guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else { return print("Kept.") }
            }
            let result = try await client.call(RecipeOps.Delete.self, ByID(id: id))
            if connection.json { return try Output.json(result) }
            print(result.deleted ? "Deleted \"\(name)\"." : "\"\(name)\" was already gone.")
        }
    }
}

struct DuplicateRecipe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "duplicate", abstract: "Make your own copy of a recipe (the way to change a starter).")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Option(help: "The copy's name.") var name: String?

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            let copy = try await client.call(RecipeOps.Duplicate.self, .init(id: id, newID: UUID.timeOrdered(), name: name))
            if connection.json { return try Output.json(copy) }
            print("Copied as \"\(copy.name)\" (\(Output.shortID(copy.id))).")
        }
    }
}

struct FavoriteRecipe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "favorite", abstract: "Mark a recipe as a favourite (--off to unmark).")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Flag(help: "Unmark it.") var off = false

    func run() async throws {
        try await connection.show {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            return try await client.call(RecipeOps.Favorite.self, .init(id: id, isFavorite: !off))
        } text: { updated in
            print(updated.isFavorite ? "♥ \"\(updated.name)\" is a favourite." : "\"\(updated.name)\" is no longer a favourite.")
        }
    }
}

struct RateRecipe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rate", abstract: "Rate a recipe 1 to 5 (0 clears the rating).")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Argument(help: "0 to 5.") var rating: Int

    func validate() throws {
        guard (0...5).contains(rating) else { throw ValidationError("the rating must be 0 (none) to 5; got \(rating)") }
    }

    func run() async throws {
        try await connection.show {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            return try await client.call(RecipeOps.Rate.self, .init(id: id, rating: rating))
        } text: { updated in
            print(rating == 0 ? "\"\(updated.name)\" is unrated." : "\"\(updated.name)\" rated \(Output.stars(rating)).")
        }
    }
}

extension RecipeOrigin: ExpressibleByArgument {}
extension RecipeSort: ExpressibleByArgument {
    /// The protocol's names, any case, and the words a person would use: time, created, updated.
    public init?(argument: String) {
        let word = argument.lowercased()
        let aliases: [String: RecipeSort] = ["time": .totalTime, "total": .totalTime, "created": .createdAt, "updated": .updatedAt]
        guard let sort = aliases[word] ?? RecipeSort.allCases.first(where: { $0.rawValue.lowercased() == word }) else { return nil }
        self = sort
    }
}
