import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

extension RecipeStore {
    /// The catalogue, by name; only `category` when given.
    public func listIngredients(category: IngredientCategory?) async throws -> [CatalogueEntry] {
        try await pool.read { db in
            let rows: [Row]
            if let category {
                rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM ingredients WHERE category = ? ORDER BY name"), arguments: [category.rawValue])
            } else {
                rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM ingredients ORDER BY name"))
            }
            return try rows.map { try Self.catalogueEntry($0, in: db) }
        }
    }

    /// The entry whose name or alias is `name` (normalized first: "Scallions" finds "spring onion").
    public func findIngredient(_ name: String) async throws -> CatalogueEntry {
        let normalized = IngredientParser.normalizeFood(name)
        return try await pool.read { db in
            guard let entry = try Self.catalogueEntry(named: normalized, in: db) else {
                throw ServiceError(.notFound, "no ingredient is called \"\(name)\" (looked for \"\(normalized)\" among names and aliases)")
            }
            return entry
        }
    }

    /// Adds an entry, or updates the one with the same name (its aliases are replaced).
    public func upsertIngredient(id: UUID, name: String, category: IngredientCategory?, aliases: [String]) async throws -> CatalogueEntry {
        let entry = CatalogueEntry(id: id, name: name, category: category, aliases: aliases)
        guard !entry.name.isEmpty, entry.name.count <= 100 else {
            throw ServiceError(.invalidArgument, "an ingredient name must be 1 to 100 characters; got \"\(name)\"")
        }
        let cleanAliases = Array(Set(entry.aliases.filter { !$0.isEmpty && $0 != entry.name })).sorted()
        return try await write { db in
            try Self.upsert(entry, aliases: cleanAliases, in: db)
        }
    }

    static func upsert(_ entry: CatalogueEntry, aliases: [String], in db: Database) throws -> CatalogueEntry {
        let now = now()
        let existingID = try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM ingredients WHERE name = ?"), arguments: [entry.name])
        let key = existingID ?? entry.id.databaseText
        for alias in aliases {
            let owner = try String.fetchOne(db.cachedStatement(sql: """
                SELECT id FROM ingredients WHERE name = ? AND id != ?
                UNION SELECT ingredientId FROM ingredient_aliases WHERE alias = ? AND ingredientId != ?
                """), arguments: [alias, key, alias, key])
            if owner != nil {
                throw ServiceError(.invalidArgument, "\"\(alias)\" already names another ingredient; an alias can belong to one ingredient only")
            }
        }
        if existingID != nil {
            try db.execute(sql: "UPDATE ingredients SET category = ?, updatedAt = ? WHERE id = ?",
                           arguments: [entry.category?.rawValue, now, key])
        } else {
            try db.execute(sql: "INSERT INTO ingredients (id, name, category, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?)",
                           arguments: [key, entry.name, entry.category?.rawValue, now, now])
        }
        try db.execute(sql: "DELETE FROM ingredient_aliases WHERE ingredientId = ?", arguments: [key])
        for alias in aliases {
            try db.execute(sql: "INSERT INTO ingredient_aliases (ingredientId, alias) VALUES (?, ?)", arguments: [key, alias])
        }
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM ingredients WHERE id = ?"), arguments: [key]) else {
            throw ServiceError(.internalError, "the ingredient just written could not be read back")
        }
        return try catalogueEntry(row, in: db)
    }

    static func catalogueEntry(named name: String, in db: Database) throws -> CatalogueEntry? {
        let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT * FROM ingredients WHERE name = ?
            UNION SELECT i.* FROM ingredients i JOIN ingredient_aliases a ON a.ingredientId = i.id WHERE a.alias = ?
            LIMIT 1
            """), arguments: [name, name])
        return try row.map { try catalogueEntry($0, in: db) }
    }

    static func catalogueEntry(_ row: Row, in db: Database) throws -> CatalogueEntry {
        let aliases = try String.fetchAll(db.cachedStatement(sql: "SELECT alias FROM ingredient_aliases WHERE ingredientId = ? ORDER BY alias"),
                                          arguments: [row["id"] as String])
        var entry = CatalogueEntry(
            id: row.uuid("id") ?? UUID(), name: row["name"], category: (row["category"] as String?).flatMap(IngredientCategory.init),
            aliases: [], createdAt: row["createdAt"], updatedAt: row["updatedAt"])
        entry.aliases = aliases
        return entry
    }

    // MARK: What can I make?

    /// Foods most kitchens always have; ignored by "What can I make?" when asked.
    static let pantryStaples: Set<String> = [
        "salt", "sea salt", "kosher salt", "pepper", "black pepper", "white pepper", "water",
        "oil", "olive oil", "vegetable oil", "sunflower oil", "canola oil",
    ]

    /// Recipes the user can make with `have`, missing at most `maxMissing` foods,
    /// fewest missing first. Names match through normalization and catalogue aliases.
    public func canMake(have: [String], maxMissing: Int, ignoreStaples: Bool) async throws -> [CanMakeResult] {
        guard (0...50).contains(maxMissing) else {
            throw ServiceError(.invalidArgument, "maxMissing is \(maxMissing); it must be 0 to 50")
        }
        return try await pool.read { db in
            // alias → canonical name, for both sides of the match.
            var canonical: [String: String] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT a.alias, i.name FROM ingredient_aliases a JOIN ingredients i ON i.id = a.ingredientId")) {
                canonical[row["alias"]] = row["name"]
            }
            func resolve(_ food: String) -> String { canonical[food] ?? food }
            let owned = Set(have.map { resolve(IngredientParser.normalizeFood($0)) }.filter { !$0.isEmpty })

            var foodsByRecipe: [String: [String]] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT recipeId, food FROM recipe_ingredients WHERE food IS NOT NULL AND food != '' ORDER BY recipeId, position")) {
                let food = resolve(row["food"])
                if !(foodsByRecipe[row["recipeId"], default: []].contains(food)) {
                    foodsByRecipe[row["recipeId"], default: []].append(food)
                }
            }
            var results: [CanMakeResult] = []
            for (recipeID, foods) in foodsByRecipe {
                let needed = ignoreStaples ? foods.filter { !Self.pantryStaples.contains($0) } : foods
                let missing = needed.filter { !owned.contains($0) }
                guard missing.count <= maxMissing else { continue }
                guard let summary = try db.firstRow("SELECT \(Self.summaryColumns) FROM recipes r WHERE r.id = ?", [recipeID],
                                                     Self.summary) else { continue }
                results.append(CanMakeResult(recipe: summary, missing: missing,
                                             matched: foods.count - missing.count, total: foods.count))
            }
            return results.sorted {
                ($0.missing.count, $0.recipe.name.lowercased()) < ($1.missing.count, $1.recipe.name.lowercased())
            }
        }
    }
}
