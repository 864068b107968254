import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

extension RecipeStore {
    /// The catalogue, by name; only `category` when given.
    public func listIngredients(category: IngredientCategory?) async throws -> [CatalogueEntry] {
        try await ingredientPage(category: category, limit: nil, after: nil).ingredients
    }

    /// A page of the catalogue by name (only `category` when given): at most `limit` (1 to
    /// `IngredientOps.List.maxLimit`; every entry when `nil`), from after `after` (the `next` of the page before).
    public func ingredientPage(category: IngredientCategory?, limit: Int?, after: String?) async throws -> IngredientOps.List.Response {
        let limit = try PageMark.limit(limit, max: IngredientOps.List.maxLimit)
        let start = try after.map { try PageMark.read($0, op: IngredientOps.List.name) }
        return try await pool.read { db in
            // Names are unique; the id beside the name keeps the mark's form the same as other lists'. One row past
            // the page tells whether more follow.
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT * FROM ingredients WHERE (?1 IS NULL OR category = ?1) AND (name, id) > (?2, ?3) ORDER BY name, id LIMIT ?4
                """), arguments: [category?.rawValue, start?.key ?? "", start?.id ?? "", limit.map { $0 + 1 } ?? -1])
            let (entries, next) = try PageMark.page(of: rows, limit: limit, key: "name",
                tooLarge: PageMark.tooLargeForOneReply("catalogue entry", op: IngredientOps.List.name, maxLimit: IngredientOps.List.maxLimit)) { try Self.catalogueEntry($0, in: db) }
            return .init(ingredients: entries, next: next)
        }
    }

    /// The entry whose name or alias is `name` (normalized first: "Scallions" finds "spring onion").
    public func findIngredient(_ name: String) async throws -> CatalogueEntry {
        // Names and aliases are at most `nameLength` characters: a longer one is no entry's, and is not read through
        // (nor said back whole).
        guard name.isWithin(characters: CatalogueLimits.nameLength) else {
            throw ServiceError(.invalidArgument, "the name to find is \(name.count) characters (\"\(name.prefix(40))…\"); ingredient names and aliases are at most \(CatalogueLimits.nameLength)")
        }
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
        // Text is stored composed (NFC), as a recipe's is: a name is also its record's id across replicas.
        let entry = CatalogueEntry(id: id, name: name.composed, category: category, aliases: aliases.map(\.composed))
        guard !entry.name.isEmpty, entry.name.isWithin(characters: CatalogueLimits.nameLength) else {
            throw ServiceError(.invalidArgument, "an ingredient name must be 1 to \(CatalogueLimits.nameLength) characters; got \"\(name.prefix(80))\" (\(name.count) characters)")
        }
        let cleanAliases = Array(Set(entry.aliases.filter { !$0.isEmpty && $0 != entry.name })).sorted()
        if let problem = CatalogueLimits.aliasesProblem(cleanAliases) { throw ServiceError(.invalidArgument, problem) }
        return try await write { db in
            try Self.upsert(entry, aliases: cleanAliases, in: db)
        }
    }

    /// Whether `alias` is the name or an alias of an entry other than the one of row id `key`.
    static func aliasTaken(_ alias: String, byOtherThan key: String, in db: Database) throws -> Bool {
        try String.fetchOne(db.cachedStatement(sql: """
            SELECT id FROM ingredients WHERE name = ? AND id != ?
            UNION SELECT ingredientId FROM ingredient_aliases WHERE alias = ? AND ingredientId != ?
            """), arguments: [alias, key, alias, key]) != nil
    }

    /// The name of the entry of row id `key`, if there is one.
    static func ingredientName(rowID key: String, in db: Database) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT name FROM ingredients WHERE id = ?"), arguments: [key])
    }

    static func upsert(_ entry: CatalogueEntry, aliases: [String], in db: Database) throws -> CatalogueEntry {
        let now = now()
        let existingID = try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM ingredients WHERE name = ?"), arguments: [entry.name])
        let key = existingID ?? entry.id.databaseText
        if existingID == nil, let owner = try ingredientName(rowID: key, in: db) {
            throw ServiceError(.invalidArgument, "the id \(key) is the ingredient \"\(owner.prefix(100))\"'s; an id names one ingredient: "
                               + "leave it out for a new one, or send the name \"\(owner.prefix(100))\" to change that one")
        }
        for alias in aliases where try aliasTaken(alias, byOtherThan: key, in: db) {
            throw ServiceError(.invalidArgument, "\"\(alias)\" already names another ingredient; an alias can belong to one ingredient only")
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
            try db.cachedStatement(sql: "INSERT INTO ingredient_aliases (ingredientId, alias) VALUES (?, ?)").execute(arguments: [key, alias])
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

    /// The most foods a can-make question may list.
    public static let maxHaveFoods = 500

    /// What can be made with `have`: the best `limit` recipes missing at most `maxMissing` foods (fewest missing
    /// first, then by name), and how many qualify in all. Names match through normalization and catalogue aliases.
    ///
    /// It reads every recipe's foods, once, by column position (one pass over the ingredient lines in recipe
    /// order), and reads a summary only for the results it returns; like a search, it is stopped with an error
    /// past the client-read limit rather than holding a reader for as long as the collection makes it take.
    public func canMake(have: [String], maxMissing: Int, ignoreStaples: Bool, limit: Int = RecipeOps.CanMake.defaultLimit) async throws
        -> (results: [CanMakeResult], matching: Int) {
        guard (0...50).contains(maxMissing) else {
            throw ServiceError(.invalidArgument, "maxMissing is \(maxMissing); it must be 0 to 50")
        }
        guard (1...RecipeListQuery.maxLimit).contains(limit) else {
            throw ServiceError(.invalidArgument, "limit is \(limit); it must be 1 to \(RecipeListQuery.maxLimit)")
        }
        guard have.count <= Self.maxHaveFoods else {
            throw ServiceError(.invalidArgument, "have lists \(have.count) foods; it may list at most \(Self.maxHaveFoods)")
        }
        if let long = have.first(where: { !$0.isWithin(characters: CatalogueLimits.nameLength) }) {
            throw ServiceError(.invalidArgument,
                "have holds a food of \(long.count) characters (\"\(long.prefix(40))…\"); a food name may be at most \(CatalogueLimits.nameLength)")
        }
        let normalizedHave = have.map(IngredientParser.normalizeFood)
        return try await readWithinClientLimit { db in
            try Self.canMake(have: normalizedHave, maxMissing: maxMissing, ignoreStaples: ignoreStaples, limit: limit, in: db)
        } stopped: { limit in
            ServiceError(.invalidArgument,
                "can-make was stopped after \(limit) of work, the most one question may take: it reads the ingredients of every recipe, and this collection holds more than can be read in that time")
        }
    }

    private static func canMake(have: [String], maxMissing: Int, ignoreStaples: Bool, limit: Int, in db: Database) throws
        -> (results: [CanMakeResult], matching: Int) {
        // alias → canonical name, for both sides of the match.
        var canonical: [String: String] = [:]
        try db.forEachRow("SELECT a.alias, i.name FROM ingredient_aliases a JOIN ingredients i ON i.id = a.ingredientId", []) { row in
            if let alias: String = row[0], let name: String = row[1] { canonical[alias] = name }
        }
        func resolve(_ food: String) -> String { canonical[food] ?? food }
        let owned = Set(have.map(resolve).filter { !$0.isEmpty })

        // What a recipe needs and lacks, from its foods (deduplicated, in line order, aliases resolved).
        func missing(from foods: [String]) -> [String] {
            (ignoreStaples ? foods.filter { !pantryStaples.contains($0) } : foods).filter { !owned.contains($0) }
        }
        // Only the id and the count of missing foods are kept per qualifying recipe (a few dozen bytes: with
        // `maxMissing` 50 every recipe qualifies, and keeping each one's foods took ~20 MB a question at 30k recipes,
        // times the readers answering at once). The few returned have their foods read again below.
        struct Candidate {
            var recipeID: String
            var missing: Int
        }
        var candidates: [Candidate] = []
        var current: (id: String, foods: [String])?
        func finish() {
            guard let (id, foods) = current else { return }
            let count = missing(from: foods).count
            if count <= maxMissing { candidates.append(Candidate(recipeID: id, missing: count)) }
        }
        // The lines come grouped by recipe (the (recipeId, position) index), so one recipe is gathered at a time.
        try db.forEachRow("SELECT recipeId, food FROM recipe_ingredients WHERE food IS NOT NULL AND food != '' ORDER BY recipeId, position", []) { row in
            guard let id: String = row[0], let text: String = row[1] else { return }
            let food = resolve(text)
            if current?.id != id {
                finish()
                current = (id, [])
            }
            if !current!.foods.contains(food) { current!.foods.append(food) }
        }
        finish()

        // Fewest missing first, then by name: only the candidates that can still be among the first `limit` by their
        // count of missing foods need their names.
        candidates.sort { $0.missing < $1.missing }
        let cutoff = candidates.count > limit ? candidates[limit - 1].missing : Int.max
        var ranked: [(missing: Int, name: String, id: String)] = []
        for candidate in candidates where candidate.missing <= cutoff {
            let id = candidate.recipeID
            let title = try db.firstRow("SELECT title FROM recipes WHERE id = ?", [id]) { $0[0, or: ""] as String } ?? ""
            ranked.append((candidate.missing, title.lowercased(), id))
        }
        ranked.sort { ($0.missing, $0.name, $0.id) < ($1.missing, $1.name, $1.id) }
        var results: [CanMakeResult] = []
        for (_, _, id) in ranked.prefix(limit) {
            guard let summary = try db.firstRow("SELECT \(summaryColumns) FROM recipes r WHERE r.id = ?", [id], summary) else {
                continue
            }
            var foods: [String] = []
            try db.forEachRow("SELECT food FROM recipe_ingredients WHERE recipeId = ? AND food IS NOT NULL AND food != '' ORDER BY position", [id]) { row in
                guard let text: String = row[0] else { return }
                let food = resolve(text)
                if !foods.contains(food) { foods.append(food) }
            }
            let lacking = missing(from: foods)
            results.append(CanMakeResult(recipe: summary, missing: lacking, matched: foods.count - lacking.count, total: foods.count))
        }
        return (results, candidates.count)
    }
}
