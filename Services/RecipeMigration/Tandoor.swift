import Foundation
import RecipeProtocol

/// Tandoor's export: a zip holding one zip per recipe, each with `recipe.json` and its image
/// (docs/MIGRATE.md). The entry is the inner zip as it was in the export.
enum TandoorRecipe {
    static func read(_ entry: MigrationEntry) throws(MigrationError) -> MigratedRecipe {
        var files = entry.files
        if files.count == 1, let inner = files.first, ZipArchive.looksLikeZip(inner.data) {
            do {
                let archive = try ZipArchive(inner.data)
                files = try archive.files.map { try MigrationEntry.File(name: $0.name, data: archive.read($0)) }
            } catch {
                throw MigrationError("\(entry.label) is not a readable zip file (\(error))")
            }
        }
        guard let json = files.first(where: { $0.name == "recipe.json" }) ?? files.first(where: { $0.name.hasSuffix(".json") }) else {
            throw MigrationError("\(entry.label) holds no recipe.json")
        }
        let t = try RecipeSketch.object(json.data, "\(entry.label)/recipe.json")
        var sketch = RecipeSketch()
        sketch["name"] = t["name"]
        sketch["description"] = t["description"]
        var ingredients: [String] = []
        var steps: [[String: Any]] = []
        let sortedSteps = (t["steps"] as? [[String: Any]] ?? []).enumerated().sorted {
            (RecipeSketch.number($0.element["order"]) ?? Double($0.offset), $0.offset) < (RecipeSketch.number($1.element["order"]) ?? Double($1.offset), $1.offset)
        }.map(\.element)
        for step in sortedSteps {
            for item in (step["ingredients"] as? [[String: Any]] ?? []).sorted(by: { (RecipeSketch.number($0["order"]) ?? 0) < (RecipeSketch.number($1["order"]) ?? 0) }) {
                if let line = ingredientLine(item) { ingredients.append(line) }
            }
            let text = RecipeSketch.text(step["instruction"]) ?? ""
            let title = RecipeSketch.text(step["name"]) ?? ""
            if RecipeSketch.flag(step["show_as_header"]) && text.isEmpty && !title.isEmpty { continue }
            if !text.isEmpty {
                var howTo: [String: Any] = ["@type": "HowToStep", "text": text]
                if !title.isEmpty { howTo["name"] = title }
                steps.append(howTo)
            }
        }
        sketch["recipeIngredient"] = ingredients
        sketch["recipeInstructions"] = steps
        let servings = RecipeSketch.number(t["servings"]).flatMap { $0 > 0 ? $0 : nil }
        let servingsText = RecipeSketch.text(t["servings_text"]) ?? ""
        if let servings {
            sketch["recipeYield"] = "\(RecipeSketch.amount(servings)) \(servingsText.isEmpty ? "servings" : servingsText)"
            sketch.servings = servings
        }
        // Tandoor counts minutes: working (hands on) and waiting (oven, resting).
        if let working = RecipeSketch.number(t["working_time"]), working > 0 { sketch["prepTime"] = "\(Int(working)) minutes" }
        if let waiting = RecipeSketch.number(t["waiting_time"]), waiting > 0 { sketch["cookTime"] = "\(Int(waiting)) minutes" }
        let keywords = (t["keywords"] as? [Any] ?? []).compactMap { MealieRecipe.name($0) }
        sketch["keywords"] = keywords
        if let n = t["nutrition"] as? [String: Any] {
            var facts: [String: Any] = ["@type": "NutritionInformation"]
            for (key, name, unit) in [("calories", "calories", " kcal"), ("fats", "fatContent", " g"), ("carbohydrates", "carbohydrateContent", " g"),
                                      ("proteins", "proteinContent", " g")] {
                if let value = RecipeSketch.number(n[key]), value > 0 { facts[name] = RecipeSketch.amount(value) + unit }
            }
            if facts.count > 1 { sketch["nutrition"] = facts }
        }
        sketch.sourceURL = RecipeSketch.text(t["source_url"])
        sketch.rating = RecipeSketch.number(t["rating"]).map { Int($0.rounded()) }
        sketch.createdAt = RecipeSketch.date(t["created_at"])
        if let image = files.first(where: { $0.name.hasPrefix("image") && $0.data.looksLikeImage }) ?? files.first(where: { $0.data.looksLikeImage }) {
            sketch.photos.append(.init(name: image.name, data: image.data))
        }
        // The export carries no id: the inner zip's name (the recipe's number in that Tandoor) and the name stand for it.
        let stem = entry.label.split(separator: "/").last.map(String.init) ?? entry.label
        let sourceID = "tandoor:\(stem):\(RecipeSketch.text(t["name"]) ?? "")"
        return try sketch.recipe(sourceID: sourceID, label: entry.label)
    }

    /// "200 g flour, sifted"; a header is a line of its own ("For the dough:").
    static func ingredientLine(_ i: [String: Any]) -> String? {
        let food = MealieRecipe.name(i["food"]) ?? "", unit = MealieRecipe.name(i["unit"]) ?? "", note = RecipeSketch.text(i["note"]) ?? ""
        if RecipeSketch.flag(i["is_header"]) {
            let header = [food, note].first { !$0.isEmpty } ?? ""
            return header.isEmpty ? nil : header.hasSuffix(":") ? header : header + ":"
        }
        if let original = RecipeSketch.text(i["original_text"]), !original.isEmpty { return original }
        let amount = RecipeSketch.flag(i["no_amount"]) ? "" : RecipeSketch.number(i["amount"]).map(RecipeSketch.amount) ?? ""
        let text = [amount, unit, food].filter { !$0.isEmpty }.joined(separator: " ") + (note.isEmpty ? "" : ", \(note)")
        let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: ", "))
        return trimmed.isEmpty ? nil : trimmed
    }
}
