import Foundation
import RecipeModel
import RecipeProtocol

/// A Cooklang `.cook` file (cooklang.org/docs/spec): metadata (`>> key: value` lines or YAML
/// front matter), steps as paragraphs with `@ingredient{qty%unit}(note)`, `#cookware{}` and
/// `~timer{qty%unit}` marked inline, `= Section` lines, `> notes`, `--` and `[- -]` comments.
/// The photo beside it shares its name (`Name.jpg`; step photos `Name.1.jpg`).
enum CooklangRecipe {
    struct Parsed {
        var metadata: [String: Any] = [:]
        var ingredients: [String] = []
        var cookware: [String] = []
        var steps: [(text: String, section: String?)] = []
        var notes: [String] = []
    }

    static func read(_ entry: MigrationEntry) throws(MigrationError) -> MigratedRecipe {
        guard let file = entry.files.first(where: { $0.name.lowercased().hasSuffix(".cook") }) else {
            throw MigrationError("\(entry.label) has no .cook file")
        }
        let text = RecipeSketch.decodeText(file.data)
        let parsed = parse(text)
        let stem = String(file.name.dropLast(5))
        let m = parsed.metadata
        func field(_ keys: String...) -> Any? { keys.lazy.compactMap { m[$0] }.first }
        var sketch = RecipeSketch()
        sketch["name"] = RecipeSketch.text(field("title", "name")).flatMap { $0.isEmpty ? nil : $0 } ?? stem
        sketch["description"] = field("description", "introduction")
        sketch["recipeIngredient"] = parsed.ingredients
        var steps: [[String: Any]] = []
        for step in parsed.steps {
            if let section = step.section, let last = steps.last, last["name"] as? String == section {
                steps[steps.count - 1]["itemListElement"] = (last["itemListElement"] as? [[String: Any]] ?? []) + [["@type": "HowToStep", "text": step.text]]
            } else if let section = step.section {
                steps.append(["@type": "HowToSection", "name": section, "itemListElement": [["@type": "HowToStep", "text": step.text]]])
            } else {
                steps.append(["@type": "HowToStep", "text": step.text])
            }
        }
        sketch["recipeInstructions"] = steps
        sketch["recipeYield"] = RecipeSketch.text(field("servings", "serves", "yield"))
        sketch["totalTime"] = RecipeSketch.text(field("time", "duration", "total time", "time required", "time.total"))
        sketch["prepTime"] = RecipeSketch.text(field("prep time", "prep_time", "time.prep"))
        sketch["cookTime"] = RecipeSketch.text(field("cook time", "cook_time", "time.cook"))
        sketch["recipeCategory"] = RecipeSketch.text(field("course", "category"))
        sketch["recipeCuisine"] = RecipeSketch.text(field("cuisine"))
        let tags = field("tags")
        sketch["keywords"] = (tags as? [Any]).map { $0.compactMap { RecipeSketch.text($0) } } ?? RecipeSketch.text(tags).map { [$0] } ?? []
        sketch["author"] = RecipeSketch.text(field("author", "source.author"))
        let source = RecipeSketch.text(field("source.url", "source", "url"))
        if let source, source.hasPrefix("http") { sketch.sourceURL = source } else { sketch.keep("Source", source) }
        sketch.keep("Source", field("source.name"))
        sketch.keep("Diet", field("diet"))
        sketch.keep("Difficulty", field("difficulty"))
        sketch.keep("Cookware", parsed.cookware)
        sketch.notes += parsed.notes
        // The recipe's photo, then its step photos in step order.
        let images = entry.files.filter { $0.data.looksLikeImage }
        if let main = images.first(where: { PathText.deletingExtension($0.name) == stem }) { sketch.photos.append(.init(name: main.name, data: main.data)) }
        let stepPhotos = images.filter { PathText.deletingExtension($0.name) != stem }
            .sorted { stepNumber($0.name, stem) < stepNumber($1.name, stem) }
        sketch.photos += stepPhotos.map { .init(name: $0.name, data: $0.data) }
        var migrated = try sketch.recipe(sourceID: "cooklang:\(entry.label)", label: entry.label)
        // Written by RecipeVault's export: the recipe keeps its own id, so migrating the export back into the storage it
        // came from (or into a replica of it) finds the recipe instead of adding it a second time.
        if let own = RecipeSketch.text(field(ownIDKey)).flatMap(UUID.init(uuidString:)) { migrated.id = own }
        return migrated
    }

    /// The metadata key RecipeVault's export writes the recipe's own id under.
    static let ownIDKey = "recipevault id"

    private static func stepNumber(_ name: String, _ stem: String) -> Int {
        Int(PathText.deletingExtension(name).dropFirst(stem.count + 1)) ?? .max
    }

    static func parse(_ source: String) -> Parsed {
        var parsed = Parsed()
        var text = source.replacingOccurrences(of: "\r\n", with: "\n")
        if let front = MiniYAML.frontMatter(text) {
            parsed.metadata = front.fields
            text = front.body
        }
        // Block comments may span lines.
        while let open = text.range(of: "[-") {
            let close = text.range(of: "-]", range: open.upperBound..<text.endIndex)
            text.removeSubrange(open.lowerBound..<(close?.upperBound ?? text.endIndex))
        }
        var section: String?
        var paragraph: [String] = []
        var amounts: [String: Amount] = [:]
        var order: [String] = []
        var cookware: [String] = []
        func flush() {
            let joined = paragraph.joined(separator: " ").trimmingCharacters(in: .whitespaces)
            paragraph = []
            guard !joined.isEmpty else { return }
            let step = inline(joined, amounts: &amounts, order: &order, cookware: &cookware)
            // A section called "Ingredients" only lists them (as `recipes export` writes): no step of its own.
            if !RecipeDraft.isBlank(step), section?.lowercased() != "ingredients" { parsed.steps.append((step, section)) }
        }
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = String(rawLine)
            if let comment = line.range(of: "--"), !line.hasPrefix("---") { line = String(line[..<comment.lowerBound]) }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(">>") {
                flush()
                let body = trimmed.dropFirst(2)
                if let colon = body.firstIndex(of: ":") {
                    let key = body[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                    parsed.metadata[key] = MiniYAML.scalar(body[body.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
            } else if trimmed.hasPrefix(">") {
                flush()
                parsed.notes.append(trimmed.dropFirst().trimmingCharacters(in: .whitespaces))
            } else if trimmed.hasPrefix("=") {
                flush()
                let name = trimmed.trimmingCharacters(in: CharacterSet(charactersIn: "= "))
                section = name.isEmpty ? nil : name
            } else if trimmed.isEmpty {
                flush()
            } else {
                paragraph.append(trimmed)
            }
        }
        flush()
        parsed.ingredients = order.compactMap { key in
            guard let item = amounts[key] else { return nil }
            let quantity = item.quantity.map(RecipeSketch.amount) ?? item.text
            let words = [quantity, item.unit, item.name].filter { !$0.isEmpty }.joined(separator: " ")
            return item.note.isEmpty ? words : "\(words) (\(item.note))"
        }
        parsed.cookware = cookware
        return parsed
    }

    /// An ingredient as its marks add up: a number while every mark gives one, else the marks' words joined.
    struct Amount {
        var name: String
        var quantity: Double?
        var text: String
        var unit: String
        var note: String
    }

    /// A mark: its sigil, modifiers, then a name of several words ending at `{…}`, or one word; an optional `(note)`.
    nonisolated(unsafe) private static let marker = /([@#~])([@&?\-+]*)(?:([^@#~{}\n\s][^@#~{}\n]*?)?\{([^}]*)\}|([\p{L}\p{N}_][\p{L}\p{N}_\-]*))(?:\(([^)]*)\))?/

    /// A step's text with the marks turned into words, noting ingredients and cookware on the way.
    private static func inline(
        _ text: String,
        amounts: inout [String: Amount],
        order: inout [String], cookware: inout [String]
    ) -> String {
        var output = ""
        var rest = Substring(text)
        while let match = rest.firstMatch(of: marker) {
            output += rest[..<match.range.lowerBound]
            let sigil = match.output.1
            let name = String(match.output.3 ?? match.output.5 ?? "").trimmingCharacters(in: .whitespaces)
            let braces = match.output.4.map(String.init)
            let note = match.output.6.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
            let parts = (braces ?? "").split(separator: "%", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            let quantityText = (parts.first ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "=*"))
            let unit = parts.count > 1 ? parts[1] : ""
            switch sigil {
            case "@":
                output += name
                let quantity = number(quantityText)
                let key = name.lowercased() + "|" + unit.lowercased()
                if var known = amounts[key] {
                    if let q = quantity, let k = known.quantity { known.quantity = q + k } else if !quantityText.isEmpty && quantityText != known.text {
                        known.text = [known.quantity.map(RecipeSketch.amount) ?? known.text, quantityText].filter { !$0.isEmpty }.joined(separator: " + ")
                        known.quantity = nil
                    }
                    amounts[key] = known
                } else if !name.isEmpty {
                    order.append(key)
                    amounts[key] = Amount(name: name, quantity: quantity, text: quantityText, unit: unit, note: note)
                }
            case "#":
                output += name
                if !name.isEmpty, !cookware.contains(name) { cookware.append(name) }
            default:
                // A timer reads as its duration ("10 minutes"), with its name when it has one.
                let duration = [quantityText, unit].filter { !$0.isEmpty }.joined(separator: " ")
                output += duration.isEmpty ? name : duration
            }
            rest = rest[match.range.upperBound...]
        }
        output += rest
        return output.replacingOccurrences(of: "  ", with: " ").trimmingCharacters(in: .whitespaces)
    }

    /// "2", "1.5", "1/2", "1 1/2".
    static func number(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let value = Double(trimmed) { return value > 0 && value < RecipeSketch.largestNumber ? value : nil }
        let pieces = trimmed.split(separator: " ")
        var total = 0.0
        for piece in pieces {
            let fraction = piece.split(separator: "/")
            if fraction.count == 2, let top = Double(fraction[0]), let bottom = Double(fraction[1]), bottom != 0 { total += top / bottom }
            else if let whole = Double(piece) { total += whole } else { return nil }
        }
        // "1e18/0.1" is a fraction over a tiny divisor: past the size of any recipe's number, as a plain number is.
        return pieces.isEmpty || !(total > 0 && total < RecipeSketch.largestNumber) ? nil : total
    }

    // MARK: Writing (recipes export --format cooklang)

    /// A recipe as a `.cook` file: YAML front matter, its ingredients listed as `@name{qty%unit}` in a
    /// first step (RecipeVault keeps ingredient lines apart from steps), then its steps.
    static func write(_ recipe: Recipe) -> String {
        var out = "---\n"
        func put(_ key: String, _ value: String?) {
            guard let value, !value.isEmpty else { return }
            let needsQuotes = value.contains(":") || value.contains("#") || value.hasPrefix("[") || value.hasPrefix("\"") || value.contains("\n")
            out += "\(key): " + (needsQuotes ? "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n") + "\"" : value) + "\n"
        }
        put("title", recipe.name)
        put("description", recipe.description)
        put("servings", recipe.recipeYield)
        put("prep time", recipe.prepTime)
        put("cook time", recipe.cookTime)
        put("time", recipe.totalTime)
        put("course", recipe.recipeCategory)
        put("cuisine", recipe.recipeCuisine)
        put("author", recipe.author)
        put("source", recipe.website)
        put(ownIDKey, recipe.id.uuidString)
        if !recipe.keywords.isEmpty { out += "tags: [" + recipe.keywords.map { "\"\($0.replacingOccurrences(of: "\"", with: "'"))\"" }.joined(separator: ", ") + "]\n" }
        out += "---\n\n"
        if !recipe.ingredients.isEmpty {
            out += "= Ingredients\n\n"
            out += recipe.ingredients.map { "- " + ingredientMark($0.text) }.joined(separator: "\n") + "\n\n"
            // A section without a name ends the ingredients.
            out += "==\n\n"
        }
        var section: String?
        for step in recipe.instructions {
            if step.section != section { out += "= \(step.section ?? "")\n\n" }
            section = step.section
            out += escape((step.title.map { "\($0): " } ?? "") + step.text) + "\n\n"
        }
        for note in (recipe.notes ?? "").split(separator: "\n", omittingEmptySubsequences: true) {
            out += "> " + escape(String(note)) + "\n"
        }
        return out
    }

    /// An ingredient line as one mark: "2 cups flour" → "@flour{2%cups}"; a line it cannot split keeps its words.
    static func ingredientMark(_ line: String) -> String {
        "@" + escape(line).replacingOccurrences(of: "{", with: "(").replacingOccurrences(of: "}", with: ")") + "{}"
    }

    /// Text with the marks' characters made harmless (they would start an ingredient, cookware or timer).
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "@", with: "(at)").replacingOccurrences(of: "#", with: "No.").replacingOccurrences(of: "~", with: "≈")
            .replacingOccurrences(of: "--", with: "–").replacingOccurrences(of: "[-", with: "[ -").replacingOccurrences(of: "\n", with: " ")
    }
}
