import Foundation
import RecipeModel
import RecipeProtocol
import Testing
@testable import RecipeStore

/// `RecipeTextField.all` is the one place a recipe's optional text fields are named: these tests carry a
/// distinct value in every field through every form a recipe takes, so a field the list names but some path
/// drops (or a path that still names fields by hand and misses one) fails here.
@Suite("Recipe text fields: one list, every path")
struct RecipeTextFieldTests {
    /// A draft with a value of its own in every listed field (valid for the field's kind).
    static func fullDraft() -> RecipeDraft {
        var draft = RecipeDraft(name: "Every field", ingredients: [.init(text: "1 cup rice")], instructions: [.init(text: "Cook.")])
        for (index, field) in RecipeTextField.all.enumerated() {
            draft[keyPath: field.draft] = switch field.kind {
            case .duration: "PT\(index + 1)M"
            case .line, .text: field.name == "website" ? "https://example.com/\(index)" : "\(field.name) value \(index) ✓"
            }
        }
        return draft
    }

    @Test("the names are the JSON names of Recipe and RecipeDraft, and each names a column once")
    func namesMatchTheModel() throws {
        let draft = Self.fullDraft()
        let recipe = Recipe(name: draft.name)
        let recipeKeys = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode({ () -> Recipe in
            var filled = recipe
            for field in RecipeTextField.all { filled[keyPath: field.recipe] = "x" }
            return filled
        }())) as? [String: Any]).keys
        let draftObject = try #require(try JSONSerialization.jsonObject(with: WireJSONEncoder().encode(draft)) as? [String: Any])
        for field in RecipeTextField.all {
            #expect(recipeKeys.contains(field.name), "Recipe encodes no \(field.name)")
            #expect(draftObject[field.name] as? String == draft[keyPath: field.draft], "the draft's JSON carries no \(field.name)")
        }
        #expect(Set(RecipeTextField.names).count == RecipeTextField.all.count)
        #expect(Set(RecipeTextField.all.map(\.column)).count == RecipeTextField.all.count)
    }

    @Test("draft JSON → store → recipe → sync record → another store → draft: every field arrives")
    func everyPath() async throws {
        let draft = Self.fullDraft()
        // The draft's JSON, both coders.
        for decoded in [try WireJSONDecoder().decode(RecipeDraft.self, from: WireJSONEncoder().encode(draft)),
                        try JSONDecoder().decode(RecipeDraft.self, from: JSONEncoder().encode(draft))] {
            #expect(decoded == draft)
        }
        let id = UUID.timeOrdered()
        try await withStore { first async throws in
            let (created, _) = try await first.createRecipe(id: id, draft)
            let fetched = try await first.recipe(id)
            let record = try #require(try await first.syncRecord(.recipe, id: id.uuidString))
            for field in RecipeTextField.all {
                let value = draft[keyPath: field.draft]
                #expect(created[keyPath: field.recipe] == value, "created: \(field.name)")
                #expect(fetched[keyPath: field.recipe] == value, "read back: \(field.name)")
                #expect(RecipeDraft(fetched)[keyPath: field.draft] == value, "draft of the recipe: \(field.name)")
                #expect(record.fields[field.name]?.string == value, "sync record: \(field.name)")
            }
            try await withStore { second async throws in
                _ = try await second.applySync(from: "first", records: [record], cursor: nil)
                let arrived = try await second.recipe(id)
                for field in RecipeTextField.all {
                    #expect(arrived[keyPath: field.recipe] == draft[keyPath: field.draft], "synced: \(field.name)")
                }
            }
            // Cleared again by an update: every field goes back to nothing.
            var cleared = draft
            for field in RecipeTextField.all { cleared[keyPath: field.draft] = nil }
            let updated = try await first.updateRecipe(id: id, expectedVersion: fetched.version, cleared)
            for field in RecipeTextField.all { #expect(updated[keyPath: field.recipe] == nil, "cleared: \(field.name)") }
        }
    }

    @Test("each field's limit is checked by its kind, with its name in the message")
    func limits() {
        for field in RecipeTextField.all {
            var draft = RecipeDraft(name: "Limits")
            let tooLong = String(repeating: "a", count: RecipeDraft.Limits.textLength + 1)
            draft[keyPath: field.draft] = field.kind == .duration ? "soon" : tooLong
            do {
                try draft.validate()
                Issue.record("\(field.name): a value past its limit was accepted")
            } catch {
                #expect(error.message.contains(field.name), "\(error.message)")
            }
        }
    }

    @Test("U+0000 in any text of a draft is refused, naming the field (a stored text would end at it)")
    func nul() {
        var drafts: [(String, RecipeDraft)] = [
            ("name", RecipeDraft(name: "\u{0}x")),
            ("ingredients[1]", RecipeDraft(name: "x", ingredients: [.init(text: "1 egg"), .init(text: "2\u{0}")])),
            ("instructions[0].title", RecipeDraft(name: "x", instructions: [.init(text: "Cook.", title: "a\u{0}")])),
            ("instructions[1].section", RecipeDraft(name: "x", instructions: [.init(text: "Cook."), .init(text: "Serve.", section: "\u{0}")])),
            ("keywords[0]", RecipeDraft(name: "x", keywords: ["\u{0}"])),
        ]
        for field in RecipeTextField.all where field.kind != .duration {
            var draft = RecipeDraft(name: "x")
            draft[keyPath: field.draft] = field.name == "website" ? "https://e.com/\u{0}" : "a\u{0}b"
            drafts.append((field.name, draft))
        }
        for (name, draft) in drafts {
            #expect(throws: ServiceError.self, "\(name)") { try draft.validate() }
            #expect(draft.fieldHoldingNUL() == name)
        }
        #expect(RecipeDraft(name: "x", description: "\\u0000").fieldHoldingNUL() == nil, "the letters are text")
    }

    @Test("the walk over a draft's text reaches every text once, names it as an error does, and writes back only what it replaces")
    func textWalk() {
        var draft = RecipeDraft(name: "n", ingredients: [.init(text: "i0"), .init(text: "i1")],
                                instructions: [.init(text: "s0", section: "sec0", title: "t0"), .init(text: "s1")], keywords: ["k0", "k1"])
        for field in RecipeTextField.all { draft[keyPath: field.draft] = "f-\(field.name)" }
        var visited: [String] = []
        var upper = draft
        upper.updateTexts { place, text in
            visited.append("\(place.name)=\(text)")
            return text.hasPrefix("i") ? .keep : .replace(text.uppercased())
        }
        #expect(visited == ["name=n", "ingredients[0]=i0", "ingredients[1]=i1", "instructions[0]=s0", "instructions[0].section=sec0",
                            "instructions[0].title=t0", "instructions[1]=s1", "keywords[0]=k0", "keywords[1]=k1"]
                + RecipeTextField.all.map { "\($0.name)=f-\($0.name)" })
        #expect(upper.name == "N" && upper.ingredients.map(\.text) == ["i0", "i1"] && upper.keywords == ["K0", "K1"])
        #expect(upper.instructions.map(\.text) == ["S0", "S1"] && upper.instructions[0].section == "SEC0" && upper.instructions[0].title == "T0")
        #expect(upper.instructions[1].section == nil && upper.instructions[1].title == nil, "an absent text stays absent")
        for field in RecipeTextField.all { #expect(upper[keyPath: field.draft] == "F-\(field.name.uppercased())") }
        #expect(draft.firstText { $0 == "t0" }?.field == "instructions[0].title")
        #expect(draft.firstText { $0 == "nowhere" } == nil)
    }
}
