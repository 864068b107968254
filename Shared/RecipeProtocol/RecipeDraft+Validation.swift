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
        /// The most text one recipe holds, all its fields together, in bytes of UTF-8 (4 MiB). Each text may take four
        /// bytes a character of its limit (`String.bytesPerCharacter`), so 300 steps alone may take 12 MB: this keeps
        /// the largest recipe within what one reply or one sync record carries (16 MiB), its copies in a reply
        /// included. Text of one byte a character is under it whenever every field is within its own limit.
        public static let textBytes = 4 * 1_024 * 1_024
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
    /// `total`: whether the text of all fields together is held to `Limits.textBytes` — a person's write, not a
    /// sync's merge (which may put together fields that reached their sizes on different replicas).
    public func validate(keeping kept: Set<String> = [], total: Bool = true) throws(ServiceError) {
        func fail(_ message: String) -> ServiceError { ServiceError(.invalidArgument, message) }
        // Sizes first, from counts alone: a request of 15 MB of text was read through twice, taking seconds, before
        // its first step was found to be 15 times too long.
        guard ingredients.count <= Limits.lines else {
            throw fail("the recipe has \(ingredients.count) ingredient lines; the most allowed is \(Limits.lines)")
        }
        guard instructions.count <= Limits.lines else {
            throw fail("the recipe has \(instructions.count) steps; the most allowed is \(Limits.lines)")
        }
        if let problem = bytesPastLimitProblem() { throw fail(problem) }
        if total, let problem = textBytesProblem() { throw fail(problem) }
        if let field = fieldHoldingNUL() {
            throw fail("\(field) holds the NUL character (\\u0000), which no text may contain; remove it")
        }
        if let (field, run) = fieldPastCombiningLimit() {
            throw fail("\(field) has \(run) combining marks in a row; at most \(String.maxCombiningRun) are allowed")
        }
        guard !Self.isBlank(name) else { throw fail("name is empty; a recipe needs a name") }
        if let problem = Self.lengthProblem(.name, name) { throw fail(problem) }
        for (index, line) in ingredients.enumerated() {
            if Self.isBlank(line.text) {
                throw fail("ingredients[\(index)] is empty; remove it or give it text")
            }
            if let problem = Self.lengthProblem(.ingredient(index), line.text) { throw fail(problem) }
            if let number = IngredientParser.outOfRangeQuantity(line.text) {
                throw fail("ingredients[\(index)] starts with the quantity \(number), which is out of range; quantities may be 0 to \(Int(IngredientParser.maxQuantity))")
            }
        }
        for (index, step) in instructions.enumerated() {
            if Self.isBlank(step.text) {
                throw fail("instructions[\(index)] is empty; remove it or give it text")
            }
            if let problem = Self.lengthProblem(.step(index), step.text) { throw fail(problem) }
        }
        let lineIDs = ingredients.compactMap(\.id) + instructions.compactMap(\.id)
        if Set(lineIDs).count != lineIDs.count {
            throw fail("an ingredient or step id appears twice; each line needs its own id")
        }
        for (index, step) in instructions.enumerated() {
            if let section = step.section, let problem = Self.lengthProblem(.section(index), section) { throw fail(problem) }
            if let title = step.title, let problem = Self.lengthProblem(.title(index), title) { throw fail(problem) }
        }
        for field in RecipeTextField.all {
            guard let value = self[keyPath: field.draft] else { continue }
            if let problem = Self.lengthProblem(.field(field), value) { throw fail(problem) }
            if field.kind == .duration, let problem = ISODuration.problem(value, field: field.name) { throw fail(problem) }
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
        for keyword in keywords where Self.isBlank(keyword) || !keyword.isWithin(characters: Limits.keywordLength) {
            throw fail(Self.keywordProblem(keyword))
        }
    }

    /// Why the first text past `bytesPerCharacter` bytes a character of its place's limit is too long, as
    /// `lengthProblem` tells it, or nil: found from the texts' byte counts, none of them read unless it is past.
    func bytesPastLimitProblem() -> String? {
        var copy = self
        var problem: String?
        copy.updateTexts { place, text in
            guard let limit = place.lengthLimit, text.utf8.count > String.bytesPerCharacter * limit else { return .keep }
            if case .keyword = place { problem = Self.keywordProblem(text) } else { problem = Self.lengthProblem(place, text) }
            return .stop
        }
        return problem
    }

    /// The bytes of UTF-8 of every text of the draft together.
    public var textBytes: Int {
        var copy = self
        var total = 0
        copy.updateTexts { _, text in
            total += text.utf8.count
            return .keep
        }
        return total
    }

    /// Why the draft's text is too large in all (`Limits.textBytes`), naming its largest field, or nil. `had`: the bytes
    /// of the recipe it replaces; one a sync merge brought past the limit may keep them, and grow no larger.
    public func textBytesProblem(had: @autoclosure () -> Int = 0) -> String? {
        let bytes = textBytes
        // What the recipe had is worked out only for a draft past the limit (an edit's everyday case never needs it).
        guard bytes > Limits.textBytes else { return nil }
        let had = had()
        guard bytes > had else { return nil }
        var copy = self
        var sizes: [String: Int] = [:]
        copy.updateTexts { place, text in
            let field = switch place {
            case .name: "name"
            case .ingredient: "ingredients"
            case .step, .section, .title: "instructions"
            case .keyword: "keywords"
            case .field(let field): field.name
            }
            sizes[field, default: 0] += text.utf8.count
            return .keep
        }
        let largest = sizes.max { ($0.value, $1.key) < ($1.value, $0.key) }!
        func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        let kept = had > Limits.textBytes ? " (one synced with more may keep the \(mib(had)) it has, and add none)" : ""
        return "the recipe's text takes \(mib(bytes)) in all (\(largest.key): \(mib(largest.value))); a recipe may hold at most "
            + "\(mib(Limits.textBytes)) of text (UTF-8, every field together)\(kept); shorten it"
    }

    /// What is wrong with `text` at `place` for its length (`TextPlace.lengthLimit`, the limit `fittedToLimits` cuts
    /// to), or nil.
    static func lengthProblem(_ place: TextPlace, _ text: String) -> String? {
        guard let limit = place.lengthLimit else { return nil }
        return text.sizeProblem(place.name, characters: limit)
    }

    /// Why `keyword` is refused: blank, or past its limit.
    static func keywordProblem(_ keyword: String) -> String {
        "keyword \"\(keyword.prefix(40))\" must be 1 to \(Limits.keywordLength) characters (\(String.bytesPerCharacter * Limits.keywordLength) bytes of UTF-8)"
    }

    /// The first field whose text holds U+0000, by name ("ingredients[2]"). SQLite ends a stored text at it, so
    /// "a\u{0}b" would be kept as "a" and "\u{0}x" as an empty name.
    public func fieldHoldingNUL() -> String? {
        firstText(where: \.holdsNUL)?.field
    }

    /// The first field with a longer run of combining marks than text may hold (`String.maxCombiningRun`), and the run.
    public func fieldPastCombiningLimit() -> (field: String, run: Int)? {
        guard let (field, text) = firstText(where: \.isPastCombiningLimit) else { return nil }
        return (field, text.longestCombiningRun)
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
    /// The draft cut to what storage keeps, as importers end (a web page or another app's export may hold more than
    /// a recipe here may): at most `Limits.lines` ingredient lines and steps and `Limits.keywords` keywords, every text
    /// cut to its place's `lengthLimit` (in characters, and in bytes: `String.bytesPerCharacter` a character), and a line, step or keyword the cut left blank (one that opened with format
    /// characters) dropped. What else `validate` checks (NUL, durations, ranges) is the importer's own to mend.
    public var fittedToLimits: RecipeDraft {
        var copy = self
        copy.ingredients = Array(copy.ingredients.prefix(Limits.lines))
        copy.instructions = Array(copy.instructions.prefix(Limits.lines))
        copy.keywords = Array(copy.keywords.prefix(Limits.keywords))
        copy.updateTexts { place, text in
            guard let limit = place.lengthLimit, !text.isWithin(characters: limit) else { return .keep }
            return .replace(text.cut(toCharacters: limit))
        }
        copy.ingredients.removeAll { Self.isBlank($0.text) }
        copy.instructions.removeAll { Self.isBlank($0.text) }
        copy.keywords.removeAll { Self.isBlank($0) }
        // Still past the bytes a recipe may hold (steps of characters of many bytes each): the last steps go, as a page
        // cut short would have it. (Everything else together, every text at its limit in bytes, is under a third of it.)
        var bytes = copy.textBytes
        while bytes > Limits.textBytes, let step = copy.instructions.popLast() {
            bytes -= step.text.utf8.count + (step.section?.utf8.count ?? 0) + (step.title?.utf8.count ?? 0)
        }
        return copy
    }

    /// The draft with every text in Unicode's composed form (`String.composed`), as the storage keeps text.
    public var composed: RecipeDraft {
        var copy = self
        copy.updateTexts { _, text in
            let composed = text.composed
            return composed.utf8.elementsEqual(text.utf8) ? .keep : .replace(composed)
        }
        return copy
    }

    /// The first text of the draft for which `predicate` holds, with its field's name as an error gives it.
    public func firstText(where predicate: (String) -> Bool) -> (field: String, text: String)? {
        var copy = self
        var found: (field: String, text: String)?
        copy.updateTexts { place, text in
            guard predicate(text) else { return .keep }
            found = (place.name, text)
            return .stop
        }
        return found
    }

    /// Where a text sits in a draft; its `name` is the field as an error names it.
    public enum TextPlace {
        case name
        case ingredient(Int)
        case step(Int)
        /// The section a step is in.
        case section(Int)
        /// A step's own title.
        case title(Int)
        case keyword(Int)
        case field(RecipeTextField)

        public var name: String {
            switch self {
            case .name: "name"
            case .ingredient(let index): "ingredients[\(index)]"
            case .step(let index): "instructions[\(index)]"
            case .section(let index): "instructions[\(index)].section"
            case .title(let index): "instructions[\(index)].title"
            case .keyword(let index): "keywords[\(index)]"
            case .field(let field): field.name
            }
        }

        /// The most characters a text here may have (`validate` refuses more); nil for a duration, which has a form.
        public var lengthLimit: Int? {
            switch self {
            case .name, .section, .title: Limits.nameLength
            case .ingredient: Limits.lineLength
            case .step: Limits.stepLength
            case .keyword: Limits.keywordLength
            case .field(let field):
                switch field.kind {
                case .line: Limits.lineLength
                case .text: Limits.textLength
                case .duration: nil
                }
            }
        }
    }

    /// What `updateTexts` does with a text after visiting it.
    public enum TextVisit {
        case keep
        case replace(String)
        case stop
    }

    /// Visits every text the draft holds, in one fixed order: the name, each ingredient line, each step's text,
    /// section and title, each keyword, then the optional text fields (`RecipeTextField.all`). Every rule about all of
    /// a recipe's text (no U+0000, the run of combining marks, one Unicode form) goes through this one walk, so none
    /// can miss a field, and a new field is added here once. A text is written back only when `visit` replaces it.
    public mutating func updateTexts(_ visit: (TextPlace, String) -> TextVisit) {
        func each(_ place: TextPlace, _ text: String, _ store: (String) -> Void) -> Bool {
            switch visit(place, text) {
            case .keep: return false
            case .replace(let new): store(new); return false
            case .stop: return true
            }
        }
        if each(.name, name, { name = $0 }) { return }
        for index in ingredients.indices {
            if each(.ingredient(index), ingredients[index].text, { ingredients[index].text = $0 }) { return }
        }
        for index in instructions.indices {
            let step = instructions[index]
            if each(.step(index), step.text, { instructions[index].text = $0 }) { return }
            if let section = step.section, each(.section(index), section, { instructions[index].section = $0 }) { return }
            if let title = step.title, each(.title(index), title, { instructions[index].title = $0 }) { return }
        }
        for index in keywords.indices {
            if each(.keyword(index), keywords[index], { keywords[index] = $0 }) { return }
        }
        for textField in RecipeTextField.all {
            guard let text = self[keyPath: textField.draft] else { continue }
            if each(.field(textField), text, { self[keyPath: textField.draft] = $0 }) { return }
        }
    }
}

extension String {
    /// The most bytes of UTF-8 a text may take for each character its limit allows (4: a letter of any script, one
    /// with an accent or two, an emoji). A character counts once however many marks it stacks (up to
    /// `maxCombiningRun`), so a limit in characters alone let 200 characters take 24 KB; with this a text of at most
    /// `n` characters takes at most `4n` bytes, and every reply that carries it is bounded by what it counts.
    public static let bytesPerCharacter = 4

    /// Whether the text holds U+0000 (read a block at a time, not a byte at a time).
    public var holdsNUL: Bool {
        var text = self
        return text.withUTF8 { bytes in bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false }
    }

    /// Whether the text is at most `limit` characters and `bytesPerCharacter × limit` bytes of UTF-8.
    public func isWithin(characters limit: Int) -> Bool {
        let bytes = utf8.count
        return bytes <= limit || (bytes <= Self.bytesPerCharacter * limit && count <= limit)
    }

    /// The text's start that is within `limit` characters (`isWithin(characters:)`), cut between characters.
    public func cut(toCharacters limit: Int) -> String {
        var kept = String(prefix(limit))
        while kept.utf8.count > Self.bytesPerCharacter * limit { kept.removeLast() }
        return kept
    }

    /// Why the text, the value of `field`, is not within `limit` characters (`isWithin(characters:)`), or nil.
    public func sizeProblem(_ field: String, characters limit: Int) -> String? {
        guard !isWithin(characters: limit) else { return nil }
        let count = self.count
        if count > limit { return "\(field) is \(count) characters; the most allowed is \(limit)" }
        return "\(field) is \(utf8.count) bytes of UTF-8 in \(count) characters; the most allowed is \(Self.bytesPerCharacter * limit) "
            + "(\(Self.bytesPerCharacter) a character: shorten its runs of accents or symbols)"
    }
}
