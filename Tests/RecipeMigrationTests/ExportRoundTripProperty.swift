import Foundation
import PropertyBased
@testable import RecipeMigration
import RecipeModel
import RecipeProtocol
import Testing
import TestRandom
import TestRecipes
import TestThreads

/// `recipes export` then `recipes migrate` of RecipeVault's own formats gives back the recipe as it was stored, whatever
/// its text holds: what looks like markup or an entity, line breaks, runs of spaces, list marks, commas in a keyword,
/// any script. (The importer's reading of web text, where all of those mean something else, must not touch them.)
/// `RECIPES_EXPORT_CASES` sets how many generated recipes run (default 300).
@Suite("Export and migrate back: RecipeVault's own formats keep every field", .onOwnThread)
struct ExportRoundTripProperty {
    static let cases = ProcessInfo.processInfo.environment["RECIPES_EXPORT_CASES"].flatMap(Int.init) ?? 300

    @Test("any recipe as stored comes back field for field from the nextcloud and schema formats", .shrinking(false))
    func ownFormats() async {
        await propertyCheck(count: Self.cases, input: Gen.uint64(in: 0 ... .max)) { seed in
            var random = SplitMix(seed: seed)
            let recipe = StoredRecipeGenerator.recipe(&random)
            do {
                try #require((try? RecipeDraft(recipe).validate()) != nil, "seed \(seed): the generator made a recipe storage would refuse")
                for format in [ExportFormat.nextcloud, .schema] {
                    let read = try Self.exportAndRead(recipe, format: format)
                    let expected = RecipeDraft(recipe).withoutLineIDs
                    let got = read.draft.withoutLineIDs
                    #expect(got == expected, "seed \(seed), \(format): \(Self.difference(expected, got))")
                    #expect(read.id == recipe.id, "seed \(seed), \(format): the id travels")
                }
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    @Test("text a web page would mean otherwise, one field at a time, in both formats")
    func knownTexts() throws {
        let texts = ["Fish <b>and</b> chips", "a < b > c", "R&amp;D &lt;3", "two  spaces", "para\n\npara", "tab\there",
                     "<script>x</script>", "- dash", "* star", "1. one", "x, y", "http://e.com/a", "€ & £", "“quoted”"]
        for text in texts {
            let recipe = Recipe(name: text, description: "  \(text)\n", ingredients: [IngredientLine(text: text)],
                                instructions: [Instruction(text: text, section: text, title: text)], recipeYield: text,
                                recipeCategory: text, recipeCuisine: text, keywords: [text, "\(text) 2"], author: text,
                                datePublished: text, nutrition: text, notes: text)
            for format in [ExportFormat.nextcloud, .schema] {
                let got = try Self.exportAndRead(recipe, format: format).draft.withoutLineIDs
                let expected = RecipeDraft(recipe).withoutLineIDs
                #expect(got == expected, "\(format) \(text.debugDescription): \(Self.difference(expected, got))")
            }
        }
    }

    @Test("Paprika: the author travels as its source, and notes come back as they were")
    func paprikaSource() throws {
        let recipe = Recipe(name: "Tarte Tatin", ingredients: [IngredientLine(text: "6 apples")], instructions: [Instruction(text: "Bake.")],
                            author: "Grand-mère Odette", notes: "Use firm apples.\n\nServe warm.")
        let read = try Self.exportAndRead(recipe, format: .paprika).draft
        #expect(read.author == "Grand-mère Odette")
        #expect(read.notes == "Use firm apples.\n\nServe warm.")
    }

    /// Writes one recipe in `format` into a fresh folder and reads it back as `recipes migrate` does.
    static func exportAndRead(_ recipe: Recipe, format: ExportFormat) throws -> MigratedRecipe {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-roundtrip-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("export").path
        var writer = try ExportWriters.make(format, path: path)
        try writer.add(recipe, book: nil, photos: [])
        try writer.finish()
        let source = try MigrationSource.open(path: ExportWriters.destination(format, path: path), format: MigrationFormat(rawValue: format.rawValue))
        let item = try #require(source.items.first)
        return try MigrationReader.read(try item.entry())
    }

    /// The fields that differ, by name.
    static func difference(_ expected: RecipeDraft, _ got: RecipeDraft) -> String {
        zip(Mirror(reflecting: expected).children, Mirror(reflecting: got).children)
            .filter { "\($0.0.value)" != "\($0.1.value)" }
            .map { "\($0.0.label ?? "?"): \(String(describing: $0.0.value).debugDescription) → \(String(describing: $0.1.value).debugDescription)" }
            .joined(separator: "; ")
    }
}

/// Recipes as the storage holds them (names, lines and steps trimmed; keywords trimmed and each once), with text drawn
/// from pieces that mean something to an HTML or list reader, and from several scripts.
enum StoredRecipeGenerator {
    static let pieces = [
        "salt", "Tomato", "crème fraîche", "日本酒", "🍋", "e\u{301}", "<b>", "</b>", "<hot>", "<!-- x -->", "<3", "< 5", "> 2",
        "<180°C", "&amp;", "&lt;", "&#39;", "&nbsp;", "&", ";", ",", ", ", "  ", "\t", "\n", "\n\n", "- ", "* ", "• ", "1. ", "((", "(,",
        "Â ", "2.0", "1Zwiebel", "\"", "\\", "{", "}", "[", "]", ":", "http://e.com/x", "½", "\u{A0}", "\u{AD}", "\u{200B}", "/", "#", "%",
    ]

    static func text(_ random: inout SplitMix, pieces count: ClosedRange<Int>) -> String {
        (0..<(count.lowerBound + random.below(count.count))).map { _ in pieces[random.below(pieces.count)] }.joined()
    }

    /// Text as a stored name or line keeps it: not blank, no white space at either end, within `limit` characters.
    static func trimmed(_ random: inout SplitMix, limit: Int) -> String {
        let value = String(text(&random, pieces: 1...8).trimmingWhitespace().prefix(limit)).trimmingWhitespace()
        return RecipeDraft.isBlank(value) ? "x" : value
    }

    static func maybe<T>(_ random: inout SplitMix, _ make: (inout SplitMix) -> T) -> T? {
        random.below(3) == 0 ? nil : make(&random)
    }

    static func recipe(_ random: inout SplitMix) -> Recipe {
        let durations = ["PT5M", "PT1H", "PT1H30M", "P1D", "PT0M", "PT45M"]
        var seen = Set<String>()
        let keywords = (0..<random.below(5)).map { _ in trimmed(&random, limit: 100) }.filter { seen.insert($0).inserted }
        return Recipe(
            name: trimmed(&random, limit: 200),
            description: maybe(&random) { text(&$0, pieces: 0...12) },
            ingredients: (0..<random.below(5)).map { _ in IngredientLine(text: trimmed(&random, limit: 1_000)) },
            instructions: (0..<random.below(4)).map { _ in
                Instruction(text: trimmed(&random, limit: 10_000), section: maybe(&random) { trimmed(&$0, limit: 200) },
                            title: maybe(&random) { trimmed(&$0, limit: 200) })
            },
            recipeYield: maybe(&random) { trimmed(&$0, limit: 1_000) },
            servings: maybe(&random) { Double(1 + $0.below(12)) / ($0.below(2) == 0 ? 1 : 2) },
            prepTime: maybe(&random) { durations[$0.below(durations.count)] },
            cookTime: maybe(&random) { durations[$0.below(durations.count)] },
            totalTime: maybe(&random) { durations[$0.below(durations.count)] },
            recipeCategory: maybe(&random) { trimmed(&$0, limit: 1_000) },
            recipeCuisine: maybe(&random) { trimmed(&$0, limit: 1_000) },
            keywords: keywords,
            author: maybe(&random) { trimmed(&$0, limit: 1_000) },
            datePublished: maybe(&random) { "2024-03-0\(1 + $0.below(9))" },
            nutrition: maybe(&random) { text(&$0, pieces: 1...6) },
            notes: maybe(&random) { text(&$0, pieces: 0...12) },
            website: maybe(&random) { "https://e.com/r/\($0.below(1_000))?a=1&b=<2>" },
            sourceType: [SourceType.manual, .url, .book][random.below(3)],
            sourcePageNumber: maybe(&random) { 1 + $0.below(900) },
            isFavorite: random.below(2) == 0, rating: random.below(6),
            origin: random.below(2) == 0 ? .custom : .imported)
    }
}

