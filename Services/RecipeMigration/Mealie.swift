import Foundation
import RecipeProtocol

/// Mealie 1.x recipes: the JSON of its recipe export (`recipes/<slug>/<slug>.json` with
/// `images/original.webp`), and the rows of its backup's `database.json`, which the CLI
/// gathers into the same shape (`MealieBackup`). See docs/MIGRATE.md.
enum MealieRecipe {
    static func read(_ entry: MigrationEntry) throws(MigrationError) -> MigratedRecipe {
        guard let file = entry.files.first(where: { $0.name.hasSuffix(".json") }) else {
            throw MigrationError("\(entry.label) has no recipe JSON")
        }
        let m = try RecipeSketch.object(file.data, entry.label)
        var sketch = RecipeSketch()
        sketch["name"] = m["name"]
        sketch["description"] = m["description"]
        sketch["recipeIngredient"] = (m["recipeIngredient"] as? [Any] ?? []).flatMap(ingredientLines)
        var steps: [[String: Any]] = []
        var section: [String: Any]?
        for item in m["recipeInstructions"] as? [Any] ?? [] {
            guard let step = item as? [String: Any] else {
                if let text = RecipeSketch.text(item) { steps.append(["@type": "HowToStep", "text": text]) }
                continue
            }
            // A titled instruction starts a section, as Mealie shows it.
            if let title = RecipeSketch.text(step["title"]), !title.isEmpty {
                if let section { steps.append(section) }
                section = ["@type": "HowToSection", "name": title, "itemListElement": [[String: Any]]()]
            }
            guard let text = RecipeSketch.text(step["text"]), !text.isEmpty else { continue }
            let howTo: [String: Any] = ["@type": "HowToStep", "text": text]
            if var open = section {
                open["itemListElement"] = (open["itemListElement"] as? [[String: Any]] ?? []) + [howTo]
                section = open
            } else {
                steps.append(howTo)
            }
        }
        if let section { steps.append(section) }
        sketch["recipeInstructions"] = steps
        let servings = RecipeSketch.number(m["recipeServings"]).flatMap { $0 > 0 ? $0 : nil }
        sketch["recipeYield"] = RecipeSketch.text(m["recipeYield"]).flatMap { $0.isEmpty ? nil : $0 }
            ?? servings.map { "\(RecipeSketch.amount($0)) servings" }
        sketch.servings = servings
        sketch["prepTime"] = m["prepTime"]
        // Mealie has cook time and "perform time" (time at the stove); either is the cook time.
        sketch["cookTime"] = RecipeSketch.text(m["cookTime"]).flatMap { $0.isEmpty ? nil : $0 } ?? m["performTime"]
        if RecipeSketch.text(m["cookTime"]).map({ !$0.isEmpty }) == true { sketch.keep("Perform time", m["performTime"]) }
        sketch["totalTime"] = m["totalTime"]
        sketch["recipeCategory"] = names(m["recipeCategory"])
        sketch["keywords"] = names(m["recipeCategory"]) + names(m["tags"])
        sketch["nutrition"] = nutrition(m["nutrition"])
        sketch.sourceURL = RecipeSketch.text(m["orgURL"]) ?? RecipeSketch.text(m["org_url"])
        sketch.rating = RecipeSketch.number(m["rating"]).map { Int($0.rounded()) }
        sketch.isFavorite = RecipeSketch.flag(m["favorite"])
        sketch.createdAt = RecipeSketch.date(m["createdAt"]) ?? RecipeSketch.date(m["dateAdded"])
        for note in m["notes"] as? [[String: Any]] ?? [] {
            let title = RecipeSketch.text(note["title"]) ?? "", text = RecipeSketch.text(note["text"]) ?? ""
            let line = [title, text].filter { !$0.isEmpty }.joined(separator: ": ")
            if !line.isEmpty { sketch.notes.append(line) }
        }
        sketch.keep("Tools", names(m["tools"]))
        if let extras = m["extras"] as? [String: Any] {
            for key in extras.keys.sorted() { sketch.keep(key, extras[key]) }
        }
        // Mealie keeps three sizes of one image: the original is the one to keep.
        let images = entry.files.filter { $0.data.looksLikeImage }
        let original = images.first { $0.name.hasPrefix("original.") } ?? images.first { !$0.name.hasPrefix("min-") && !$0.name.hasPrefix("tiny-") }
        if let original { sketch.photos.append(.init(name: original.name, data: original.data)) }
        let id = RecipeSketch.text(m["id"]) ?? RecipeSketch.text(m["slug"])
        let sourceID = id.map { "mealie:" + $0.lowercased().replacingOccurrences(of: "-", with: "") } ?? MigratedRecipe.contentID(.mealie, file.data)
        return try sketch.recipe(sourceID: sourceID, label: entry.label)
    }

    /// One ingredient as Mealie shows it: its display text, or quantity, unit, food and note put together.
    /// A titled ingredient starts a group: the title comes first, as a line of its own.
    static func ingredientLines(_ value: Any) -> [String] {
        guard let i = value as? [String: Any] else { return RecipeSketch.text(value).map { [$0] } ?? [] }
        var lines: [String] = []
        if let title = RecipeSketch.text(i["title"]), !title.isEmpty { lines.append(title.hasSuffix(":") ? title : title + ":") }
        let unit = name(i["unit"]), food = name(i["food"]), note = RecipeSketch.text(i["note"]) ?? ""
        var text = ""
        if food != nil || unit != nil {
            let quantity = RecipeSketch.number(i["quantity"]).map(RecipeSketch.amount) ?? ""
            text = [RecipeSketch.flag(i["disableAmount"]) ? "" : quantity, unit ?? "", food ?? "", note].filter { !$0.isEmpty }.joined(separator: " ")
        }
        if text.isEmpty { text = RecipeSketch.text(i["display"]) ?? "" }
        if text.isEmpty { text = RecipeSketch.text(i["originalText"]) ?? "" }
        if text.isEmpty {
            let quantity = RecipeSketch.flag(i["disableAmount"]) ? "" : RecipeSketch.number(i["quantity"]).map(RecipeSketch.amount) ?? ""
            text = [quantity, note].filter { !$0.isEmpty }.joined(separator: " ")
        }
        if !text.isEmpty { lines.append(text) }
        return lines
    }

    static func name(_ value: Any?) -> String? {
        let text = RecipeSketch.text((value as? [String: Any])?["name"]) ?? (value as? String)
        return text.flatMap { $0.isEmpty ? nil : $0 }
    }

    static func names(_ value: Any?) -> [String] {
        (value as? [Any] ?? []).compactMap { name($0) }
    }

    /// Mealie's nutrition keys are schema.org's ("calories", "fatContent"), with plain numbers.
    static func nutrition(_ value: Any?) -> [String: Any]? {
        guard let object = value as? [String: Any] else { return nil }
        var fields: [String: Any] = ["@type": "NutritionInformation"]
        for (key, raw) in object {
            guard let text = RecipeSketch.text(raw), !text.isEmpty else { continue }
            let camel = key.split(separator: "_").enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.capitalized }.joined()
            fields[camel] = text
        }
        return fields.count > 1 ? fields : nil
    }
}

/// A Mealie backup's `database.json`: every table as a list of rows. Gathers each recipe's rows
/// into one object of the export's shape, so the worker reads both the same way.
public enum MealieBackup {
    public struct Recipe: Sendable {
        public var id: String
        public var label: String
        public var json: Data
    }

    public static func recipes(in data: Data) throws(MigrationError) -> [Recipe] {
        let tables = try RecipeSketch.object(data, "database.json")
        func rows(_ name: String) -> [[String: Any]] { tables[name] as? [[String: Any]] ?? [] }
        func key(_ value: Any?) -> String { (RecipeSketch.text(value) ?? "").lowercased().replacingOccurrences(of: "-", with: "") }
        func grouped(_ name: String) -> [String: [[String: Any]]] {
            Dictionary(grouping: rows(name), by: { key($0["recipe_id"]) }).mapValues { list in
                list.sorted { (RecipeSketch.number($0["position"]) ?? 0) < (RecipeSketch.number($1["position"]) ?? 0) }
            }
        }
        func byID(_ name: String) -> [String: [String: Any]] {
            Dictionary(rows(name).map { (key($0["id"]), $0) }, uniquingKeysWith: { first, _ in first })
        }
        let foods = byID("ingredient_foods"), units = byID("ingredient_units")
        let categories = byID("categories"), tags = byID("tags"), tools = byID("tools")
        let ingredients = grouped("recipes_ingredients"), instructions = grouped("recipe_instructions")
        let notes = grouped("notes"), nutrition = grouped("recipe_nutrition")
        let recipeCategories = grouped("recipes_to_categories"), recipeTags = grouped("recipes_to_tags"), recipeTools = grouped("recipes_to_tools")
        // Favourites and ratings: on the recipe in older versions, per user in newer ones (the highest rating is kept).
        let perUser = rows("users_to_recipes") + rows("user_to_recipe")
        let favorites = Set(rows("users_to_favorites").map { key($0["recipe_id"]) })
            .union(perUser.filter { RecipeSketch.flag($0["is_favorite"]) }.map { key($0["recipe_id"]) })
        var ratings: [String: Double] = [:]
        for row in perUser { if let rating = RecipeSketch.number(row["rating"]) { ratings[key(row["recipe_id"]), default: 0] = max(ratings[key(row["recipe_id"])] ?? 0, rating) } }
        guard tables["recipes"] != nil else { throw MigrationError("database.json has no recipes table; is it a Mealie backup?") }
        return rows("recipes").map { row in
            let id = key(row["id"])
            func linked(_ links: [String: [[String: Any]]], _ table: [String: [String: Any]], _ column: String) -> [[String: Any]] {
                (links[id] ?? []).compactMap { table[key($0[column])].map { ["name": $0["name"] ?? ""] } }
            }
            var object: [String: Any] = [
                "id": row["id"] ?? id, "name": row["name"] ?? "", "slug": row["slug"] ?? "",
                "description": row["description"] ?? "", "recipeYield": row["recipe_yield"] ?? "",
                "recipeServings": row["recipe_servings"] ?? NSNull(),
                "totalTime": row["total_time"] ?? "", "prepTime": row["prep_time"] ?? "", "cookTime": row["cook_time"] ?? "",
                "performTime": row["perform_time"] ?? "", "orgURL": row["org_url"] ?? "",
                "rating": RecipeSketch.number(row["rating"]).map { $0 as Any } ?? ratings[id].map { $0 as Any } ?? NSNull(),
                "dateAdded": row["date_added"] ?? "", "createdAt": row["created_at"] ?? "",
                "favorite": favorites.contains(id),
                "recipeCategory": linked(recipeCategories, categories, "category_id"),
                "tags": linked(recipeTags, tags, "tag_id"), "tools": linked(recipeTools, tools, "tool_id"),
            ]
            object["recipeIngredient"] = (ingredients[id] ?? []).map { i -> [String: Any] in
                var line: [String: Any] = ["title": i["title"] ?? "", "note": i["note"] ?? "", "quantity": i["quantity"] ?? NSNull(),
                                           "originalText": i["original_text"] ?? "", "disableAmount": i["disable_amount"] ?? false]
                if let unit = units[key(i["unit_id"])] { line["unit"] = ["name": unit["name"] ?? ""] }
                if let food = foods[key(i["food_id"])] { line["food"] = ["name": food["name"] ?? ""] }
                return line
            }
            object["recipeInstructions"] = (instructions[id] ?? []).map { ["title": $0["title"] ?? "", "text": $0["text"] ?? ""] }
            object["notes"] = (notes[id] ?? []).map { ["title": $0["title"] ?? "", "text": $0["text"] ?? ""] }
            if var facts = nutrition[id]?.first {
                for column in ["id", "recipe_id", "created_at", "update_at", "updated_at"] { facts[column] = nil }
                object["nutrition"] = facts
            }
            let json = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            let name = [RecipeSketch.text(row["name"]), RecipeSketch.text(row["slug"])].compactMap { $0 }.first { !$0.isEmpty } ?? id
            return Recipe(id: id, label: "database.json: \(name)", json: json)
        }
    }
}
