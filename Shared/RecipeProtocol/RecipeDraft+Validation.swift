import Foundation
import RecipeModel

extension RecipeDraft {
    /// Limits a draft must respect (docs/PROTOCOL.md, "Recipe drafts").
    public enum Limits {
        public static let nameLength = 200
        public static let lineLength = 1_000
        public static let stepLength = 10_000
        public static let textLength = 20_000
        public static let lines = 300
        public static let keywords = 50
        public static let keywordLength = 100
    }

    /// Whether `text` holds nothing but white space, as validation judges it: importers and
    /// clients that clean text call this too, so what they keep is never refused as empty.
    public static func isBlank(_ text: String) -> Bool {
        // What trimming white space and newlines would leave empty, without a trip through Foundation per call:
        // printable ASCII ends the search at once.
        for scalar in text.unicodeScalars {
            if scalar.value > 0x20 && scalar.value < 0x7F { return false }
            if !CharacterSet.whitespacesAndNewlines.contains(scalar) { return false }
        }
        return true
    }

    /// Checks every field; the error names the field, what it was and what is allowed.
    /// `kept`: the keywords the recipe has now, for an edit. It may keep what a sync merge brought past the limit,
    /// and add none (`keywordCountProblem(keeping:)`).
    public func validate(keeping kept: Set<String> = []) throws(ServiceError) {
        func fail(_ message: String) -> ServiceError { ServiceError(.invalidArgument, message) }
        if let field = fieldHoldingNUL() {
            throw fail("\(field) holds the NUL character (\\u0000), which no text may contain; remove it")
        }
        if let (field, run) = fieldPastCombiningLimit() {
            throw fail("\(field) has \(run) combining marks in a row; at most \(String.maxCombiningRun) are allowed")
        }
        guard !Self.isBlank(name) else { throw fail("name is empty; a recipe needs a name") }
        guard name.count <= Limits.nameLength else {
            throw fail("name is \(name.count) characters; the most allowed is \(Limits.nameLength)")
        }
        guard ingredients.count <= Limits.lines else {
            throw fail("the recipe has \(ingredients.count) ingredient lines; the most allowed is \(Limits.lines)")
        }
        guard instructions.count <= Limits.lines else {
            throw fail("the recipe has \(instructions.count) steps; the most allowed is \(Limits.lines)")
        }
        for (index, line) in ingredients.enumerated() {
            if Self.isBlank(line.text) {
                throw fail("ingredients[\(index)] is empty; remove it or give it text")
            }
            if line.text.count > Limits.lineLength {
                throw fail("ingredients[\(index)] is \(line.text.count) characters; the most allowed is \(Limits.lineLength)")
            }
            if let number = IngredientParser.outOfRangeQuantity(line.text) {
                throw fail("ingredients[\(index)] starts with the quantity \(number), which is out of range; quantities may be 0 to \(Int(IngredientParser.maxQuantity))")
            }
        }
        for (index, step) in instructions.enumerated() {
            if Self.isBlank(step.text) {
                throw fail("instructions[\(index)] is empty; remove it or give it text")
            }
            if step.text.count > Limits.stepLength {
                throw fail("instructions[\(index)] is \(step.text.count) characters; the most allowed is \(Limits.stepLength)")
            }
        }
        let lineIDs = ingredients.compactMap(\.id) + instructions.compactMap(\.id)
        if Set(lineIDs).count != lineIDs.count {
            throw fail("an ingredient or step id appears twice; each line needs its own id")
        }
        for (index, step) in instructions.enumerated() {
            if let section = step.section, section.count > Limits.nameLength {
                throw fail("instructions[\(index)].section is \(section.count) characters; the most allowed is \(Limits.nameLength)")
            }
            if let title = step.title, title.count > Limits.nameLength {
                throw fail("instructions[\(index)].title is \(title.count) characters; the most allowed is \(Limits.nameLength)")
            }
        }
        for field in RecipeTextField.all {
            guard let value = self[keyPath: field.draft] else { continue }
            switch field.kind {
            case .line where value.count > Limits.lineLength:
                throw fail("\(field.name) is \(value.count) characters; the most allowed is \(Limits.lineLength)")
            case .text where value.count > Limits.textLength:
                throw fail("\(field.name) is \(value.count) characters; the most allowed is \(Limits.textLength)")
            case .duration:
                if let problem = ISODuration.problem(value, field: field.name) { throw fail(problem) }
            default:
                break
            }
        }
        if let servings, let problem = ValueRanges.servingsProblem(servings) { throw fail(problem) }
        guard ValueRanges.recipeRating.contains(rating) else { throw fail("rating is \(rating); it must be 0 (unrated) to 5") }
        if let sourcePageNumber, !ValueRanges.pageNumber.contains(sourcePageNumber) {
            throw fail("sourcePageNumber is \(sourcePageNumber); page numbers are 1 to \(ValueRanges.pageNumber.upperBound)")
        }
        if let website {
            guard let url = URL(string: website), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                  url.host?.isEmpty == false else {
                throw fail("website \"\(website)\" is not an http or https address")
            }
        }
        guard origin == .custom || origin == .imported else {
            throw fail("origin \(origin.rawValue) cannot be set by a client; use custom or imported")
        }
        if let problem = keywordCountProblem(keeping: kept) { throw fail(problem) }
        for keyword in keywords where Self.isBlank(keyword) || keyword.count > Limits.keywordLength {
            throw fail("keyword \"\(keyword.prefix(40))\" must be 1 to \(Limits.keywordLength) characters")
        }
    }

    /// The first field whose text holds U+0000, by name ("ingredients[2]"). SQLite ends a stored text at it, so
    /// "a\u{0}b" would be kept as "a" and "\u{0}x" as an empty name.
    public func fieldHoldingNUL() -> String? {
        func holds(_ text: String?) -> Bool { text?.utf8.contains(0) ?? false }
        if holds(name) { return "name" }
        if let index = ingredients.firstIndex(where: { holds($0.text) }) { return "ingredients[\(index)]" }
        if let index = instructions.firstIndex(where: { holds($0.text) || holds($0.section) || holds($0.title) }) { return "instructions[\(index)]" }
        if let index = keywords.firstIndex(where: { holds($0) }) { return "keywords[\(index)]" }
        return RecipeTextField.all.first { holds(self[keyPath: $0.draft]) }?.name
    }

    /// The first field with a longer run of combining marks than text may hold (`String.maxCombiningRun`), and the run.
    public func fieldPastCombiningLimit() -> (field: String, run: Int)? {
        func run(_ text: String?) -> Int? {
            guard let text, !text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
            let longest = text.longestCombiningRun
            return longest > String.maxCombiningRun ? longest : nil
        }
        if let found = run(name) { return ("name", found) }
        for (index, line) in ingredients.enumerated() { if let found = run(line.text) { return ("ingredients[\(index)]", found) } }
        for (index, step) in instructions.enumerated() {
            if let found = run(step.text) ?? run(step.section) ?? run(step.title) { return ("instructions[\(index)]", found) }
        }
        for (index, keyword) in keywords.enumerated() { if let found = run(keyword) { return ("keywords[\(index)]", found) } }
        for field in RecipeTextField.all { if let found = run(self[keyPath: field.draft]) { return (field.name, found) } }
        return nil
    }

    /// Past the keyword limit only with keywords the recipe already has (`kept`): concurrent adds on two replicas can
    /// merge past it, and an edit of anything else must still go through; it may not add one more.
    public func keywordCountProblem(keeping kept: Set<String>) -> String? {
        guard keywords.count > Limits.keywords else { return nil }
        guard keywords.count <= kept.count, keywords.allSatisfy(kept.contains) else {
            let had = kept.count > Limits.keywords ? " (a recipe synced with more may keep the \(kept.count) it has, and add none)" : ""
            return "the recipe has \(keywords.count) keywords; the most allowed is \(Limits.keywords)\(had)"
        }
        return nil
    }
}

extension RecipeDraft {
    /// The draft with every text in Unicode's composed form (`String.composed`), as the storage keeps text.
    public var composed: RecipeDraft {
        var copy = self
        copy.name = name.composed
        copy.ingredients = ingredients.map { Line(id: $0.id, text: $0.text.composed) }
        copy.instructions = instructions.map { Step(id: $0.id, text: $0.text.composed, section: $0.section?.composed, title: $0.title?.composed) }
        copy.keywords = keywords.map(\.composed)
        for field in RecipeTextField.all { copy[keyPath: field.draft] = self[keyPath: field.draft]?.composed }
        return copy
    }
}
