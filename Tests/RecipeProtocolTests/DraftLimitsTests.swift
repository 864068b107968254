import Foundation
@testable import RecipeProtocol
import Testing

@Suite("A draft's limits: what validation refuses is what importers cut to")
struct DraftLimitsTests {
    /// The optional text fields any text may fill (not durations, which have a form, nor the website, an address).
    static let freeFields = RecipeTextField.all.filter { $0.kind != .duration && $0.name != "website" }

    /// A draft with a text in every place the text walk visits: name, a line, a step with its section and title, a
    /// keyword, and every free optional text field.
    static func everyPlace(_ text: String = "Soup") -> RecipeDraft {
        var draft = RecipeDraft(name: text, ingredients: [.init(text: text)],
                                instructions: [.init(text: text, section: text, title: text)], keywords: [text])
        for field in freeFields { draft[keyPath: field.draft] = text }
        return draft
    }

    /// Every place of `draft`'s text walk, in its order.
    static func places(_ draft: RecipeDraft) -> [RecipeDraft.TextPlace] {
        var copy = draft, places: [RecipeDraft.TextPlace] = []
        copy.updateTexts { place, _ in places.append(place); return .keep }
        return places
    }

    @Test("each place's limit is what validation allows: one character more is refused, naming the place, and fitted back to the limit")
    func everyPlaceAtItsLimit() throws {
        let places = Self.places(Self.everyPlace())
        #expect(places.count == 6 + Self.freeFields.count)
        for (position, place) in places.enumerated() {
            let limit = try #require(place.lengthLimit, "\(place.name) has a limit")
            for length in [limit, limit + 1] {
                var draft = Self.everyPlace()
                var seen = 0
                draft.updateTexts { _, _ in
                    defer { seen += 1 }
                    return seen == position ? .replace(String(repeating: "a", count: length)) : .keep
                }
                if length == limit {
                    #expect(throws: Never.self, "\(place.name) at its limit") { try draft.validate() }
                    continue
                }
                #expect(throws: ServiceError.self, "\(place.name) past its limit") { try draft.validate() }
                do { try draft.validate() } catch {
                    #expect(error.message.contains("\(limit)"), "the error says what is allowed: \(error.message)")
                }
                let fitted = draft.fittedToLimits
                #expect(throws: Never.self, "\(place.name) fitted") { try fitted.validate() }
                var lengths: [Int] = []
                var copy = fitted
                copy.updateTexts { _, text in lengths.append(text.count); return .keep }
                #expect(lengths[position] == limit, "\(place.name) cut to \(limit), not dropped")
            }
        }
    }

    @Test("a draft past every limit at once — long texts, too many lines, steps and keywords, a text the cut leaves blank — fits and validates")
    func everythingTooLong() throws {
        let long = String(repeating: "word ", count: 5_000)
        var draft = Self.everyPlace(long)
        // The shape the page fuzz target found: a step title at the limit, then dots the importer's own check trimmed.
        draft.instructions[0].title = String(repeating: "t", count: RecipeDraft.Limits.nameLength - 1) + "....."
        draft.ingredients = (0..<400).map { .init(text: "\($0) \(long)") }
        // Format characters fill the first 1,000 characters: cut there, the line is blank, and it goes.
        draft.ingredients[3].text = String(repeating: "\u{200B}", count: 1_200) + "salt"
        draft.instructions += (0..<400).map { .init(text: "step \($0)") }
        draft.keywords = (0..<80).map { "k\($0)" + long }
        #expect(throws: ServiceError.self) { try draft.validate() }
        let fitted = draft.fittedToLimits
        #expect(throws: Never.self) { try fitted.validate() }
        #expect(fitted.ingredients.count == RecipeDraft.Limits.lines - 1)
        #expect(fitted.instructions.count == RecipeDraft.Limits.lines)
        #expect(fitted.keywords.count == RecipeDraft.Limits.keywords)
        #expect(fitted.instructions[0].title?.count == RecipeDraft.Limits.nameLength)
        #expect(fitted.name.count == RecipeDraft.Limits.nameLength)
        // A draft within every limit is left as it was.
        let small = Self.everyPlace()
        #expect(small.fittedToLimits == small)
    }

    /// Text of `count` characters of 61 bytes each: a letter under 30 combining marks, the most a text may stack.
    static func heavy(_ count: Int) -> String {
        String(repeating: "e" + String(repeating: "\u{301}", count: 30), count: count)
    }

    @Test("a text takes at most 4 bytes a character of its limit: 200 characters under combining marks, 12 KB, are refused, and fitted back under")
    func textBytesPerCharacter() throws {
        // Each character counts once however many marks it stacks: a step of 10,000 of them was 610 KB, and 24 such
        // steps a recipe of 14.6 MB whose every field was within its limit in characters.
        let heavy = RecipeDraft(name: "Heavy", instructions: (0..<24).map { _ in .init(text: Self.heavy(10_000)) })
        let refused = #expect(throws: ServiceError.self) { try heavy.validate() }
        #expect(refused?.message == "instructions[0] is 610000 bytes of UTF-8 in 10000 characters; the most allowed is 40000 (4 a character: shorten its runs of accents or symbols)")
        for text in ["🍅", "é", "न्", "👩‍👩‍👧"] {
            let count = text == "👩‍👩‍👧" ? 1_000 : 10_000 // a family is one character of 18 bytes
            let step = String(repeating: text, count: count)
            let draft = RecipeDraft(name: "Script", instructions: [.init(text: step)])
            if step.utf8.count <= 40_000 { #expect(throws: Never.self, "\(text)") { try draft.validate() } }
            else { #expect(throws: ServiceError.self, "\(text)") { try draft.validate() } }
        }
        let fitted = heavy.fittedToLimits
        #expect(fitted.instructions.count == 24 && fitted.instructions.allSatisfy { $0.text.utf8.count <= 40_000 && $0.text.utf8.count > 39_900 })
        #expect(throws: Never.self) { try fitted.validate() }
        var name = RecipeDraft(name: Self.heavy(150))
        #expect(#expect(throws: ServiceError.self) { try name.validate() }?.message.hasPrefix("name is 9150 bytes of UTF-8 in 150 characters; the most allowed is 800") == true)
        name = name.fittedToLimits
        #expect(name.name.utf8.count <= 800 && !name.name.isEmpty)
        let keyword = RecipeDraft(name: "Keyword", keywords: [Self.heavy(20)])
        #expect(#expect(throws: ServiceError.self) { try keyword.validate() }?.message.hasSuffix("must be 1 to 100 characters (400 bytes of UTF-8)") == true)
        #expect(throws: Never.self) { try keyword.fittedToLimits.validate() }
    }

    @Test("a recipe holds at most 4 MiB of text in all: 300 steps of 10,000 four-byte characters, each within its limit, are refused, naming its largest field")
    func textBytes() throws {
        let tomatoes = String(repeating: "🍅", count: 10_000) // 40,000 bytes: a step at its limit
        let heavy = RecipeDraft(name: "Heavy", instructions: (0..<RecipeDraft.Limits.lines).map { _ in .init(text: tomatoes) })
        #expect(heavy.textBytes == 300 * 40_000 + 5)
        let refused = #expect(throws: ServiceError.self) { try heavy.validate() }
        #expect(refused?.message == "the recipe's text takes 11.4 MiB in all (instructions: 11.4 MiB); a recipe may hold at most 4.0 MiB of text (UTF-8, every field together); shorten it")
        #expect(throws: Never.self, "a replica's merge is not held to it") { try heavy.validate(total: false) }

        // Text of one byte a character, every place at its limit, is under it.
        var largest = Self.everyPlace()
        largest.updateTexts { place, _ in .replace(String(repeating: "a", count: place.lengthLimit ?? 0)) }
        largest.ingredients = Array(repeating: largest.ingredients[0], count: RecipeDraft.Limits.lines)
        largest.instructions = Array(repeating: largest.instructions[0], count: RecipeDraft.Limits.lines)
        largest.keywords = (0..<RecipeDraft.Limits.keywords).map { String(format: "%03d", $0) + String(repeating: "k", count: 97) }
        #expect(largest.textBytes > 3_000_000 && largest.textBytes <= RecipeDraft.Limits.textBytes)
        #expect(throws: Never.self) { try largest.validate() }

        // Fitting (what importers do) takes the last steps until it is under.
        let fitted = heavy.fittedToLimits
        #expect(fitted.instructions.count == 104 && fitted.name == "Heavy")
        #expect(throws: Never.self) { try fitted.validate() }
    }
}
