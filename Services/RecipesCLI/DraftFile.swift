import Foundation
import RecipeModel
import RecipeProtocol

/// Reads a recipe file: a RecipeDraft (docs/PROTOCOL.md), or a schema.org Recipe in JSON-LD.
enum DraftFile {
    static func decode(_ data: Data, source: String) throws -> RecipeDraft {
        guard let object = try? JSONSerialization.jsonObject(with: data) else {
            throw CLIError("\(source) is not JSON; give a recipe draft or a schema.org Recipe in JSON-LD")
        }
        if let recipe = schemaRecipe(in: object) { return try fromSchema(recipe, source: source) }
        do {
            return try WireCodec.makeDecoder().decode(RecipeDraft.self, from: data)
        } catch let error as DecodingError {
            throw CLIError("\(source) is not a recipe draft: \(describe(error))")
        }
    }

    /// The schema.org Recipe object in `json` (top level, a list, or an @graph).
    private static func schemaRecipe(in json: Any) -> [String: Any]? {
        if let list = json as? [Any] { return list.lazy.compactMap(schemaRecipe).first }
        guard let object = json as? [String: Any] else { return nil }
        if let graph = object["@graph"] { return schemaRecipe(in: graph) }
        let types = (object["@type"] as? [String]) ?? [(object["@type"] as? String) ?? ""]
        return types.contains { $0.hasSuffix("Recipe") } ? object : nil
    }

    private static func fromSchema(_ r: [String: Any], source: String) throws -> RecipeDraft {
        func text(_ key: String) -> String? {
            if let string = r[key] as? String { return string.isEmpty ? nil : string }
            if let list = r[key] as? [String] { return list.first }
            if let object = r[key] as? [String: Any] { return object["name"] as? String }
            return nil
        }
        func strings(_ value: Any?) -> [String] {
            if let string = value as? String { return string.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
            return (value as? [Any])?.compactMap { $0 as? String } ?? []
        }
        guard let name = text("name") else { throw CLIError("the schema.org Recipe in \(source) has no name") }
        var steps: [RecipeDraft.Step] = []
        func collect(_ value: Any?, section: String?) {
            if let string = value as? String { steps.append(.init(text: string, section: section)) }
            if let list = value as? [Any] { list.forEach { collect($0, section: section) } }
            if let object = value as? [String: Any] {
                if (object["@type"] as? String) == "HowToSection" {
                    collect(object["itemListElement"], section: object["name"] as? String)
                } else if let stepText = (object["text"] as? String) ?? (object["name"] as? String) {
                    steps.append(.init(text: stepText, section: section))
                }
            }
        }
        collect(r["recipeInstructions"], section: nil)
        let yield = (r["recipeYield"] as? String) ?? (r["recipeYield"] as? [Any])?.compactMap { $0 as? String }.first
            ?? (r["recipeYield"] as? NSNumber).map { "\($0)" }
        return RecipeDraft(
            name: name, description: text("description"),
            ingredients: ((r["recipeIngredient"] as? [Any]) ?? []).compactMap { $0 as? String }.map { .init(text: $0) },
            instructions: steps, recipeYield: yield,
            servings: yield.flatMap { Double($0.split(separator: " ").first ?? "") },
            prepTime: text("prepTime"), cookTime: text("cookTime"), totalTime: text("totalTime"),
            recipeCategory: text("recipeCategory"), recipeCuisine: text("recipeCuisine"), keywords: strings(r["keywords"]),
            author: text("author"), datePublished: text("datePublished"), website: text("url"),
            sourceType: text("url") == nil ? .manual : .url)
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "\"\(key.stringValue)\" is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        @unknown default: "it could not be read"
        }
    }
}
