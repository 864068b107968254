import Foundation
import Messaging
import RecipeModel
import RecipeProtocol
import TestImages
import Testing
import TestRecipes
import TestScratch

/// Runs the built `recipes` binary against `endpoint`; returns its exit status and what it printed.
func recipes(_ arguments: [String], storage endpoint: String, environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
    let process = try ServiceProcess("recipes", arguments, environment: ["RECIPES_STORAGE": endpoint, "NO_COLOR": "1"].merging(environment) { $1 })
    guard let status = try await process.waitForExit(timeout: .seconds(60)) else {
        throw ProcessTestError("recipes \(arguments.joined(separator: " ")) did not finish; printed:\n\(process.printed)")
    }
    return (status, process.printed)
}

/// A recipe-storage process with the samples, on ephemeral ports and a temporary data folder.
func withStorageProcess<T>(_ body: (String) async throws -> T) async throws -> T {
    let service = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*",
                                                         "--data", temporaryDataFolder(), "--seed-samples"])
    let endpoint = try await service.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
    let result = try await body(endpoint)
    _ = try await service.stop()
    return result
}

@Suite("The recipes CLI against a real recipe-storage")
struct CLITests {
    @Test("import-dir passes over a recipe or photo it cannot take, says which and why, and imports the rest")
    func importDirPassesOverWhatItCannotTake() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-importdir-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        func recipe(_ entry: String, _ json: String, photos: [String: Data] = [:]) throws {
            let directory = folder.appendingPathComponent(entry)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(json.utf8).write(to: directory.appendingPathComponent("recipe.json"))
            for (name, bytes) in photos { try bytes.write(to: directory.appendingPathComponent(name)) }
        }
        func jpeg(_ mark: UInt8) -> Data { Data([0xFF, 0xD8, 0xFF, 0xE0, mark, 1, 2, 3]) }
        let eleven = (1...11).map { "p\($0).jpg" }
        try recipe("A soup", #"{"name": "Leek soup", "recipeIngredient": ["2 leeks"], "image": "full.jpg"}"#, photos: ["full.jpg": jpeg(1)])
        try recipe("B broken", "{ not json")
        try recipe("C no photo", #"{"name": "Leek tart", "image": ["full.jpg", "side.jpg"]}"#, photos: ["side.jpg": jpeg(2)])
        try recipe("D device", #"{"name": "Leek pie", "image": "full.jpg"}"#)
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("D device/full.jpg").path, withDestinationPath: "/dev/zero")
        try recipe("E eleven", #"{"name": "Leek gratin", "image": [\#(eleven.map { "\"\($0)\"" }.joined(separator: ","))]}"#,
                   photos: Dictionary(uniqueKeysWithValues: eleven.enumerated().map { ($0.element, jpeg(UInt8(10 + $0.offset))) }))
        try await withStorageProcess { storage async throws in
            let run = try await recipes(["import-dir", folder.path], storage: storage)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("Imported 4 new recipes (0 were already there) and 12 photos; 1 could not be imported:"), "\(run.output)")
            #expect(run.output.contains("✗ B broken: B broken/recipe.json"), "\(run.output)")
            #expect(run.output.contains("photo left out: C no photo/full.jpg:") && run.output.contains("does not exist"), "\(run.output)")
            #expect(run.output.contains("photo left out: D device/full.jpg:") && run.output.contains("is not a regular file"), "\(run.output)")
            #expect(run.output.contains("photo left out: E eleven/p11.jpg:"), "\(run.output)")
            for (name, count) in [("Leek soup", 1), ("Leek tart", 1), ("Leek pie", 0), ("Leek gratin", 10)] {
                #expect(try await details(name, storage).recipe.photos.count == count, "\(name)")
            }
            let again = try await recipes(["import-dir", folder.path, "--json"], storage: storage)
            // A note on stderr (no worker: photos go as they are) comes before the JSON.
            let json = again.output.range(of: "\n{").map { String(again.output[$0.lowerBound...]) } ?? again.output
            let report = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
            #expect(report?["created"] as? Int == 0 && report?["alreadyThere"] as? Int == 4, "\(again.output)")
            #expect((report?["failed"] as? [[String: Any]])?.first?["entry"] as? String == "B broken", "\(again.output)")
        }
    }

    @Test("recipes and books made within one minute show short ids apart, and each short id finds its own")
    func shortIDsWithinAMinute() async throws {
        try await withStorageProcess { storage async throws in
            // Made as `recipes add` makes them, at one moment (a loaded machine may take a minute over three adds).
            let client = try MessageClient(configuration: .init(endpoint: storage, serviceName: "storage"))
            let moment = Date()
            var ids: [String] = []
            for name in ["Leek soup", "Leek tart", "Leek gratin"] {
                let draft = RecipeDraft(name: name, ingredients: [.init(text: "2 leeks")])
                ids.append(try await client.call(RecipeOps.Create.self, .init(id: .timeOrdered(now: moment), recipe: draft)).recipe.id.uuidString)
            }
            #expect(Set(ids.map { $0.prefix(8) }).count == 1, "time-ordered ids of one moment start alike: \(ids)")
            let added = try await recipes(["add", "--name", "Leek pie", "--json"], storage: storage)
            let pie = try WireCodec.makeDecoder().decode(RecipeOps.Create.Response.self, from: Data(added.output.utf8)).recipe.id
            #expect(pie.uuidString.dropFirst(14).first == "7", "the CLI makes time-ordered ids")
            #expect(try await recipes(["show", pie.shortText], storage: storage).output.contains("Leek pie"))
            let listed = try await recipes(["search", "leek"], storage: storage)
            // A mistyped option is said, not searched for (it used to be taken as a word: "No recipe matches").
            let mistyped = try await recipes(["search", "leek", "--limt", "5"], storage: storage)
            #expect(mistyped.status == 64 && mistyped.output.contains("search has no option --limt; it takes --limit (1-200)"), "\(mistyped.output)")
            for id in ids {
                let short = String(id.suffix(8)).lowercased()
                #expect(listed.output.contains(short), "\(listed.output)")
                let shown = try await recipes(["show", short], storage: storage)
                #expect(shown.status == 0, "\(short): \(shown.output)")
            }
            var names: [String] = []
            for id in ids { names.append(try await recipes(["show", String(id.suffix(8))], storage: storage).output) }
            #expect(names[0].contains("Leek soup") && names[1].contains("Leek tart") && names[2].contains("Leek gratin"))
            // The start of an id is taken too, and one that several share says so.
            #expect(try await recipes(["show", String(ids[1].prefix(23))], storage: storage).output.contains("Leek tart"))
            let shared = try await recipes(["show", String(ids[0].prefix(8))], storage: storage)
            #expect(shared.status == 65 && (shared.output.contains("is part of 3 recipe ids (") || shared.output.contains("is part of 4 recipe ids ("))
                    && shared.output.contains("Leek soup") && shared.output.contains("); give more of it"), "\(shared.output)")

            for title in ["Soups", "Tarts"] { #expect(try await recipes(["books", "add", title], storage: storage).status == 0) }
            let books = try await recipes(["books", "--json"], storage: storage)
            let bookIDs = try WireCodec.makeDecoder().decode(BookOps.List.Response.self, from: Data(books.output.utf8)).books
                .filter { ["Soups", "Tarts"].contains($0.book.title) }.map(\.book)
            for book in bookIDs {
                let shown = try await recipes(["books", "show", String(book.id.uuidString.suffix(8)).lowercased()], storage: storage)
                #expect(shown.status == 0 && shown.output.contains(book.title), "\(shown.output)")
            }
            // A second book of a title: made, with a note naming both; the title alone then names neither.
            let again = try await recipes(["books", "add", "soups", "--author", "Someone"], storage: storage)
            #expect(again.status == 0 && again.output.contains("you now have 2 books called \"soups\"") && again.output.contains("soups, Someone"),
                    "\(again.output)")
            let either = try await recipes(["books", "show", "Soups"], storage: storage)
            #expect(either.status == 65 && either.output.contains("\"Soups\" could be 2 books (") && either.output.contains("; use an id"), "\(either.output)")
            // A short id pasted with spaces around it names its book; one of no book says so.
            let pasted = try await recipes(["books", "show", " \(String(bookIDs[0].id.uuidString.suffix(8)).lowercased()) "], storage: storage)
            #expect(pasted.status == 0 && pasted.output.contains(bookIDs[0].title), "\(pasted.output)")
            let none = try await recipes(["books", "show", "ffff0000"], storage: storage)
            #expect(none.status == 66 && none.output.contains("no book is called \"ffff0000\"; see `recipes books`"), "\(none.output)")
        }
    }

    @Test("a recipe whose text holds terminal control sequences is shown with them as symbols: list, show, search and an error")
    func controlSequencesAreShownNotObeyed() async throws {
        try await withStorageProcess { storage async throws in
            // What a hostile page or client could store: the clipboard written (OSC 52), the screen cleared, a line overprinted.
            let name = "Soup\u{1B}]52;c;ZWNobyBoaQ==\u{7}\u{1B}[2J", step = "Stir.\rAll fine, nothing to see.\u{9B}2J"
            let client = try MessageClient(configuration: .init(endpoint: storage, serviceName: "storage"))
            let created = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(
                name: name, description: "Hot\u{1B}[8m hidden", instructions: [.init(text: step)], keywords: ["k\u{7}"])))
            #expect(created.recipe.name == name, "stored as sent")
            let short = created.recipe.id.shortText
            for arguments in [["list"], ["show", short], ["search", "soup"], ["show", "no such \u{1B}[2J recipe"]] {
                let run = try await recipes(arguments, storage: storage)
                let controls = run.output.unicodeScalars.filter { TerminalTextProbe.isControl($0) }
                #expect(controls.isEmpty, "\(arguments): \(run.output.debugDescription)")
                if arguments.count == 2, arguments[1] == short {
                    #expect(run.output.contains("Soup\u{241B}]52;c;ZWNobyBoaQ==\u{2407}\u{241B}[2J") && run.output.contains("Stir.\u{240D}All fine"), "\(run.output)")
                }
            }
            // The JSON output keeps the text exactly, escaped.
            let json = try await recipes(["show", short, "--json"], storage: storage)
            #expect(json.output.contains(#"Soup\u001b]52;c;ZWNobyBoaQ==\u0007\u001b[2J"#), "\(json.output)")
        }
    }

    @Test("a device, a link to one or a pipe given as a file is refused at once (exit 65), never read until memory runs out; standard input is bounded too")
    func filesThatAreNotFiles() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-notfiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let link = scratch.appendingPathComponent("IMG_0001.jpg").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/zero")
        let pipe = scratch.appendingPathComponent("recipe.json").path
        #expect(mkfifo(pipe, 0o600) == 0)
        try await withStorageProcess { storage async throws in
            for arguments in [["photo", "add", "egg fried rice", "/dev/zero", "--as-is"], ["photo", "add", "egg fried rice", link, "--as-is"],
                              ["add", "--file", pipe], ["import", "--html", "/dev/zero", "--url", "https://example.com/x"]] {
                let refused = try await recipes(arguments, storage: storage)
                #expect(refused.status == 65, "\(arguments): \(refused.output)")
                #expect(refused.output.contains("is not a regular file (a device, pipe or socket)"), "\(arguments): \(refused.output)")
            }
            let shown = try await recipes(["photo", "list", "egg fried rice"], storage: storage)
            #expect(shown.status == 0 && !shown.output.contains("1."), "\(shown.output)")
            // Standard input ("-") is read up to the same limit, and a recipe there is added.
            let cli = try ServiceProcess.executable("recipes")
            for (input, status, said) in [("head -c 20000000 /dev/zero", Int32(65), "standard input passed 16 MB"),
                                          ("printf '{\"name\": \"Stdin soup\"}'", Int32(0), "Added \"Stdin soup\"")] {
                let piped = try ServiceProcess(path: "/bin/sh", ["-c", "\(input) | \"$0\" add --file -", cli],
                                               environment: ["RECIPES_STORAGE": storage, "NO_COLOR": "1"])
                #expect(try await piped.waitForExit(timeout: .seconds(60)) == status, "\(piped.printed)")
                #expect(piped.printed.contains(said), "\(piped.printed)")
            }
        }
    }

    @Test("list, show (scaled), search, add from flags and from a JSON-LD file")
    func everyday() async throws {
        try await withStorageProcess { storage async throws in
            let list = try await recipes(["list", "--json"], storage: storage)
            #expect(list.status == 0)
            let page = try WireCodec.makeDecoder().decode(RecipePage.self, from: Data(list.output.utf8))
            #expect(page.recipes.count == 8 && page.recipes.allSatisfy { $0.origin == .starter })

            let shown = try await recipes(["show", "egg fried rice"], storage: storage)
            #expect(shown.status == 0)
            #expect(shown.output.contains("Egg Fried Rice") && shown.output.contains("From \"The Wok\", p. 89"))
            #expect(shown.output.contains("  1. 3 cups cooked rice, cold") && shown.output.contains("prep 10 min"))
            // A book: how many recipes it holds, the first --limit of them, and how to see the rest.
            let book = try await recipes(["books", "show", "The Wok", "--limit", "1"], storage: storage)
            #expect(book.status == 0 && book.output.contains("The Wok") && book.output.contains("(2 recipes)"), "\(book.output)")
            #expect(book.output.contains("Egg Fried Rice") && !book.output.contains("Chicken Stir-Fry"), "\(book.output)")
            #expect(book.output.contains("1 more: recipes books show ") && book.output.contains(" --all"), "\(book.output)")
            let whole = try await recipes(["books", "show", "The Wok", "--limit", "0", "--all"], storage: storage)
            #expect(whole.output.contains("Chicken Stir-Fry") && !whole.output.contains("more:"), "\(whole.output)")
            let badLimit = try await recipes(["books", "show", "The Wok", "--limit", "201"], storage: storage)
            #expect(badLimit.status == 64 && badLimit.output.contains("--limit must be 0 to 200; got 201"), "\(badLimit.output)")
            let shortID = String(SampleData_recipe5.prefix(8))
            let scaled = try await recipes(["show", shortID, "--servings", "4"], storage: storage)
            #expect(scaled.output.contains("(for 4 servings)") && scaled.output.contains("6 eggs, beaten"))
            // A range written with words scales as one amount, and the rest of the line stays as written.
            // Other amounts of the same food scale with it, words agree with the new number, and a can's size stays.
            let ranged = try await recipes(["add", "--name", "Brine", "--servings", "2", "--ingredient", "1 to 2 tsp salt",
                                            "--ingredient", "2 or 3 bay leaves", "--ingredient", "1 (14 oz) can beans",
                                            "--ingredient", "1 cup (240 ml) water", "--ingredient", "about 1 egg"], storage: storage)
            #expect(ranged.status == 0 && ranged.output.contains("with 5 ingredients and 0 steps"), "\(ranged.output)")
            let brine = try await recipes(["show", "Brine", "--servings", "4"], storage: storage)
            for line in ["2-4 tsp salt", "4-6 bay leaves", "2 (14 oz) cans beans", "2 cups (480 ml) water", "about 2 eggs"] {
                #expect(brine.output.contains(line), "\(line): \(brine.output)")
            }
            // A recipe from a cookbook: its book and page, author and yield, set and cleared by flags.
            let fromBook = try await recipes(["add", "--name", "Dal", "--book", "The Wok", "--page", "112", "--author", "Meera Sodha",
                                              "--yield", "4 bowls", "--ingredient", "1 cup lentils"], storage: storage)
            #expect(fromBook.status == 0, "\(fromBook.output)")
            let dal = try await recipes(["show", "Dal"], storage: storage)
            #expect(dal.output.contains("From \"The Wok\", p. 112") && dal.output.contains("By Meera Sodha") && dal.output.contains("4 bowls"), "\(dal.output)")
            #expect(try await recipes(["edit", "Dal", "--page", "113", "--yield", ""], storage: storage).status == 0)
            let moved = try await recipes(["show", "Dal", "--json"], storage: storage).output
            #expect(moved.contains("\"sourcePageNumber\" : 113") && !moved.contains("4 bowls") && moved.contains("\"sourceType\" : \"book\""), "\(moved)")
            #expect(try await recipes(["edit", "Dal", "--book", ""], storage: storage).status == 0)
            let unfiled = try await recipes(["show", "Dal", "--json"], storage: storage).output
            #expect(!unfiled.contains("sourcePageNumber") && unfiled.contains("\"sourceType\" : \"manual\""), "no page of no book: \(unfiled)")
            let noBook = try await recipes(["edit", "Dal", "--page", "5"], storage: storage)
            #expect(noBook.status == 64 && noBook.output.contains("is in no book; give --book too"), "\(noBook.output)")
            let pageAlone = try await recipes(["add", "--name", "X", "--page", "5"], storage: storage)
            #expect(pageAlone.status == 64 && pageAlone.output.contains("--page goes with --book"), "\(pageAlone.output)")

            // A name is found exactly, however many recipes rank above it in a search for its words, and a "-" in a name
            // is part of the name, not a word left out.
            for index in 1...22 {
                #expect(try await recipes(["add", "--name", "Stock stock stock stock \(index)"], storage: storage).status == 0)
            }
            #expect(try await recipes(["add", "--name", "Stock"], storage: storage).status == 0)
            #expect(try await recipes(["add", "--name", "Mac -n- Cheese"], storage: storage).status == 0)
            for name in ["stock", "mac -n- cheese"] {
                let found = try await recipes(["rate", name, "4"], storage: storage)
                #expect(found.status == 0, "\(name): \(found.output)")
            }
            #expect(try await recipes(["show", "Stock", "--json"], storage: storage).output.contains("\"rating\" : 4"))

            // A list of one book's recipes names the book as every other command does.
            let wok = try await recipes(["list", "--book", "the wok"], storage: storage)
            #expect(wok.status == 0 && wok.output.contains("Egg Fried Rice") && !wok.output.contains("Caesar Salad"), "\(wok.output)")
            // A cursor recipes list did not print, or one of a list in another order, is said in the CLI's words.
            let paged = try await recipes(["list", "--limit", "2"], storage: storage)
            let listMore = try #require(paged.output.split(separator: "\n").first { $0.hasPrefix("More: ") }, "\(paged.output)")
            let listCursor = try #require(listMore.components(separatedBy: "--cursor ").last).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
            #expect(try await recipes(["list", "--limit", "2", "--cursor", listCursor], storage: storage).status == 0)
            let otherOrder = try await recipes(["list", "--limit", "2", "--sort", "rating", "--cursor", listCursor], storage: storage)
            #expect(otherOrder.status == 65 && otherOrder.output.contains("belongs to a list in another order; give the --sort and --descending"),
                    "\(otherOrder.output)")
            let notOurs = try await recipes(["list", "--cursor", "not-a-cursor"], storage: storage)
            #expect(notOurs.status == 65 && notOurs.output.contains("--cursor \"not-a-cursor\" is not one recipes list printed"), "\(notOurs.output)")

            // The cook log shows each entry's id and the servings made; --delete takes the id it shows.
            #expect(try await recipes(["cooked", "Brine", "--servings", "3", "--note", "salty"], storage: storage).status == 0)
            let log = try await recipes(["log", "Brine"], storage: storage)
            #expect(log.output.contains("SERVINGS") && log.output.contains("salty"), "\(log.output)")
            let entryID = try #require(log.output.split(separator: "\n").dropFirst().first?.split(separator: " ").first.map(String.init))
            let deleted = try await recipes(["log", "--delete", entryID], storage: storage)
            #expect(deleted.status == 0 && deleted.output.contains("Deleted the log entry of \"Brine\"."), "\(deleted.output)")
            #expect(try await recipes(["log", "Brine"], storage: storage).output.contains("Nothing cooked yet."))
            let unknown = try await recipes(["log", "--delete", "abcd1234"], storage: storage)
            #expect(unknown.status == 66 && unknown.output.contains("no log entry abcd1234"), "\(unknown.output)")

            // The log a page at a time: the page ends with the command for the next, which goes on where it ended.
            for note in ["first", "second", "third"] {
                #expect(try await recipes(["cooked", "Brine", "--note", "\(note) time"], storage: storage).status == 0)
            }
            let firstPage = try await recipes(["log", "Brine", "--limit", "2"], storage: storage)
            #expect(firstPage.status == 0 && firstPage.output.contains("third time") && firstPage.output.contains("second time")
                    && !firstPage.output.contains("first time"), "newest first: \(firstPage.output)")
            let more = try #require(firstPage.output.split(separator: "\n").first { $0.hasPrefix("More: ") }, "\(firstPage.output)")
            #expect(more.hasPrefix("More: recipes log Brine --limit 2 --cursor "), "\(more)")
            // The mark holds a space (the time the entry was cooked): the command quotes it as a shell would need.
            let cursor = try #require(more.components(separatedBy: "--cursor ").last).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
            let lastPage = try await recipes(["log", "Brine", "--limit", "2", "--cursor", cursor], storage: storage)
            #expect(lastPage.status == 0 && lastPage.output.contains("first time") && !lastPage.output.contains("second time")
                    && !lastPage.output.contains("More:"), "\(lastPage.output)")
            let everything = try await recipes(["log", "Brine", "--limit", "1", "--all"], storage: storage)
            #expect(["first", "second", "third"].allSatisfy { everything.output.contains("\($0) time") } && !everything.output.contains("More:"),
                    "\(everything.output)")
            let refused = try await recipes(["log", "--cursor", "not-a-mark"], storage: storage)
            #expect(refused.status == 65 && refused.output.contains("--cursor \"not-a-mark\" is not one recipes log printed")
                    && refused.output.contains("More:"), "\(refused.status): \(refused.output)")

            // A food added again by its name keeps what is not given: its category and its other names.
            let aubergine = try await recipes(["ingredients", "add", "Aubergine", "--category", "vegetable", "--alias", "eggplant"], storage: storage)
            #expect(aubergine.status == 0 && aubergine.output.contains("aubergine (vegetable) — also called eggplant"), "\(aubergine.output)")
            let again = try await recipes(["ingredients", "add", "aubergines"], storage: storage)
            #expect(again.status == 0 && again.output.contains("aubergine (vegetable) — also called eggplant"), "\(again.output)")
            let renamed = try await recipes(["ingredients", "add", "aubergine", "--alias", "brinjal"], storage: storage)
            #expect(renamed.output.contains("aubergine (vegetable) — also called brinjal"), "--alias replaces them: \(renamed.output)")

            let search = try await recipes(["search", "tahini"], storage: storage)
            #expect(search.output.contains("Hummus from Scratch") && search.output.contains("Roasted Cauliflower with Tahini"))

            let added = try await recipes(["add", "--name", "Toast", "--ingredient", "2 slices bread", "--step", "Toast it.", "--prep", "2m"],
                                          storage: storage)
            #expect(added.status == 0 && added.output.contains("Added \"Toast\""))

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("rv-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data("""
                {"@context": "https://schema.org", "@graph": [{"@type": "WebPage"}, {"@type": ["Recipe"], "name": "Porridge",
                 "recipeIngredient": ["1 cup oats", "2 cups milk"], "recipeInstructions": [{"@type": "HowToStep", "text": "Simmer 5 minutes."}],
                 "prepTime": "PT1M", "cookTime": "PT5M", "recipeYield": "2 servings", "keywords": "breakfast, quick"}]}
                """.utf8).write(to: file)
            // A draft file naming a field a recipe does not have is refused, naming it; nothing is added.
            let misspelt = file.deletingPathExtension().appendingPathExtension("draft.json")
            defer { try? FileManager.default.removeItem(at: misspelt) }
            try Data(#"{"name": "Misspelt", "ingredient": ["1 egg"]}"#.utf8).write(to: misspelt)
            let refusedDraft = try await recipes(["add", "--file", misspelt.path], storage: storage)
            #expect(refusedDraft.status == 65 && refusedDraft.output.contains("ingredient: a recipe has no such field; use ingredients"), "\(refusedDraft.output)")
            #expect(try await recipes(["show", "Misspelt"], storage: storage).status != 0, "nothing was added")
            let fromFile = try await recipes(["add", "--file", file.path, "--json"], storage: storage)
            #expect(fromFile.status == 0)
            let created = try WireCodec.makeDecoder().decode(RecipeOps.Create.Response.self, from: Data(fromFile.output.utf8))
            #expect(created.recipe.name == "Porridge" && created.recipe.ingredients.map(\.food) == ["oats", "milk"])
            #expect(created.recipe.keywords == ["breakfast", "quick"] && created.recipe.servings == 2)
        }
    }

    @Test("photo add and get are byte-exact; an oversized photo is refused before anything is sent")
    func photos() async throws {
        try await withStorageProcess { storage async throws in
            _ = try await recipes(["add", "--name", "Bread", "--ingredient", "500 g flour"], storage: storage)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-photos-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            var bytes = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            bytes.append(contentsOf: (0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 7_919 >> 3) })
            let photo = folder.appendingPathComponent("loaf.png")
            try bytes.write(to: photo)
            let added = try await recipes(["photo", "add", "Bread", photo.path], storage: storage)
            #expect(added.status == 0 && added.output.contains("1 photo now"))
            let out = folder.appendingPathComponent("back.png")
            let got = try await recipes(["photo", "get", "Bread", "1", "-o", out.path], storage: storage)
            #expect(got.status == 0)
            #expect(try Data(contentsOf: out) == bytes)

            let huge = folder.appendingPathComponent("huge.jpg")
            try (Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(count: 2_500_000)).write(to: huge)
            let refused = try await recipes(["photo", "add", "Bread", huge.path], storage: storage)
            #expect(refused.status == 65)
            #expect(refused.output.contains("huge.jpg: photo is 2.5 MB") && refused.output.contains("the limit is 2 MB"))
            let list = try await recipes(["photo", "list", "Bread", "--json"], storage: storage)
            #expect(try WireCodec.makeDecoder().decode(PhotoOps.List.self, from: Data(list.output.utf8)).photos.count == 1)
            // Places are counted from 1, as the list shows them, in what a refusal says too.
            let nowhere = try await recipes(["photo", "move", "Bread", "1", "5"], storage: storage)
            #expect(nowhere.status == 65 && nowhere.output.contains("the recipe has photos 1 to 1; photo 1 can move to place 1 to 1, not 5"),
                    "\(nowhere.output)")
        }
    }

    @Test("photo add goes through recipe-worker: a phone photo is fitted and the reply says how; --keep-metadata, --as-is, and no worker")
    func photosThroughWorker() async throws {
        try await withStorageProcess { storage async throws in
            let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", storage, "--sync-on-request"])
            let workerEndpoint = try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)
            let viaWorker = ["--worker", workerEndpoint]
            _ = try await recipes(["add", "--name", "Bread", "--ingredient", "500 g flour"], storage: storage)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-fit-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let phone = EXIF.adding(to: TestImages.picture(width: 3_000, height: 2_000, grain: 24, as: .jpeg(quality: 95)), orientation: 6)
            #expect(phone.count > RecipeVault.maxPhotoBytes)
            let phoneFile = folder.appendingPathComponent("IMG_1234.jpg")
            try phone.write(to: phoneFile)

            let added = try await recipes(["photo", "add", "Bread", phoneFile.path] + viaWorker, storage: storage)
            #expect(added.status == 0, "\(added.output)")
            #expect(added.output.contains("IMG_1234.jpg: \(ImageKind.formatBytes(phone.count)) 3000×2000 JPEG → "), "\(added.output)")
            #expect(added.output.contains("1707×2560 JPEG, turned upright, location removed") && added.output.contains("1 photo now"))
            let back = folder.appendingPathComponent("back.jpg")
            #expect(try await recipes(["photo", "get", "Bread", "1", "-o", back.path], storage: storage).status == 0)
            let stored = try #require(TestImages.read(try Data(contentsOf: back)))
            #expect(stored.width == 1_707 && stored.height == 2_560 && !stored.hasLocation && !stored.hasCamera)

            // --keep-metadata, and --json says what was done to each file.
            let kept = try await recipes(["photo", "add", "Bread", phoneFile.path, "--keep-metadata", "--json"] + viaWorker, storage: storage)
            #expect(kept.status == 0, "\(kept.output)")
            let keptJSON = try JSONSerialization.jsonObject(with: Data(kept.output.utf8)) as? [String: Any]
            let fitted = try #require(keptJSON?["fitted"] as? [[String: Any]])
            let changes = (fitted.first?["fitting"] as? [String: Any])?["changes"] as? [String]
            #expect(fitted.first?["file"] as? String == phoneFile.path && changes?.contains("turnedUpright") == true
                    && changes?.contains("locationRemoved") == false, "\(kept.output)")
            #expect(try await recipes(["photo", "get", "Bread", "2", "-o", back.path], storage: storage).status == 0)
            #expect(TestImages.read(try Data(contentsOf: back))?.hasLocation == true)

            // --as-is: straight to storage, whose 2 MB limit refuses the phone photo and keeps a small one byte for byte.
            let refused = try await recipes(["photo", "add", "Bread", phoneFile.path, "--as-is"] + viaWorker, storage: storage)
            #expect(refused.status == 65 && refused.output.contains("IMG_1234.jpg: photo is") && refused.output.contains("the limit is 2 MB"),
                    "\(refused.output)")
            let small = TestImages.picture(width: 300, height: 200, alpha: true, as: .png)
            let smallFile = folder.appendingPathComponent("small.png")
            try small.write(to: smallFile)
            #expect(try await recipes(["photo", "add", "Bread", smallFile.path, "--as-is"] + viaWorker, storage: storage).status == 0)
            #expect(try await recipes(["photo", "get", "Bread", "3", "-o", back.path], storage: storage).status == 0)
            #expect(try Data(contentsOf: back) == small)
            let both = try await recipes(["photo", "add", "Bread", smallFile.path, "--as-is", "--keep-metadata"], storage: storage)
            #expect(both.status == 64 && both.output.contains("--as-is stores the files untouched"), "\(both.output)")

            // A damaged file is refused with the reason, and nothing is stored.
            let damagedFile = folder.appendingPathComponent("cut.jpg")
            try phone.prefix(phone.count / 2).write(to: damagedFile)
            let damaged = try await recipes(["photo", "add", "Bread", damagedFile.path] + viaWorker, storage: storage)
            #expect(damaged.status == 65 && damaged.output.contains("cut.jpg: the photo") && damaged.output.contains("could not be read"),
                    "\(damaged.output)")

            // No worker: the photos go as they are, and the CLI says so.
            _ = try await worker.stop()
            let alone = try await recipes(["photo", "add", "Bread", smallFile.path] + viaWorker, storage: storage)
            #expect(alone.status == 0 && alone.output.contains("recipe-worker is not reachable at \(workerEndpoint)"), "\(alone.output)")
            let list = try await recipes(["photo", "list", "Bread", "--json"], storage: storage)
            #expect(try WireCodec.makeDecoder().decode(PhotoOps.List.self, from: Data(list.output.utf8)).photos.count == 3)
        }
    }

    @Test("edit with flags; edit in $EDITOR; a change made meanwhile is a conflict, shown plainly, and nothing is overwritten")
    func edit() async throws {
        try await withStorageProcess { storage async throws in
            _ = try await recipes(["add", "--name", "Soup", "--ingredient", "1 onion"], storage: storage)
            let flags = try await recipes(["edit", "Soup", "--add-ingredient", "2 carrots", "--cook", "30m", "--prep", "10m", "--notes", "n"], storage: storage)
            #expect(flags.status == 0 && flags.output.contains("version 2"))
            // "" clears a time as it clears a text; a total longer than the parts reads in days.
            let cleared = try await recipes(["edit", "Soup", "--prep", "", "--notes", "", "--total", "1d2h"], storage: storage)
            #expect(cleared.status == 0 && cleared.output.contains("version 3"), "\(cleared.output)")
            let shownCleared = try await recipes(["show", "Soup", "--json"], storage: storage)
            let afterClear = try WireCodec.makeDecoder().decode(RecipeDetail.self, from: Data(shownCleared.output.utf8)).recipe
            #expect(afterClear.prepTime == nil && afterClear.notes == nil && afterClear.cookTime == "PT30M" && afterClear.totalTime == "P1DT2H")
            #expect(try await recipes(["show", "Soup"], storage: storage).output.contains("cook 30 min · total 1 day 2 h"))

            // An editor that renames the recipe in the file.
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-edit-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let editor = folder.appendingPathComponent("editor.sh")
            try Data(#"""
                #!/bin/sh
                sed -i 's/"name" : "Soup"/"name" : "Winter Soup"/' "$1"
                """#.utf8).write(to: editor)
            chmod(editor.path, 0o755)
            // Run through sh rather than exec'd: a test running in parallel may still hold the new file open
            // for writing (inherited across its fork), and exec of such a file fails with "text file busy".
            let edited = try await recipes(["edit", "Soup"], storage: storage, environment: ["EDITOR": "sh \(editor.path)"])
            #expect(edited.status == 0 && edited.output.contains("Saved \"Winter Soup\" (version 4)"), "\(edited.output)")

            // An edit that breaks a rule is refused with nothing changed, and kept; --file sends it again once mended.
            let emptying = folder.appendingPathComponent("emptying.sh")
            try Data(#"""
                #!/bin/sh
                sed -i 's/"name" : "Winter Soup"/"name" : ""/; s/"1 onion"/"1 red onion"/' "$1"
                """#.utf8).write(to: emptying)
            let refused = try await recipes(["edit", "Winter Soup"], storage: storage, environment: ["EDITOR": "sh \(emptying.path)"])
            #expect(refused.status == 65 && refused.output.contains("name is empty") && refused.output.contains("Your edit is kept in "), "\(refused.output)")
            let keptPath = try #require(refused.output.components(separatedBy: "Your edit is kept in ").last?.components(separatedBy: ":").first)
            defer { try? FileManager.default.removeItem(atPath: keptPath) }
            let kept = try String(contentsOfFile: keptPath, encoding: .utf8)
            #expect(kept.contains("1 red onion"), "the words written in the editor are in the kept file")
            try kept.replacingOccurrences(of: #""name" : """#, with: #""name" : "Winter Soup""#).write(toFile: keptPath, atomically: true, encoding: .utf8)
            let resent = try await recipes(["edit", "Winter Soup", "--file", keptPath], storage: storage)
            #expect(resent.status == 0 && resent.output.contains("Saved \"Winter Soup\" (version 5)"), "\(resent.output)")
            #expect(try await details("Winter Soup", storage).recipe.ingredients.first?.text == "1 red onion")
            #expect(try await recipes(["edit", "Winter Soup", "--file", keptPath], storage: storage).status == 75, "the kept edit is based on version 4")

            // An editor during which someone else changes the recipe: the edit must not overwrite it.
            let recipesBinary = try ServiceProcess.executable("recipes")
            let racing = folder.appendingPathComponent("racing.sh")
            try Data("""
                #!/bin/sh
                RECIPES_STORAGE=\(storage) \(recipesBinary) favorite "Winter Soup" > /dev/null
                sed -i 's/Winter Soup/Summer Soup/' "$1"
                """.utf8).write(to: racing)
            chmod(racing.path, 0o755)
            let conflict = try await recipes(["edit", "Winter Soup"], storage: storage, environment: ["EDITOR": "sh \(racing.path)"])
            #expect(conflict.status == 75)
            #expect(conflict.output.contains("changed since version 5 (it is at version 6 now)") && conflict.output.contains("Nothing was changed."))
            let after = try await recipes(["show", "Winter Soup", "--json"], storage: storage)
            let detail = try WireCodec.makeDecoder().decode(RecipeDetail.self, from: Data(after.output.utf8))
            #expect(detail.recipe.name == "Winter Soup" && detail.recipe.isFavorite && detail.recipe.version == 6)
        }
    }

    @Test("export, then import into an empty storage, gives back the same recipes with byte-identical photos; importing twice adds nothing")
    func exportImportRoundTrip() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-export-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = folder.appendingPathExtension("jpg")
        defer { try? FileManager.default.removeItem(at: photo) }
        let bytes = TestImages.jpegMarked(count: 300_000, step: 31)
        try bytes.write(to: photo)

        let original: [RecipeDetail] = try await withStorageProcess { storage async throws in
            _ = try await recipes(["books", "add", "Home Book", "--author", "Me"], storage: storage)
            let file = folder.appendingPathExtension("json")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(#"""
                {"name": "Sunday Roast", "description": "The whole thing.", "ingredients": ["1.5 kg chicken", "1 kg potatoes, halved"],
                 "instructions": [{"text": "Season the bird.", "section": "Chicken", "title": "Season"}, {"text": "Par-boil.", "section": "Potatoes"},
                                  {"text": "Roast everything together.", "title": "Roast"}],
                 "recipeYield": "4 plates", "prepTime": "PT20M", "cookTime": "PT1H30M", "recipeCategory": "Dinner", "recipeCuisine": "British",
                 "keywords": ["roast", "sunday"], "author": "Gran", "nutrition": "600 kcal per plate", "notes": "Rest 15 minutes.",
                 "website": "https://example.com/roast", "sourceType": "url", "isFavorite": true, "rating": 5}
                """#.utf8).write(to: file)
            _ = try await recipes(["add", "--file", file.path], storage: storage)
            // Sections and step titles show as headings.
            let shown = try await recipes(["show", "Sunday Roast"], storage: storage).output
            for heading in ["Chicken", "  1. Season", "     Season the bird.", "Potatoes", "  2. Par-boil.", "  3. Roast"] {
                #expect(shown.contains(heading), "\(heading) in \(shown)")
            }
            _ = try await recipes(["add", "--name", "Gravy", "--ingredient", "2 tbsp flour", "--servings", "4"], storage: storage)
            #expect(try await recipes(["photo", "add", "Sunday Roast", photo.path], storage: storage).status == 0)
            let exported = try await recipes(["export", folder.path], storage: storage)
            #expect(exported.status == 0 && exported.output.contains("Exported 2 recipes and 1 photo"))
            return try await [details("Sunday Roast", storage), details("Gravy", storage)]
        }
        let exportedRoast = folder.appendingPathComponent("Sunday Roast (\(Output_short(original[0].recipe.id)))")
        #expect(FileManager.default.fileExists(atPath: exportedRoast.appendingPathComponent("full.jpg").path))
        // Steps go out as schema.org: sections as HowToSection, titles as HowToStep.name.
        let written = try JSONSerialization.jsonObject(with: Data(contentsOf: exportedRoast.appendingPathComponent("recipe.json"))) as? [String: Any]
        let steps = written?["recipeInstructions"] as? [[String: Any]] ?? []
        #expect(steps.map { $0["@type"] as? String } == ["HowToSection", "HowToSection", "HowToStep"])
        #expect(steps.first?["name"] as? String == "Chicken" && steps.last?["name"] as? String == "Roast")
        #expect((steps.first?["itemListElement"] as? [[String: Any]])?.first?["name"] as? String == "Season")

        try await withStorageProcess { storage async throws in
            let first = try await recipes(["import-dir", folder.path], storage: storage)
            #expect(first.status == 0 && first.output.contains("Imported 2 new recipes (0 were already there) and 1 photo"), "\(first.output)")
            let again = try await recipes(["import-dir", folder.path], storage: storage)
            #expect(again.output.contains("Imported 0 new recipes (2 were already there) and 0 photos"), "\(again.output)")
            for before in original {
                let after = try await details(before.recipe.name, storage)
                #expect(after.recipe.id == before.recipe.id)
                #expect(RecipeDraft(after.recipe).withoutLineIDs == RecipeDraft(before.recipe).withoutLineIDs)
                #expect(after.recipe.photos.map(\.sha256) == before.recipe.photos.map(\.sha256))
            }
            let out = folder.appendingPathExtension("back.jpg")
            defer { try? FileManager.default.removeItem(at: out) }
            _ = try await recipes(["photo", "get", "Sunday Roast", "1", "-o", out.path], storage: storage)
            #expect(try Data(contentsOf: out) == bytes)
            let books = try await recipes(["books", "--json"], storage: storage)
            #expect(books.output.contains("Home Book") == false, "only books that recipes use travel")
        }
    }

    @Test("an export the file system stops is one plain line naming the path, the reason and how far it got; never an error dump")
    func exportStoppedByTheFileSystem() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-export-stop-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // A folder where the last starter's file goes (they are exported oldest first; Caesar Salad was made last).
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Caesar Salad.cook"), withIntermediateDirectories: true)
        let file = folder.appendingPathExtension("txt")
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withStorageProcess { storage async throws in
            let stopped = try await recipes(["export", folder.path, "--format", "cooklang", "--include-starters"], storage: storage)
            #expect(stopped.status == 73 && stopped.output.contains("Caesar Salad.cook: Is a directory; the export stopped after 7 recipes (written to"),
                    "\(stopped.output)")
            let onAFile = try await recipes(["export", file.path], storage: storage)
            #expect(onAFile.status == 73 && onAFile.output.contains("is a file; --format nextcloud writes a folder there"), "\(onAFile.output)")
            for run in [stopped, onAFile] { #expect(!run.output.contains("Error Domain") && !run.output.contains("NSCocoa"), "\(run.output)") }
        }
    }

    /// Swift reads `nan`, `inf` and `1e300` as numbers: `sync --sync-timeout nan` trapped turning it into a wait, and
    /// `cooked --servings nan` was said as "cannot write a file" (JSON cannot carry nan, and Foundation's words for
    /// that shared a domain with its file errors).
    @Test("every number option refuses nan, infinities, huge and out-of-range values before anything is sent, naming what is allowed",
          arguments: ["nan", "inf", "-inf", "1e300", "0", "-2"])
    func numberOptionsRefuseWhatTheyCannotTake(value: String) async throws {
        try await withStorageProcess { storage async throws in
            let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", storage])
            let workerEndpoint = try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)
            #expect(try await recipes(["add", "--name", "Toast"], storage: storage).status == 0)
            let allowed = ["--servings": "it must be from 0.01 to 10000", "--timeout": "must be more than 0 and at most 600 seconds",
                           "--sync-timeout": "must be more than 0 and at most 86400 seconds",
                           "--import-timeout": "must be more than 0 and at most 3600 seconds"]
            let commands: [(option: String, arguments: [String])] = [
                ("--servings", ["add", "--name", "Jam", "--servings", value]), ("--servings", ["edit", "toast", "--servings", value]),
                ("--servings", ["cooked", "toast", "--servings", value]), ("--servings", ["show", "toast", "--servings", value]),
                ("--timeout", ["list", "--timeout", value]), ("--sync-timeout", ["sync", "--sync-timeout", value]),
                ("--import-timeout", ["import", "https://example.com/x", "--import-timeout", value]),
            ]
            for (option, arguments) in commands {
                let run = try await recipes(arguments + ["--worker", workerEndpoint], storage: storage)
                #expect(run.status == 64, "recipes \(arguments.joined(separator: " ")): \(run.output)")
                #expect(run.output.contains("\(option)") && run.output.contains(allowed[option]!), "\(run.output)")
            }
            let log = try await recipes(["log", "toast", "--json"], storage: storage)
            #expect(log.status == 0 && !log.output.contains("servings"), "nothing was recorded: \(log.output)")
            #expect(try await worker.stop() == 0)
        }
    }

    /// RECIPES_STORAGE set to the worker's endpoint: `recipes status` said "recipe-storage: up at …" (exit 0) and every
    /// other command "unknown operation "recipe.list"; recipe-worker answers: …".
    @Test("the CLI pointed at the worker as its storage says so: status fails, and a command names the setting to change")
    func workerGivenAsStorage() async throws {
        try await withStorageProcess { storage async throws in
            let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", storage])
            let workerEndpoint = try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)
            let status = try await recipes(["status", "--worker", workerEndpoint], storage: workerEndpoint)
            #expect(status.status == 69, "\(status.output)")
            #expect(status.output.contains("recipe-storage: \(workerEndpoint) is recipe-worker, not recipe-storage; set RECIPES_STORAGE or --storage to recipe-storage's endpoint"),
                    "\(status.output)")
            let list = try await recipes(["list"], storage: workerEndpoint)
            #expect(list.status == 70 && list.output.contains("\(workerEndpoint) is recipe-worker, not recipe-storage (it does not answer recipe.list); "
                                                               + "set RECIPES_STORAGE or --storage to recipe-storage's endpoint"), "\(list.output)")
            #expect(try await recipes(["status", "--worker", workerEndpoint], storage: storage).status == 0)
            #expect(try await worker.stop() == 0)
        }
    }

    @Test("the real CLI says how to give a negative number it read as an option, and nothing is sent")
    func negativeArgument() async throws {
        let refused = try await recipes(["rate", "toast", "-1"], storage: "tcp://127.0.0.1:1")
        #expect(refused.status == 64, "\(refused.output)")
        #expect(refused.output.contains("recipes: -1 was read as an option; to give it as a value, put -- before it: recipes rate toast -- -1"),
                "\(refused.output)")
        let given = try await recipes(["rate", "toast", "--", "-1"], storage: "tcp://127.0.0.1:1")
        #expect(given.status == 64 && given.output.contains("the rating must be 0 (none) to 5; got -1"), "\(given.output)")
    }

    /// A worker given `--storage tcp://nas:99999` ran and retried for ever; the CLI said "stopped by an unexpected
    /// error: connect(garbage): Invalid argument" for RECIPES_STORAGE=garbage.
    @Test("an endpoint that cannot work stops the CLI, the storage and the worker at once, naming where it came from")
    func endpointsRefusedAtStart() async throws {
        let example = EndpointSyntax.example
        let fromVariable = try await recipes(["list"], storage: "garbage")
        #expect(fromVariable.status == 64, "\(fromVariable.output)")
        #expect(fromVariable.output.contains("RECIPES_STORAGE \"garbage\" is not an endpoint: it has no transport (tcp:// or ipc://); \(example)"),
                "\(fromVariable.output)")
        let fromOption = try await recipes(["list", "--worker", "tcp://[::1"], storage: "tcp://127.0.0.1:5555")
        #expect(fromOption.status == 64 && fromOption.output.contains("--worker \"tcp://[::1\" is not an endpoint: its [ has no closing ]"),
                "\(fromOption.output)")
        let runs: [(program: String, arguments: [String], environment: [String: String], said: String)] = [
            ("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", "tcp://127.0.0.1:99999"], [:],
             "--storage \"tcp://127.0.0.1:99999\" is not an endpoint: its port \"99999\" must be a number from 1 to 65535"),
            ("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", "tcp://127.0.0.1:5555"], ["RECIPES_WORKER_REPLICAS": "tcp://laptop"],
             "RECIPES_WORKER_REPLICAS \"tcp://laptop\" is not an endpoint: it has no port"),
            ("recipe-worker", ["--storage", "tcp://127.0.0.1:5555"],
             ["RECIPES_WORKER_BIND": "tcp://127.0.0.1:*", "RECIPES_WORKER_REPLICAS": "tcp://127.0.0.1:5600, ipc://"],
             "RECIPES_WORKER_REPLICAS \"ipc://\" is not an endpoint: an ipc:// endpoint needs the path of its socket file"),
            ("recipe-worker", ["--storage", "tcp://127.0.0.1:5555", "--replica", "tcp://127.0.0.1:5600"], ["RECIPES_WORKER_BIND": "udp://127.0.0.1:1"],
             "RECIPES_WORKER_BIND \"udp://127.0.0.1:1\" is not an endpoint: RecipeVault's processes talk over tcp:// or ipc://, not udp://"),
            ("recipe-worker", ["--bind", "tcp://127.0.0.1:5611", "--storage", "tcp://127.0.0.1:5611"], [:],
             "tcp://127.0.0.1:5611 is where this recipe-worker answers (its --bind), not a recipe-storage"),
            ("recipe-storage", ["--bind", "tcp://127.0.0.1:abc", "--data", temporaryDataFolder()], [:],
             "--bind \"tcp://127.0.0.1:abc\" is not an endpoint: its port \"abc\" must be a number from 0 to 65535 (or * for any free one)"),
            ("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--data", temporaryDataFolder()], ["RECIPES_STORAGE_PUBLISH": "tcp://0.0.0.0:5557 "],
             "RECIPES_STORAGE_PUBLISH \"tcp://0.0.0.0:5557 \" is not an endpoint: it holds a space or a control character"),
        ]
        for run in runs {
            let process = try ServiceProcess(run.program, run.arguments, environment: run.environment)
            #expect(try await process.waitForExit(timeout: .seconds(30)) == 64, "\(run.program) \(run.arguments): \(process.printed)")
            #expect(process.printed.contains(run.said), "\(process.printed)")
        }
    }

    /// The worker used to start with its storage as a replica and then said, at every sync, that one data folder was
    /// a copy of the other's.
    @Test("a replica that is the storage itself is refused at start; reached by another name, sync says it may be one storage")
    func replicaThatIsTheStorage() async throws {
        for (replicas, said) in [(["tcp://127.0.0.1:5555"], "replica tcp://127.0.0.1:5555 is the --storage itself; a replica is another recipe-storage"),
                                 (["tcp://laptop:5555", "tcp://laptop:5555"], "replica tcp://laptop:5555 is given twice; give each replica once")] {
            let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", "tcp://127.0.0.1:5555"]
                                            + replicas.flatMap { ["--replica", $0] })
            #expect(try await worker.waitForExit(timeout: .seconds(30)) == 64, "\(worker.printed)")
            #expect(worker.printed.contains(said), "\(worker.printed)")
        }
        try await withStorageProcess { storage async throws in
            let port = try #require(storage.split(separator: ":").last)
            let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", storage,
                                                              "--replica", "tcp://localhost:\(port)", "--sync-on-request"])
            let workerEndpoint = try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)
            let sync = try await recipes(["sync", "--worker", workerEndpoint], storage: storage)
            #expect(sync.status == 69, "\(sync.output)")
            #expect(sync.output.contains("both call themselves replica") && sync.output.contains("they are one storage reached at two addresses"),
                    "\(sync.output)")
            #expect(try await worker.stop() == 0)
        }
    }

    @Test("a starter cannot be deleted: a plain sentence and exit code 77")
    func starterRefused() async throws {
        try await withStorageProcess { storage async throws in
            let result = try await recipes(["delete", "Caesar Salad", "--yes"], storage: storage)
            #expect(result.status == 77)
            #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines)
                    == "recipes: \"Caesar Salad\" is a starter recipe and cannot be changed or deleted; duplicate it to get your own copy.")
            // As it says: the copy keeps the name, and the name then means the copy, which can be changed.
            #expect(try await recipes(["duplicate", "Caesar Salad"], storage: storage).status == 0)
            let rated = try await recipes(["rate", "Caesar Salad", "4"], storage: storage)
            #expect(rated.status == 0, "\(rated.output)")
            let copies = try await recipes(["search", "caesar", "--json"], storage: storage)
            let hits = try WireCodec.makeDecoder().decode(RecipeOps.Search.Response.self, from: Data(copies.output.utf8)).hits.map(\.recipe)
            #expect(hits.count == 2 && hits.filter { $0.rating == 4 }.map(\.origin) == [.custom], "\(hits)")
            // A second copy makes the name name two recipes one may change: then it asks which.
            #expect(try await recipes(["duplicate", "5a3c0008"], storage: storage).status == 0)
            let which = try await recipes(["rate", "Caesar Salad", "5"], storage: storage)
            #expect(which.status == 65 && which.output.contains("could be 3 recipes"), "\(which.output)")
        }
    }

    @Test("with the service down: one line naming the endpoint and the variable, exit 69, within the timeout")
    func serviceDown() async throws {
        let port = try HeldPort()
        let start = ContinuousClock.now
        let result = try await recipes(["list", "--timeout", "1.5"], storage: port.endpoint)
        let elapsed = ContinuousClock.now - start
        #expect(result.status == 69)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 1, "\(result.output)")
        #expect(result.output.contains("recipe-storage not reachable at \(port.endpoint)") && result.output.contains("RECIPES_STORAGE"))
        // It waited as told (1.5 s in all: three tries of 0.5 s) and gave up on its own. The bound on the whole run only catches a hang:
        // a loaded CI machine once took 26 s to start the process and let it try three times.
        #expect(result.output.contains("no reply after 3 tries of 500 ms each"), "\(result.output)")
        #expect(elapsed < .seconds(90), "it gave up instead of hanging")
        withExtendedLifetime(port) {}
    }
}

/// The id of sample recipe 5 (Egg Fried Rice), as its fixed id reads.
let SampleData_recipe5 = "5A3C0005-0000-4000-8000-000000000000"

/// A held, non-listening TCP port on 127.0.0.1: connections are refused.
final class HeldPort {
    let endpoint: String
    private let descriptor: Int32

    init() throws {
        guard let (descriptor, port) = Scratch.loopbackSocket() else { throw ProcessTestError("cannot hold a port") }
        self.descriptor = descriptor
        endpoint = "tcp://127.0.0.1:\(port)"
    }

    deinit { close(descriptor) }
}

func details(_ name: String, _ storage: String) async throws -> RecipeDetail {
    let shown = try await recipes(["show", name, "--json"], storage: storage)
    return try WireCodec.makeDecoder().decode(RecipeDetail.self, from: Data(shown.output.utf8))
}

func Output_short(_ id: UUID) -> String { id.shortText }


/// The characters a terminal obeys rather than shows: C0 controls but the line break and tab, DEL, C1.
enum TerminalTextProbe {
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00...0x1F, 0x7F, 0x80...0x9F: true
        default: false
        }
    }
}
