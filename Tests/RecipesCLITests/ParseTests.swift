import Foundation
import ArgumentParser
@testable import RecipesCLI
import RecipeModel
import TestThreads
import Testing

@Suite("recipes: every command parses, and bad arguments are caught before anything is sent", .onOwnThread)
struct ParseTests {
    @Test("each command parses its arguments", arguments: [
        ["list", "--cuisine", "Italian", "--favorites", "--sort", "rating", "--descending", "--limit", "10"],
        ["show", "Egg Fried Rice", "--servings", "4"],
        ["search", "tomato", "basil"],
        ["add", "--name", "Toast", "--ingredient", "2 slices bread", "--step", "Toast it.", "--prep", "2m"],
        ["add", "--file", "recipe.json"],
        ["delete", "toast", "--yes"],
        ["edit", "toast"], ["edit", "toast", "--name", "Better Toast", "--add-ingredient", "butter", "--cook", "3m"], ["edit", "toast", "--prep", "", "--total", "1d"],
        ["duplicate", "5a3c0001", "--name", "Mine"],
        ["favorite", "toast", "--off"],
        ["rate", "toast", "4"],
        ["photo", "add", "toast", "a.jpg", "b.png"],
        ["photo", "list", "toast"],
        ["photo", "get", "toast", "1", "-o", "out.jpg"],
        ["photo", "move", "toast", "2", "1"],
        ["photo", "remove", "toast", "1"],
        ["books"], ["books", "add", "The Wok", "--author", "Kenji"], ["books", "show", "The Wok"], ["books", "delete", "The Wok"], ["books", "rename", "The Wok", "The Wok (2022)"],
        ["ingredients", "add", "aubergine", "--category", "vegetable", "--alias", "eggplant"],
        ["log", "--delete", "6B0C2F1E-4A8E-4C55-9A86-1F0F2F9F3C11"],
        ["ingredients"], ["ingredients", "find", "scallions"], ["ingredients", "list", "--category", "herb"],
        ["can-make", "--have", "eggs, rice, soy sauce", "--missing", "2"], ["can-make", "eggs", "rice", "soy sauce"],
        ["cooked", "toast", "--rating", "5", "--note", "Crisp"],
        ["log"], ["log", "toast", "--limit", "5"],
        ["status", "--json", "--storage", "tcp://127.0.0.1:5555", "--timeout", "2"],
        ["samples"], ["export", "/tmp/out", "--include-starters"], ["import-dir", "/tmp/out"],
        ["import", "https://example.com/lasagna"], ["import", "https://example.com/lasagna", "--dry-run", "--json"],
        ["import", "https://a.example/1", "https://b.example/2", "--no-wait"], ["import", "--file", "urls.txt"],
        ["import", "--html", "saved.html", "--url", "https://example.com/x"],
        ["jobs"], ["jobs", "--unfinished"], ["jobs", "3f2a91c0", "--wait"],
        ["migrate", "Recipes.paprikarecipes"], ["migrate", "export.zip", "--from", "tandoor", "--no-wait"], ["migrate", "cook", "--dry-run", "--json"],
        ["export", "/tmp/out.paprikarecipes", "--format", "paprika"], ["export", "/tmp/out", "--format", "cooklang"],
    ])
    func parses(arguments: [String]) throws {
        _ = try Recipes.parseAsRoot(arguments)
    }

    @Test("bad arguments are refused with what is allowed", arguments: [
        (["rate", "toast", "9"], "0 (none) to 5"),
        (["import"], "give a URL, several URLs, --file FILE, or --html FILE --url URL"),
        (["import", "https://e.com/x", "--file", "urls.txt"], "not more than one of them"),
        (["import", "--html", "saved.html"], "--html needs --url"),
        (["import", "https://e.com/x", "--url", "https://e.com/x"], "--url goes with --html"),
        (["import", "--file", "urls.txt", "--dry-run"], "--dry-run reads one page"),
        (["import", "https://e.com/x", "--no-wait"], "--no-wait is for batch imports"),
        (["jobs", "--wait"], "--wait follows one job"),
        (["migrate", "x.zip", "--dry-run", "--no-wait"], "--dry-run stores nothing"),
        (["migrate", "x.zip", "--from", "evernote"], "evernote"),
        (["export", "/tmp/x", "--format", "pdf"], "pdf"),
        (["list", "--limit", "0"], "1 to 200"),
        (["add"], "either --file or --name"),
        (["add", "--name", "x", "--file", "y"], "either --file or --name"),
        (["cooked", "toast", "--rating", "0"], "1 to 5"),
        (["can-make", "--have", " , "], "at least one food"),
        (["can-make"], "at least one food, such as `recipes can-make eggs rice`"),
        (["photo", "get", "toast", "11", "-o", "x"], "1 to 10"),
        (["show", "x", "--servings", "0"], "from 0.01"),
        (["show", "x", "--servings", "-3"], "from 0.01"),
        (["cooked", "toast", "--rating", "-1"], "1 to 5"),
        (["list", "--limit", "-5"], "1 to 200"),
        (["list", "--storage", "localhost:5555"], "tcp://127.0.0.1:5555"),
        (["list", "--timeout", "0"], "more than 0"),
        (["list", "--sort", "colour"], "colour"),
    ])
    func refuses(arguments: [String], expected: String) {
        do {
            _ = try Recipes.parseAsRoot(Recipes.arguments(arguments))
            Issue.record("\(arguments) parsed")
        } catch {
            let message = Recipes.message(for: error)
            #expect(message.contains(expected), "\(message)")
        }
    }

    @Test("a list sorts by the words a person uses, takes --favorite, and its next page keeps its filters and order")
    func listOptions() throws {
        let list = try #require(try Recipes.parseAsRoot(["list", "--sort", "time", "--favorite"]) as? ListRecipes)
        #expect(list.sort == .totalTime && list.favorites)
        #expect((try Recipes.parseAsRoot(["list", "--sort", "Created"]) as? ListRecipes)?.sort == .createdAt)
        #expect((try Recipes.parseAsRoot(["list", "--sort", "updatedAt"]) as? ListRecipes)?.sort == .updatedAt)
        #expect(ListRecipes.nextPageCommand(["list", "--cuisine", "Middle Eastern", "--sort", "rating", "--cursor", "old", "--all"], cursor: "abc=")
                == "recipes list --cuisine 'Middle Eastern' --sort rating --cursor abc=")
        #expect(ListRecipes.nextPageCommand(["list", "--book=It's mine", "--cursor=old"], cursor: "x") == "recipes list '--book=It'\\''s mine' --cursor x")
    }

    @Test("a search takes words left out (-pecan) as words, beside its own options")
    func searchWords() throws {
        let search = try #require(try Recipes.parseAsRoot(Recipes.arguments(["search", "pie", "-pecan", "--limit", "5", "-stir-fry"])) as? SearchRecipes)
        #expect(search.text == ["pie", "-pecan", "-stir-fry"] && search.limit == 5)
        let leading = try #require(try Recipes.parseAsRoot(["search", "-pecan", "pie", "--json"]) as? SearchRecipes)
        #expect(leading.text == ["-pecan", "pie"] && leading.connection.json)
    }

    /// `recipes rate toast -1` said only "Missing expected argument '<rating>'": the parser reads -1 as an option.
    @Test("a negative number given on its own is refused with how to give it, which then meets the argument's own check")
    func negativeArgument() throws {
        let arguments = Recipes.arguments(["rate", "toast", "-1"])
        #expect(throws: (any Error).self) { try Recipes.parseAsRoot(arguments) }
        #expect(Recipes.negativeNumberHint(arguments)
                == "recipes: -1 was read as an option; to give it as a value, put -- before it: recipes rate toast -- -1")
        #expect(Recipes.negativeNumberHint(["photo", "move", "it's", "-2.5", "1"])
                == "recipes: -2.5 was read as an option; to give it as a value, put -- before it: recipes photo move 'it'\\''s' -- -2.5 1")
        #expect(Recipes.negativeNumberHint(["rate", "toast", "-1", "--json"])
                == "recipes: -1 was read as an option; to give it as a value, put -- before it, after every option")
        #expect(Recipes.negativeNumberHint(["rate", "toast", "--", "-1"]) == nil)
        #expect(Recipes.negativeNumberHint(Recipes.arguments(["show", "x", "--servings", "-3"])) == nil)
        do {
            _ = try Recipes.parseAsRoot(["rate", "toast", "--", "-1"])
            Issue.record("a rating of -1 parsed")
        } catch {
            #expect(Recipes.message(for: error).contains("the rating must be 0 (none) to 5; got -1"), "\(Recipes.message(for: error))")
        }
    }

    @Test("a negative number after an option is the option's value; after -- it stays an argument")
    func negativeValues() {
        #expect(Recipes.arguments(["show", "x", "--servings", "-3"]) == ["show", "x", "--servings=-3"])
        #expect(Recipes.arguments(["show", "x", "--servings=-3"]) == ["show", "x", "--servings=-3"])
        #expect(Recipes.arguments(["search", "--", "--x", "-3"]) == ["search", "--", "--x", "-3"])
        #expect(Recipes.arguments(["add", "--name", "-", "--json"]) == ["add", "--name", "-", "--json"])
        #expect(Recipes.arguments(["add", "--name", "-1 day soup"]) == ["add", "--name", "-1 day soup"])
    }

    @Test("durations read as people write them")
    func durations() throws {
        #expect(try isoDuration("15m") == "PT15M")
        #expect(try isoDuration("1h30m") == "PT1H30M")
        #expect(try isoDuration("90") == "PT1H30M")
        #expect(try isoDuration("pt45m") == "PT45M")
        #expect(try isoDuration("2d") == "P2D" && isoDuration("1d12h") == "P1DT12H" && isoDuration("1d 30m") == "P1DT30M")
        #expect(throws: CLIError.self) { try isoDuration("366d") }
        #expect(throws: CLIError.self) { try isoDuration("soon") }
    }
}

@Suite("Stored text shown on a terminal")
struct TerminalTextTests {
    @Test("control characters are shown as symbols, never obeyed; line breaks, tabs and the CLI's own colours stay")
    func safe() {
        #expect(TerminalText.safe("Soup\u{1B}]52;c;ZWNobyBoaQ==\u{7}") == "Soup\u{241B}]52;c;ZWNobyBoaQ==\u{2407}", "OSC 52 writes the clipboard")
        #expect(TerminalText.safe("\u{1B}[2J\u{1B}[H") == "\u{241B}[2J\u{241B}[H", "clear the screen, cursor home")
        #expect(TerminalText.safe("Tasty\rEvil") == "Tasty\u{240D}Evil", "a carriage return would overprint")
        #expect(TerminalText.safe("a\u{9B}31mb\u{7F}\u{0}") == "a\u{FFFD}31mb\u{2421}\u{2400}", "C1 CSI, DEL, NUL")
        #expect(TerminalText.safe("line\n\tindented · ✓ 日本") == "line\n\tindented · ✓ 日本")
        #expect(TerminalText.safe("\u{1B}[1mName\u{1B}[0m \u{1B}[2mdim\u{1B}[0m") == "\u{1B}[1mName\u{1B}[0m \u{1B}[2mdim\u{1B}[0m")
        #expect(TerminalText.safe("\u{1B}[31m\u{1B}") == "\u{241B}[31m\u{241B}", "other sequences, and an ESC at the end")
    }
}

@Suite("Counts and times as the CLI writes them")
struct CountTextTests {
    @Test("a count takes the singular only for one")
    func counts() {
        #expect(Output.count(1, "photo") == "1 photo")
        #expect(Output.count(0, "photo") == "0 photos")
        #expect(Output.count(2, "new recipe") == "2 new recipes")
        #expect(Output.count(1, "entry", plural: "entries") == "1 entry" && Output.count(3, "entry", plural: "entries") == "3 entries")
    }

    @Test("a rating shows at most five stars and none below one, whatever a reply said")
    func stars() {
        #expect(Output.stars(0) == "" && Output.stars(3) == "★★★" && Output.stars(5) == "★★★★★")
        #expect(Output.stars(-2) == "" && Output.stars(Int.min) == "")
        #expect(Output.stars(9) == "★★★★★" && Output.stars(Int.max) == "★★★★★")
    }

    @Test("servings read as a cook says them; a yield that is a bare number is servings")
    func servings() {
        #expect(Output.servings(1) == "1 serving" && Output.servings(2.5) == "2 1/2 servings" && Output.servings(0.5) == "1/2 servings")
        #expect(Output.yield(Recipe(name: "x", recipeYield: "4")) == "4 servings")
        #expect(Output.yield(Recipe(name: "x", recipeYield: " 1 ")) == "1 serving")
        #expect(Output.yield(Recipe(name: "x", recipeYield: "8 slices", servings: 8)) == "8 slices")
        #expect(Output.yield(Recipe(name: "x", servings: 6)) == "6 servings")
        #expect(Output.yield(Recipe(name: "x")) == nil)
    }

    @Test("a time of a day or more counts days, then hours and minutes; none is left out or repeated")
    func times() {
        let cases: [(Int, String)] = [
            (0, "0 min"), (45, "45 min"), (60, "1 h"), (75, "1 h 15 min"), (1_439, "23 h 59 min"), (1_440, "1 day"),
            (1_530, "1 day 1 h 30 min"), (2_880, "2 days"), (2_885, "2 days 5 min"), (10_080, "7 days"), (525_600, "365 days"),
        ]
        for (minutes, text) in cases { #expect(Output.minutes(minutes) == text, "\(minutes)") }
        #expect(Output.minutes(nil) == "")
    }
}

@Suite("File system failures as the CLI words them")
struct FileProblemTests {
    @Test("a write refused by the file system reads as the path and the system's reason, with the exit status for it")
    func sentences() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-fileproblem-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let taken = folder.appendingPathComponent("taken")
        try Data().write(to: taken)
        var failures: [any Error] = []
        do { try Data("x".utf8).write(to: folder) } catch { failures.append(error) } // a folder written as a file
        do { try FileManager.default.createDirectory(at: taken, withIntermediateDirectories: false) } catch { failures.append(error) }
        do { try Data("x".utf8).write(to: folder.appendingPathComponent("no/such/folder/file")) } catch { failures.append(error) }
        #expect(failures.count == 3)
        let sentences = failures.compactMap { FileProblem($0)?.sentence }
        #expect(sentences.count == 3, "\(failures)")
        #expect(sentences.allSatisfy { $0.hasPrefix("cannot write ") && !$0.contains("Domain") }, "\(sentences)")
        #expect(sentences.contains { $0.contains(folder.path) && $0.contains("Is a directory") }, "\(sentences)")
        #expect(sentences.contains { $0.contains("taken") && $0.contains("File exists") }, "\(sentences)")
        #expect(sentences.contains { $0.contains("No such file or directory") }, "\(sentences)")
        #expect(FileProblem(NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC)))?.status == ExitStatus.ioError)
        #expect(FileProblem(CLIError("not a file error")) == nil)
    }
}
