import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

extension RecipeStore {
    /// Records that a recipe was cooked, with a snapshot of its name (the id is the client's).
    public func addCookLogEntry(
        id: UUID, recipeID: UUID, cookedAt: Date?, rating: Int?, note: String?, servings: Double?
    ) async throws -> CookLogEntry {
        if let rating, !(1...5).contains(rating) {
            throw ServiceError(.invalidArgument, "rating is \(rating); a cook-log rating is 1 to 5 (or left out)")
        }
        if let servings, let problem = ValueRanges.servingsProblem(servings) { throw ServiceError(.invalidArgument, problem) }
        if let problem = note?.sizeProblem("note", characters: RecipeDraft.Limits.textLength) { throw ServiceError(.invalidArgument, problem) }
        return try await write { db in
            if let existing = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM cook_log WHERE id = ?"), arguments: [id.databaseText]) {
                return Self.cookLogEntry(existing)
            }
            let recipe = try Self.fetchRecipe(recipeID, in: db)
            let now = Self.now()
            try db.execute(sql: """
                INSERT INTO cook_log (id, recipeId, recipeName, cookedAt, rating, note, servings, createdAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [id.databaseText, recipeID.databaseText,
                                 // A name stored before names were held to bytes too is copied within them.
                                 recipe.name.cut(toCharacters: RecipeDraft.Limits.nameLength), cookedAt ?? now, rating, note?.composed.nilIfBlank, servings, now])
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM cook_log WHERE id = ?"), arguments: [id.databaseText]) else {
                throw ServiceError(.internalError, "the cook-log entry just written could not be read back")
            }
            return Self.cookLogEntry(row)
        }
    }

    /// Cook-log entries, newest first: for one recipe, or all of them.
    public func cookLog(recipeID: UUID?, limit: Int) async throws -> [CookLogEntry] {
        try await cookLogPage(recipeID: recipeID, limit: limit, after: nil).entries
    }

    /// A page of the cook log, newest first (entries of one moment by id), of one recipe or all: at most `limit`
    /// (1 to 1,000), the entries after `after` (the `next` of the page before), and the `next` of this page when
    /// older ones follow. A page mark is the last entry's id and the moment it was cooked, as stored.
    public func cookLogPage(recipeID: UUID?, limit: Int, after: String?) async throws -> CookLogOps.List.Response {
        guard (1...1_000).contains(limit) else { throw ServiceError(.invalidArgument, "limit is \(limit); it must be 1 to 1000") }
        let start = try after.map { try PageMark.read($0, op: CookLogOps.List.name) }
        return try await pool.read { db in
            // One row past the page tells whether more follow. The recipe's own index serves one recipe's log.
            let sql = """
                SELECT * FROM cook_log WHERE \(recipeID == nil ? "?1 IS NULL" : "recipeId = ?1")
                AND (?2 IS NULL OR cookedAt < ?2 OR (cookedAt = ?2 AND id > ?3))
                ORDER BY cookedAt DESC, id LIMIT ?4
                """
            let rows = try Row.fetchCursor(db.cachedStatement(sql: sql),
                                           arguments: [recipeID?.databaseText, start?.key, start?.id ?? "", limit + 1])
            let (entries, next) = try PageMark.page(of: rows, limit: limit, key: "cookedAt",
                tooLarge: PageMark.tooLargeForOneReply("cook-log entry", op: CookLogOps.List.name, maxLimit: 1_000)) { Self.cookLogEntry($0) }
            return .init(entries: entries, next: next)
        }
    }

    /// Removes a cook-log entry; `false` when it was already gone.
    @discardableResult
    public func deleteCookLogEntry(id: UUID) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM cook_log WHERE id = ?", arguments: [id.databaseText])
            return db.changesCount > 0
        }
    }

    /// A recipe with its cook history, and quantities scaled to `servings` when given.
    public func recipeDetail(_ id: UUID, servings: Double?) async throws -> RecipeDetail {
        if let servings, let problem = ValueRanges.servingsProblem(servings) { throw ServiceError(.invalidArgument, problem) }
        return try readInPlace { db in
            let recipe = try Self.fetchRecipe(id, in: db)
            let cooked = try db.firstRow("SELECT COUNT(*), MAX(cookedAt) FROM cook_log WHERE recipeId = ?", [id.databaseText]) { row in
                (times: row[0, or: 0], last: row[1] as Date?)
            }
            var detail = RecipeDetail(recipe: recipe, timesCooked: cooked?.times ?? 0, lastCookedAt: cooked?.last)
            if let servings {
                guard let base = recipe.servings else {
                    throw ServiceError(.invalidArgument,
                        "\"\(recipe.name)\" does not say how many servings it makes, so it cannot be scaled; set its servings first")
                }
                detail.scaledServings = servings
                detail.scaledIngredients = recipe.ingredients.map { Scaling.scaled($0, by: servings / base) }
            }
            return detail
        }
    }

    static func cookLogEntry(_ row: Row) -> CookLogEntry {
        CookLogEntry(id: row.uuid("id") ?? UUID(), recipeID: row.uuid("recipeId"), recipeName: row["recipeName"],
                     cookedAt: row["cookedAt"], rating: row["rating"], note: row["note"], servings: row["servings"],
                     createdAt: row["createdAt"])
    }
}
