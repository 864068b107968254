import ArgumentParser
import Foundation
import Messaging
import RecipeModel
import RecipeProtocol

/// What `recipes edit` opens in the editor: the recipe as a draft, and the version it was at.
struct EditDocument: Codable {
    /// Reads one as written by a person: a field the recipe does not have is refused, naming it.
    static var decoder: JSONDecoder {
        let decoder = WireCodec.makeDecoder()
        decoder.userInfo[RecipeDraft.checksFields] = true
        return decoder
    }

    /// Leave as it is: it tells the service which version your edit is based on.
    var version: Int
    var recipe: RecipeDraft
}

struct EditRecipe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit", abstract: "Change a recipe with flags, or in $EDITOR as JSON.",
        discussion: """
            With field flags, only those fields change. With none, the recipe opens in $VISUAL or $EDITOR as JSON; \
            save and quit to send it back. If someone changed the recipe meanwhile, nothing is overwritten: \
            the edit is refused as a conflict (exit code 75) and you can run edit again. An edit that is refused is kept \
            in a file, which --file sends again once mended.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Recipe id, short id or name.") var recipe: String
    @Option(help: ArgumentHelp("The whole recipe from a file: an edit kept from the editor ({version, recipe}), or a recipe draft "
                               + "or schema.org JSON-LD as add takes (- reads standard input).", valueName: "file")) var file: String?
    @Option(help: "A new name.") var name: String?
    @Option(help: "A new description; \"\" clears it.") var description: String?
    @Option(name: .customLong("ingredient"), help: "Replace the ingredients; repeat for each line.") var ingredients: [String] = []
    @Option(name: .customLong("add-ingredient"), help: "Add an ingredient line at the end; repeatable.") var addIngredients: [String] = []
    @Option(name: .customLong("step"), help: "Replace the steps; repeat for each.") var steps: [String] = []
    @Option(help: "Servings it makes, 0.01 to 10000.") var servings: Double?
    @Option(help: ArgumentHelp("Preparation time: 15m, 1h30m, 2d, 90 or PT15M; \"\" clears it.", valueName: "duration")) var prep: String?
    @Option(help: ArgumentHelp("Cooking time; \"\" clears it.", valueName: "duration")) var cook: String?
    @Option(help: ArgumentHelp("Total time, when it is more than preparation and cooking; \"\" clears it (the total is then their sum).",
                               valueName: "duration")) var total: String?
    @Option(help: "Cuisine; \"\" clears it.") var cuisine: String?
    @Option(help: "Category; \"\" clears it.") var category: String?
    @Option(name: .customLong("keyword"), help: "Replace the keywords; repeat for each.") var keywords: [String] = []
    @Option(help: "Your notes; \"\" clears them.") var notes: String?
    @Option(help: "The page it came from; \"\" clears it.") var website: String?
    @Option(help: "Who wrote it; \"\" clears it.") var author: String?
    @Option(name: .customLong("yield"), help: ArgumentHelp("What it makes, as written (\"8 slices\"); \"\" clears it.", valueName: "text"))
    var yield: String?
    @Option(help: ArgumentHelp("File it in a book (title, id or short id); \"\" takes it out of its book.", valueName: "book")) var book: String?
    @Option(help: ArgumentHelp("The page it is on in its book; \"\" clears it.", valueName: "number")) var page: String?

    var hasFieldFlags: Bool {
        name != nil || description != nil || !ingredients.isEmpty || !addIngredients.isEmpty || !steps.isEmpty || servings != nil
            || prep != nil || cook != nil || total != nil || cuisine != nil || category != nil || !keywords.isEmpty || notes != nil || website != nil
            || author != nil || yield != nil || book != nil || page != nil
    }

    func validate() throws {
        if file != nil && hasFieldFlags { throw ValidationError("give either --file or field flags such as --name, not both") }
        try NumberOptions.servings(servings)
        if let page, !page.isEmpty {
            guard let number = Int(page), ValueRanges.pageNumber.contains(number) else {
                throw ValidationError("--page must be a page number, 1 to \(ValueRanges.pageNumber.upperBound), or \"\" to clear it; got \(page)")
            }
            if book == "" { throw ValidationError("--page goes with a book; --book \"\" takes the recipe out of its book") }
        }
    }

    func run() async throws {
        var editedFile: URL?
        try await reportingFailures {
            let client = try connection.storageClient()
            let id = try await RecipeReference.resolve(recipe, using: client)
            let current = try await client.call(RecipeOps.Get.self, .init(id: id)).recipe
            var document = EditDocument(version: current.version, recipe: RecipeDraft(current))
            if let file {
                let data = try readFile(file, what: "the recipe file", standardInput: true)
                if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], object["version"] != nil, object["recipe"] != nil {
                    // An edit kept from the editor: its version says what it was based on, and a change made since is a conflict.
                    do {
                        document = try EditDocument.decoder.decode(EditDocument.self, from: data)
                    } catch let error as DecodingError {
                        throw CLIError("\(file) is not an edit of a recipe: \(error.wireDescription)")
                    }
                } else {
                    document.recipe = try DraftFile.decode(data, source: file)
                }
            } else if hasFieldFlags {
                try apply(to: &document.recipe)
                if let book { document.recipe.bookID = book.isEmpty ? nil : try await resolveBook(book, client) }
                if let page { document.recipe.sourcePageNumber = Int(page) }
                if document.recipe.bookID == nil {
                    // Out of its book (or never in one): no page of it, and not "from a book".
                    if page.map({ !$0.isEmpty }) == true {
                        throw CLIError("--page is the page of the recipe's book, and \"\(current.name)\" is in no book; give --book too",
                                       status: ExitStatus.usage)
                    }
                    document.recipe.sourcePageNumber = nil
                    if document.recipe.sourceType == .book { document.recipe.sourceType = document.recipe.website == nil ? .manual : .url }
                } else if book.map({ !$0.isEmpty }) == true, document.recipe.website == nil {
                    document.recipe.sourceType = .book
                }
            } else {
                guard let (edited, file) = try openInEditor(document, keeping: Set(current.keywords)) else { return print("No changes.") }
                document = edited
                editedFile = file
            }
            try document.recipe.validate(keeping: Set(current.keywords), total: false) // the storage holds it to the bytes the recipe has
            let updated: Recipe
            do {
                updated = try await client.call(RecipeOps.Update.self, .init(id: id, expectedVersion: document.version, recipe: document.recipe))
            } catch {
                // Changed meanwhile, refused, or not reached: what the person wrote in the editor is not thrown away.
                if let editedFile { printNote("your edit is kept in \(editedFile.path); `recipes edit … --file \(editedFile.path)` sends it again") }
                throw error
            }
            if let editedFile { try? FileManager.default.removeItem(at: editedFile) }
            if connection.json { return try Output.json(updated) }
            print("Saved \"\(updated.name)\" (version \(updated.version)).")
        }
    }

    private func apply(to draft: inout RecipeDraft) throws {
        if let name { draft.name = name }
        if let description { draft.description = description.isEmpty ? nil : description }
        if !ingredients.isEmpty { draft.ingredients = ingredients.map { .init(text: $0) } }
        draft.ingredients += addIngredients.map { .init(text: $0) }
        if !steps.isEmpty { draft.instructions = steps.map { .init(text: $0) } }
        if let servings { draft.servings = servings }
        func duration(_ text: String) throws -> String? {
            text.trimmingCharacters(in: .whitespaces).isEmpty ? nil : try isoDuration(text)
        }
        if let prep { draft.prepTime = try duration(prep) }
        if let cook { draft.cookTime = try duration(cook) }
        if let total { draft.totalTime = try duration(total) }
        if let cuisine { draft.recipeCuisine = cuisine.isEmpty ? nil : cuisine }
        if let category { draft.recipeCategory = category.isEmpty ? nil : category }
        if !keywords.isEmpty { draft.keywords = keywords }
        if let notes { draft.notes = notes.isEmpty ? nil : notes }
        if let website { draft.website = website.isEmpty ? nil : website }
        if let author { draft.author = author.isEmpty ? nil : author }
        if let yield { draft.recipeYield = yield.isEmpty ? nil : yield }
    }

    /// Writes the document to a temporary file, runs the editor on it, and reads it back;
    /// `nil` when nothing changed.
    /// The recipe as edited in $VISUAL or $EDITOR, and the file that holds it (nil: left as it was). An edit that is not a
    /// recipe any more, or breaks a rule, is opened again when a person is at the terminal to say so; otherwise it is
    /// refused, and the file kept (its path in the message) so nothing written in the editor is lost.
    private func openInEditor(_ document: EditDocument, keeping kept: Set<String>) throws -> (EditDocument, URL)? {
        guard let editor = environment("VISUAL") ?? environment("EDITOR") else {
            throw CLIError("no editor: set VISUAL or EDITOR, or change fields with flags such as --name (see recipes edit --help)", status: ExitStatus.usage)
        }
        let encoder = WireCodec.makeEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let original = try encoder.encode(document)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("recipe-\(UUID().uuidString.prefix(8)).json")
        try original.write(to: file)
        var keep = false
        defer { if !keep { try? FileManager.default.removeItem(at: file) } }
        while true {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "\(editor) \"$1\"", "sh", file.path]
            try process.run()
            process.waitUntilExit()
            let edited = try readFile(file.path, what: "the edited recipe")
            guard process.terminationStatus == 0 else {
                keep = edited != original
                throw CLIError("the editor (\(editor)) exited with status \(process.terminationStatus); nothing was changed"
                               + (keep ? ". Your edit is kept in \(file.path)" : ""), status: 1)
            }
            if edited == original { return nil }
            let problem: String
            do {
                let document = try EditDocument.decoder.decode(EditDocument.self, from: edited)
                do {
                    try document.recipe.validate(keeping: kept, total: false)
                    keep = true
                    return (document, file)
                } catch {
                    problem = error.message
                }
            } catch let error as DecodingError {
                problem = "the edited file is not a recipe any more: \(error.wireDescription)"
            }
            if isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1 {
                FileHandle.standardError.write(Data("recipes: \(TerminalText.safe(problem)). Edit again? [Y/n] ".utf8))
                if let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased(), answer.isEmpty || answer.hasPrefix("y") { continue }
            }
            keep = true
            throw CLIError("\(problem); nothing was changed. Your edit is kept in \(file.path): mend it there and send it with "
                           + "`recipes edit \(recipe.contains(" ") ? "\"\(recipe)\"" : recipe) --file \(file.path)`")
        }
    }
}
