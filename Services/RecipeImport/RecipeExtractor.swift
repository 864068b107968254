import Foundation
import RecipeModel
import RecipeProtocol

/// A recipe read off a web page, ready to store.
public struct ImportedRecipe: Sendable, Equatable {
    /// The recipe as a draft (`website` is the page, `sourceType` url, `origin` imported).
    public var draft: RecipeDraft
    /// Image addresses, best first.
    public var images: [String]
    /// schema.org NutritionInformation fields as text ("calories": "580 kcal").
    public var nutrition: [String: String]
    /// The yield as the page wrote it (each value when it gave several).
    public var yields: [String] = []
    /// What the page said that was out of range and left out, for a person ("prepTime P99999Y is longer than…").
    public var leftOut: [String] = []
}

/// Reads schema.org/Recipe from a page's HTML (JSON-LD; microdata when there is no JSON-LD recipe).
public enum RecipeExtractor {
    /// The recipe on the page at `url`, or `nil` when the page has none.
    public static func extract(html: String, url: String) -> ImportedRecipe? {
        let blocks = JSONLD.blocks(in: html)
        var found = JSONLD.recipe(in: blocks) ?? Microdata.recipe(in: html)
        if let author = found?["author"] { found?["author"] = JSONLD.resolvingReferences(author, in: blocks) }
        // A page that names its author only in the document head.
        if found != nil, found?["author"].flatMap(author) == nil, let meta = HTMLText.meta("author", in: html), meta.count <= 200 {
            found?["author"] = meta
        }
        guard var recipe = found.flatMap({ normalize($0, url: url) }) else { return nil }
        // The page's sharing image is the one its authors chose to stand for it: the best main photo.
        if let shared = HTMLText.meta("og:image", in: html) {
            recipe.images = [shared] + recipe.images.filter { $0 != shared }
        }
        recipe.images = resolved(recipe.images, against: url)
        return recipe
    }

    /// The recipe in an already-parsed JSON-LD value (a file's contents). `url` is
    /// where it came from when known; otherwise the recipe's own `url`, if it has one.
    public static func extract(json: Any, url: String?) -> ImportedRecipe? {
        JSONLD.recipe(in: [json]).flatMap { normalize($0, url: url) }
    }

    /// Image addresses made absolute against the page, without fragments, each once.
    static func resolved(_ images: [String], against page: String) -> [String] {
        let base = URL(string: page)
        var seen = Set<String>()
        return images.compactMap { image -> String? in
            guard var components = URLComponents(string: image.trimmingCharacters(in: .whitespaces)) else { return nil }
            components.fragment = nil
            guard let absolute = components.url(relativeTo: base)?.absoluteString, seen.insert(absolute).inserted else { return nil }
            return absolute
        }
    }

    static func normalize(_ r: [String: Any], url pageURL: String?) -> ImportedRecipe? {
        let url = pageURL ?? text(r["url"]).flatMap { $0.hasPrefix("http://") || $0.hasPrefix("https://") ? $0 : nil }
        guard let name = text(r["name"]) ?? text(r["headline"]), !RecipeDraft.isBlank(name) else { return nil }
        var leftOut: [String] = []
        // A line whose quantity is absurd ("999…9 cups") is dropped; the rest of the recipe is imported.
        let ingredients = list(r["recipeIngredient"] ?? r["ingredients"]).map(HTMLText.clean).filter { line in
            guard !RecipeDraft.isBlank(line) else { return false }
            guard let number = IngredientParser.outOfRangeQuantity(line) else { return true }
            leftOut.append("the ingredient line \"\(line.prefix(60))\" (its quantity \(number.prefix(20)) is out of range)")
            return false
        }
        var steps: [RecipeDraft.Step] = []
        collectSteps(r["recipeInstructions"], section: nil, into: &steps)
        let yields = yieldCandidates(r["recipeYield"] ?? r["yield"])
        let prep = duration(r["prepTime"], "prepTime", &leftOut), cook = duration(r["cookTime"], "cookTime", &leftOut)
        var total = duration(r["totalTime"], "totalTime", &leftOut)
        if total == nil, let prepMinutes = prep.flatMap(ISODuration.minutes), let cookMinutes = cook.flatMap(ISODuration.minutes),
           prepMinutes + cookMinutes <= ISODuration.maxMinutes {
            total = ISODuration.text(minutes: prepMinutes + cookMinutes)
        }
        let nutrition = nutritionFields(r["nutrition"])
        var draft = RecipeDraft(
            name: String(name.prefix(RecipeDraft.Limits.nameLength)),
            description: text(r["description"]).map { String($0.prefix(RecipeDraft.Limits.textLength)) },
            ingredients: ingredients.prefix(RecipeDraft.Limits.lines).map { .init(text: String($0.prefix(RecipeDraft.Limits.lineLength))) },
            instructions: Array(steps.prefix(RecipeDraft.Limits.lines)),
            recipeYield: yields.first.map(short), servings: yields.lazy.compactMap(leadingNumber).first,
            prepTime: prep, cookTime: cook, totalTime: total,
            recipeCategory: joined(r["recipeCategory"]).map(short), recipeCuisine: joined(r["recipeCuisine"]).map(short),
            keywords: keywords(r["keywords"]), author: author(r["author"]).map(short), datePublished: text(r["datePublished"]).map(short),
            nutrition: nutritionText(nutrition).map { String($0.prefix(RecipeDraft.Limits.textLength)) }, website: url, sourceType: url == nil ? .manual : .url, origin: .imported)
        // Cut to length, a line can be left blank as validation sees it (a leading format character): drop it.
        guard !RecipeDraft.isBlank(draft.name) else { return nil }
        draft.ingredients.removeAll { RecipeDraft.isBlank($0.text) }
        draft.instructions.removeAll { RecipeDraft.isBlank($0.text) }
        if let servings = draft.servings, !ValueRanges.servings.contains(servings) {
            leftOut.append("servings \(servings) (out of range)")
            draft.servings = nil
        }
        return ImportedRecipe(draft: draft, images: images(r["image"]), nutrition: nutrition, yields: yields, leftOut: leftOut)
    }

    // MARK: Fields

    /// A one-line field cut to what storage keeps.
    static func short(_ text: String) -> String { String(text.prefix(RecipeDraft.Limits.lineLength)) }

    static func text(_ value: Any?) -> String? {
        switch value {
        case let string as String: let cleaned = HTMLText.clean(string); return RecipeDraft.isBlank(cleaned) ? nil : cleaned
        case let number as NSNumber: return number.stringValue
        case let list as [Any]: return list.lazy.compactMap { text($0) }.first
        case let object as [String: Any]: return text(object["name"] ?? object["text"] ?? object["@value"])
        default: return nil
        }
    }

    static func list(_ value: Any?) -> [String] {
        switch value {
        case let string as String: return string.split(whereSeparator: \.isNewline).map(String.init)
        case let list as [Any]: return list.compactMap { item in (item as? String) ?? text(item) }
        default: return []
        }
    }

    private static func collectSteps(_ value: Any?, section: String?, into steps: inout [RecipeDraft.Step]) {
        switch value {
        case let string as String:
            // One string: its lines (or HTML paragraphs) are the steps.
            let separated = string.replacingOccurrences(of: "</p>", with: "\n").replacingOccurrences(of: "<br", with: "\n<br")
            for line in separated.split(whereSeparator: \.isNewline) {
                let cleaned = HTMLText.clean(String(line))
                if !RecipeDraft.isBlank(cleaned) { steps.append(.init(text: String(cleaned.prefix(RecipeDraft.Limits.stepLength)), section: section)) }
            }
        case let list as [Any]:
            for item in list { collectSteps(item, section: section, into: &steps) }
        case let object as [String: Any]:
            let type = (object["@type"] as? String) ?? ((object["@type"] as? [Any])?.first as? String) ?? ""
            if type.hasSuffix("HowToSection") || (object["itemListElement"] != nil && object["text"] == nil) {
                collectSteps(object["itemListElement"], section: text(object["name"]).map { String($0.prefix(RecipeDraft.Limits.nameLength)) } ?? section,
                             into: &steps)
            } else if let stepText = text(object["text"]) ?? text(object["name"]) ?? text(object["description"]) {
                steps.append(.init(text: String(stepText.prefix(RecipeDraft.Limits.stepLength)), section: section))
            }
        default:
            break
        }
    }

    private static func yieldCandidates(_ value: Any?) -> [String] {
        switch value {
        case let string as String: return [HTMLText.clean(string)].filter { !$0.isEmpty }
        case let number as NSNumber: return ["\(number)"]
        case let list as [Any]:
            // The one with words ("4 servings") reads better than a bare number.
            let all = list.flatMap { yieldCandidates($0) }
            return all.sorted { ($0.contains { $0.isLetter } ? 0 : 1) < ($1.contains { $0.isLetter } ? 0 : 1) }
        default: return []
        }
    }

    private static func leadingNumber(_ text: String) -> Double? {
        let digits = text.drop { !$0.isNumber }.prefix { $0.isNumber || $0 == "." }
        return Double(digits)
    }

    /// The page's duration in a clean form; one that is longer than a recipe may take is left out, and said so.
    private static func duration(_ value: Any?, _ field: String, _ leftOut: inout [String]) -> String? {
        guard let raw = text(value)?.replacingOccurrences(of: " ", with: "") else { return nil }
        switch ISODuration.read(raw) {
        case .minutes(let minutes) where minutes > 0: return ISODuration.text(minutes: minutes)
        case .outOfRange:
            leftOut.append("\(field) \(raw.prefix(40)) (longer than \(ISODuration.maxMinutes / 1_440) days)")
            return nil
        default: return nil
        }
    }

    private static func joined(_ value: Any?) -> String? {
        let items = list(value).flatMap { $0.split(separator: ",").map { HTMLText.clean(String($0)) } }.filter { !$0.isEmpty }
        var seen = Set<String>()
        let unique = items.filter { seen.insert($0.lowercased()).inserted }
        return unique.isEmpty ? nil : unique.joined(separator: ", ")
    }

    private static func keywords(_ value: Any?) -> [String] {
        let items = list(value).flatMap { $0.split(separator: ",").map { HTMLText.clean(String($0)) } }
            .filter { !RecipeDraft.isBlank($0) && $0.count <= RecipeDraft.Limits.keywordLength }
        var seen = Set<String>()
        return Array(items.filter { seen.insert($0.lowercased()).inserted }.prefix(RecipeDraft.Limits.keywords))
    }

    private static func author(_ value: Any?) -> String? {
        switch value {
        case let list as [Any]:
            let names = list.compactMap { author($0) }
            return names.isEmpty ? nil : names.joined(separator: ", ")
        default: return text(value)
        }
    }

    private static func images(_ value: Any?) -> [String] {
        switch value {
        case let string as String: return string.isEmpty ? [] : [string]
        case let list as [Any]:
            // Prefer the widest ImageObject when sizes are given; otherwise keep the page's order.
            let candidates = list.flatMap { item in images(item).map { url in (url, width(of: item)) } }
            let sorted = candidates.enumerated().sorted { ($0.element.1 ?? 0, -$0.offset) > ($1.element.1 ?? 0, -$1.offset) }
            return sorted.map(\.element.0)
        case let object as [String: Any]:
            return images(object["url"] ?? object["contentUrl"] ?? object["@id"])
        default: return []
        }
    }

    private static func width(of value: Any) -> Int? {
        guard let object = value as? [String: Any] else { return nil }
        return (object["width"] as? Int) ?? (object["width"] as? String).flatMap { Int($0) }
            ?? ((object["width"] as? [String: Any])?["value"] as? Int)
    }

    private static func nutritionFields(_ value: Any?) -> [String: String] {
        guard let object = value as? [String: Any] else { return [:] }
        var fields: [String: String] = [:]
        for (key, raw) in object where !key.hasPrefix("@") {
            if let value = text(raw) { fields[key] = value }
        }
        return fields
    }

    /// "Calories: 580 kcal · Fat: 28 g · …" in a fixed, readable order.
    static func nutritionText(_ fields: [String: String]) -> String? {
        guard !fields.isEmpty else { return nil }
        let order = ["servingSize", "calories", "fatContent", "saturatedFatContent", "unsaturatedFatContent", "transFatContent",
                     "carbohydrateContent", "sugarContent", "fiberContent", "proteinContent", "cholesterolContent", "sodiumContent"]
        let keys = order.filter { fields[$0] != nil } + fields.keys.filter { !order.contains($0) }.sorted()
        return keys.map { key in
            let label = key.replacingOccurrences(of: "Content", with: "")
                .replacingOccurrences(of: "([a-z])([A-Z])", with: "$1 $2", options: .regularExpression)
            return label.prefix(1).uppercased() + label.dropFirst().lowercased() + ": " + fields[key]!
        }.joined(separator: " · ")
    }
}
