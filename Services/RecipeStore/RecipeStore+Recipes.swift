import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
import Synchronization

extension RecipeStore {
    // MARK: Reading

    /// The recipe with `id`, or `not_found`.
    public func recipe(_ id: UUID) async throws -> Recipe {
        try readInPlace { db in try Self.fetchRecipe(id, in: db) }
    }

    static func fetchRecipe(_ id: UUID, in db: Database) throws -> Recipe {
        guard let recipe = try storedRecipe(id.databaseText, in: db) else {
            throw ServiceError(.notFound, "no recipe has id \(id.uuidString)")
        }
        return recipe
    }

    /// The recipe stored under `id` (its text), or `nil` when there is none.
    static func storedRecipe(_ id: String, in db: Database) throws -> Recipe? {
        try db.firstRow(selectRecipe, [id]) { row in try assemble(row, in: db) }
    }

    /// The columns `assemble` reads by position, in this order, each named as in `recipes`; the text fields' follow.
    enum FixedColumn: Int32, CaseIterable {
        case id, title, servings, prepTimeMinutes, cookTimeMinutes, sourceType, bookId, sourcePageNumber,
             isFavorite, rating, origin, createdAt, updatedAt, version
    }
    static let recipeColumns = (FixedColumn.allCases.map { "\($0)" } + RecipeTextField.all.map(\.column)).joined(separator: ", ")
    /// One recipe's row, as `assemble` reads it.
    static let selectRecipe = "SELECT \(recipeColumns) FROM recipes WHERE id = ?"

    /// A recipe from its row (selected as `recipeColumns`) and its child tables (never from split text).
    static func assemble(_ row: StatementRow, in db: Database) throws -> Recipe {
        let id: String = row[FixedColumn.id, or: ""]
        var ingredients: [IngredientLine] = []
        try db.forEachRow("""
            SELECT id, text, quantity, quantityMax, unit, food, note FROM recipe_ingredients WHERE recipeId = ? ORDER BY position
            """, [id]) { line in
            let lineID = line.uuid(0) ?? UUID()
            // The stored parse is what matching used; only lines from before the parse existed are parsed now.
            guard let food: String = line[5] else {
                ingredients.append(IngredientLine(id: lineID, text: line[1, or: ""]))
                return
            }
            ingredients.append(IngredientLine(id: lineID, text: line[1, or: ""], quantity: line[2], quantityMax: line[3],
                                              unit: line[4], food: food, note: line[6]))
        }
        var instructions: [Instruction] = []
        try db.forEachRow("SELECT id, text, section, title FROM recipe_instructions WHERE recipeId = ? ORDER BY position", [id]) { step in
            instructions.append(Instruction(id: step.uuid(0) ?? UUID(), text: step[1, or: ""], section: step[2], title: step[3]))
        }
        var keywords: [String] = []
        try db.forEachRow("SELECT keyword FROM recipe_keywords WHERE recipeId = ? ORDER BY position", [id]) { keyword in
            keywords.append(keyword[0, or: ""])
        }
        var photos: [PhotoInfo] = []
        try db.forEachRow("""
            SELECT id, position, sha256, byteCount, mediaType FROM recipe_photos WHERE recipeId = ? ORDER BY position
            """, [id]) { photo in
            photos.append(PhotoInfo(id: photo.uuid(0) ?? UUID(), position: photo[1, or: 0], sha256: photo[2, or: ""],
                                    byteCount: photo[3, or: 0], mediaType: photo[4, or: ""]))
        }
        typealias C = FixedColumn
        var recipe = Recipe(
            id: row.uuid(C.id) ?? UUID(), name: row[C.title, or: ""], ingredients: ingredients, instructions: instructions,
            servings: row[C.servings], keywords: keywords, sourceType: SourceType(rawValue: row[C.sourceType, or: "manual"]) ?? .manual,
            bookID: row.uuid(C.bookId), sourcePageNumber: row[C.sourcePageNumber],
            isFavorite: row[C.isFavorite, or: false], rating: row[C.rating, or: 0],
            origin: RecipeOrigin(rawValue: row[C.origin, or: "custom"]) ?? .custom, photos: photos,
            createdAt: row[C.createdAt, or: Date(timeIntervalSince1970: 0)], updatedAt: row[C.updatedAt, or: Date(timeIntervalSince1970: 0)],
            version: row[C.version, or: 1])
        for (offset, field) in RecipeTextField.all.enumerated() {
            recipe[keyPath: field.recipe] = row[Int32(C.allCases.count + offset)]
        }
        // Recipes from before the durations' text was kept have only the minutes.
        if recipe.prepTime == nil { recipe.prepTime = (row[C.prepTimeMinutes] as Int?).map { ISODuration.text(minutes: $0) } }
        if recipe.cookTime == nil { recipe.cookTime = (row[C.cookTimeMinutes] as Int?).map { ISODuration.text(minutes: $0) } }
        return recipe
    }

    // MARK: Writing

    /// Creates a recipe with the client's `id`. Creating an id that exists returns
    /// the stored recipe unchanged, so a create retried after a lost reply lands once.
    public func createRecipe(id: UUID, _ draft: RecipeDraft, createdAt: Date? = nil) async throws -> (recipe: Recipe, created: Bool) {
        try draft.validate()
        if let createdAt, !(Date(timeIntervalSince1970: 0)...Self.now().addingTimeInterval(86_400)).contains(createdAt) {
            throw ServiceError(.invalidArgument, "createdAt is \(createdAt.formatted(.iso8601)); it must be after 1970 and not in the future")
        }
        let prepared = PreparedDraft(draft)
        return try await write { db in
            if let existing = try Self.storedRecipe(id.databaseText, in: db) {
                return (existing, false)
            }
            let now = Self.now()
            try Self.checkBook(draft.bookID, in: db)
            return (try Self.insertRecipe(id, prepared, createdAt: createdAt.map { min(Self.nearestMillisecond($0), now) } ?? now, updatedAt: now, in: db), true)
        }
    }

    /// Replaces a recipe's content with `draft`, if nobody changed it since `expectedVersion`.
    public func updateRecipe(id: UUID, expectedVersion: Int, _ draft: RecipeDraft) async throws -> Recipe {
        // The count of keywords and the bytes of text against what the recipe has are checked in the transaction, below.
        try draft.validate(keeping: Set(draft.keywords), total: false)
        let prepared = PreparedDraft(draft)
        return try await write { db in
            let current = try Self.fetchRecipe(id, in: db)
            try Self.checkWritable(current)
            guard current.version == expectedVersion else {
                throw ServiceError(.conflict,
                    "\"\(current.name)\" changed since version \(expectedVersion) (it is at version \(current.version) now); fetch it again and reapply your change")
            }
            if let problem = draft.keywordCountProblem(keeping: Set(current.keywords)) { throw ServiceError(.invalidArgument, problem) }
            if let problem = draft.textBytesProblem(had: RecipeDraft(current).textBytes) { throw ServiceError(.invalidArgument, problem) }
            try Self.checkBook(draft.bookID, in: db)
            try db.execute(
                sql: "UPDATE recipes SET version = version + 1, updatedAt = ? WHERE id = ?",
                arguments: [StoredDate(Self.now()), id.databaseText])
            return try Self.writeFields(of: prepared, to: id, in: db)
        }
    }

    /// Deletes a recipe (not a starter). Its cook-log entries stay, unlinked.
    /// Returns `false` when it was already gone.
    @discardableResult
    public func deleteRecipe(id: UUID) async throws -> Bool {
        let deleted = try await write { db -> Bool in
            guard let recipe = try Self.storedRecipe(id.databaseText, in: db) else { return false }
            try Self.checkWritable(recipe)
            try SearchIndex.remove(recipeID: id.databaseText, in: db)
            try db.execute(sql: "DELETE FROM recipes WHERE id = ?", arguments: [id.databaseText])
            return true
        }
        if deleted { await collectUnusedPhotos() }
        return deleted
    }

    /// A `custom` copy of any recipe (starters included), with its photos; `newID` is the client's.
    public func duplicateRecipe(id: UUID, newID: UUID, name: String?) async throws -> Recipe {
        try await write { db in
            if (try Row.fetchOne(db.cachedStatement(sql: "SELECT id FROM recipes WHERE id = ?"), arguments: [newID.databaseText])) != nil {
                return try Self.fetchRecipe(newID, in: db) // a retried duplicate
            }
            let source = try Self.fetchRecipe(id, in: db)
            var draft = RecipeDraft(source)
            draft.name = name ?? source.name
            draft.ingredients = draft.ingredients.map { RecipeDraft.Line(text: $0.text) }
            draft.instructions = draft.instructions.map { RecipeDraft.Step(text: $0.text, section: $0.section, title: $0.title) }
            draft.origin = .custom
            // A copy keeps every keyword its source has, and all its text.
            try draft.validate(keeping: Set(source.keywords), total: false)
            if let problem = draft.textBytesProblem(had: RecipeDraft(source).textBytes) { throw ServiceError(.invalidArgument, problem) }
            let now = Self.now()
            try Self.insertRecipe(newID, draft, createdAt: now, updatedAt: now, in: db)
            for photo in source.photos {
                try db.execute(
                    sql: "INSERT INTO recipe_photos (id, recipeId, position, sha256, byteCount, mediaType) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [Self.photoID(recipeID: newID, sha256: photo.sha256).databaseText, newID.databaseText, photo.position,
                               photo.sha256, photo.byteCount, photo.mediaType])
            }
            return try Self.fetchRecipe(newID, in: db)
        }
    }

    /// Marks a recipe as a favourite or not.
    public func setFavorite(id: UUID, _ isFavorite: Bool) async throws -> Recipe {
        try await changeFlag(id: id, sql: "isFavorite = ?", value: isFavorite)
    }

    /// Rates a recipe 0 (unrated) to 5.
    public func rate(id: UUID, _ rating: Int) async throws -> Recipe {
        guard (0...5).contains(rating) else {
            throw ServiceError(.invalidArgument, "rating is \(rating); it must be 0 (unrated) to 5")
        }
        return try await changeFlag(id: id, sql: "rating = ?", value: rating)
    }

    private func changeFlag(id: UUID, sql: String, value: some DatabaseValueConvertible & Sendable) async throws -> Recipe {
        try await write { db in
            try Self.checkWritable(try Self.fetchRecipe(id, in: db))
            try db.execute(
                sql: "UPDATE recipes SET \(sql), version = version + 1, updatedAt = ? WHERE id = ?",
                arguments: [value, Self.now(), id.databaseText])
            return try Self.fetchRecipe(id, in: db)
        }
    }

    // MARK: Helpers

    /// Starters are read-only everywhere: the rule lives here, not in clients.
    static func checkWritable(_ recipe: Recipe) throws {
        if recipe.origin == .starter {
            throw ServiceError(.starterReadOnly,
                "\"\(recipe.name)\" is a starter recipe and cannot be changed or deleted; duplicate it to get your own copy")
        }
    }

    static func checkBook(_ bookID: UUID?, in db: Database) throws {
        guard let bookID else { return }
        guard try Row.fetchOne(db.cachedStatement(sql: "SELECT id FROM books WHERE id = ?"), arguments: [bookID.databaseText]) != nil else {
            throw ServiceError(.notFound, "no book has id \(bookID.uuidString); create the book first or leave bookID out")
        }
    }

    /// Stores a new recipe `id` holding every field of `draft` (its origin too) and returns it as stored.
    @discardableResult
    static func insertRecipe(_ id: UUID, _ draft: PreparedDraft, createdAt: Date, updatedAt: Date, in db: Database) throws -> Recipe {
        try writeFields(of: draft, to: id, newRow: NewRecipeRow(origin: draft.draft.origin, createdAt: StoredDate(createdAt),
                                                             updatedAt: StoredDate(updatedAt)), in: db)
    }

    @discardableResult
    static func insertRecipe(_ id: UUID, _ draft: RecipeDraft, createdAt: Date, updatedAt: Date, in db: Database) throws -> Recipe {
        try insertRecipe(id, PreparedDraft(draft), createdAt: createdAt, updatedAt: updatedAt, in: db)
    }

    /// What a new recipe's row holds beside the draft's fields (it starts at version 1).
    struct NewRecipeRow {
        var origin: RecipeOrigin
        var createdAt: any DatabaseValueConvertible
        var updatedAt: any DatabaseValueConvertible
    }

    /// Writes every field of `draft` to recipe `id`, replacing its child rows and its search entry,
    /// and returns the recipe as stored (see `readBack`). With `newRow`, the recipe is new: its row is
    /// inserted whole, by the one statement that adds recipes (every index entry written once).
    @discardableResult
    static func writeFields(of draft: RecipeDraft, to id: UUID, newRow: NewRecipeRow? = nil, in db: Database) throws -> Recipe {
        try writeFields(of: PreparedDraft(draft), to: id, newRow: newRow, in: db)
    }

    @discardableResult
    static func writeFields(of prepared: PreparedDraft, to id: UUID, newRow: NewRecipeRow? = nil, in db: Database) throws -> Recipe {
        let draft = prepared.draft
        let key = id.databaseText
        var fields: [(any DatabaseValueConvertible)?] = [
            prepared.name, prepared.prepMinutes, prepared.cookMinutes, draft.servings,
            prepared.totalMinutes, draft.sourceType.rawValue, draft.sourcePageNumber, draft.isFavorite, draft.rating, draft.bookID?.databaseText,
        ]
        fields += RecipeTextField.all.map { draft[keyPath: $0.draft] }
        if let newRow {
            try db.cachedStatement(sql: insertRow)
                .execute(arguments: StatementArguments([key, newRow.origin.rawValue, newRow.createdAt, newRow.updatedAt] + fields))
            // A recipe made again under the id of a deleted one, here or by a sync alike: cook-log entries that still name it link to it.
            try SyncLog.relinkWaiting(for: .recipe, key, in: db)
        } else {
            try db.cachedStatement(sql: updateFields).execute(arguments: StatementArguments(fields + [key]))
        }
        // Lines keep their ids when the client sent them back, so edits do not churn identities. (A new recipe has no
        // child rows or search entry to replace: its row did not exist, and theirs go with it.)
        if newRow == nil { try db.cachedStatement(sql: "DELETE FROM recipe_ingredients WHERE recipeId = ?").execute(arguments: [key]) }
        for (position, (line, read)) in zip(draft.ingredients, prepared.lines).enumerated() {
            let lineID = try freeID(line.id, table: "recipe_ingredients", recipe: key, position: position, in: db)
            try db.cachedStatement(sql: """
                INSERT INTO recipe_ingredients (id, recipeId, position, text, quantity, quantityMax, unit, food, note)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [lineID.databaseText, key, position, read.text, read.parse.quantity, read.parse.quantityMax,
                                         read.parse.unit, read.parse.food, read.parse.note])
        }
        if newRow == nil { try db.cachedStatement(sql: "DELETE FROM recipe_instructions WHERE recipeId = ?").execute(arguments: [key]) }
        for (position, step) in draft.instructions.enumerated() {
            try db.cachedStatement(sql: "INSERT INTO recipe_instructions (id, recipeId, position, text, section, title) VALUES (?, ?, ?, ?, ?, ?)")
                .execute(arguments: [try freeID(step.id, table: "recipe_instructions", recipe: key, position: position, in: db).databaseText, key, position,
                                     step.text.trimmingWhitespace(), step.section, step.title])
        }
        if newRow == nil { try db.cachedStatement(sql: "DELETE FROM recipe_keywords WHERE recipeId = ?").execute(arguments: [key]) }
        // Keywords are a set: the same keyword twice is kept once (sync merges them by their text).
        var seenKeywords = Set<String>()
        let keywords = draft.keywords.map { $0.trimmingWhitespace(newlines: false) }.filter { seenKeywords.insert($0).inserted }
        for (position, keyword) in keywords.enumerated() {
            try db.cachedStatement(sql: "INSERT INTO recipe_keywords (recipeId, position, keyword) VALUES (?, ?, ?)")
                .execute(arguments: [key, position, keyword])
        }
        // Indexed from the values just written (as stored: trimmed, keywords once each), not read back.
        try SearchIndex.index(recipeID: key, name: prepared.name, description: draft.description, ingredients: prepared.lines.map(\.text),
                              keywords: keywords, notes: draft.notes, replacing: newRow == nil, in: db)
        return try readBack(id, in: db)
    }

    /// A draft made ready for the writer: what writing it needs that does not depend on the database (the
    /// name and each ingredient line trimmed, the lines parsed, the times in minutes), worked out before the
    /// write transaction, on the caller's task. The store has one writer and every write waits for it:
    /// parsing the lines inside was about a tenth of its time at 8 clients creating (storage-bench).
    struct PreparedDraft: Sendable {
        var draft: RecipeDraft
        var name: String
        /// Each ingredient line as stored (trimmed), with its parse; in the draft's order.
        var lines: [(text: String, parse: ParsedIngredient)]
        var prepMinutes: Int?
        var cookMinutes: Int?
        /// The total time, or prep and cook added up when only they are given.
        var totalMinutes: Int?

        init(_ draft: RecipeDraft) {
            // Text is stored composed (NFC): one form on every replica, whatever form a client sent.
            let draft = draft.composed
            self.draft = draft
            name = draft.name.trimmingWhitespace()
            lines = draft.ingredients.map { line in
                let text = line.text.trimmingWhitespace()
                return (text, IngredientParser.parse(text))
            }
            prepMinutes = draft.prepTime.flatMap(ISODuration.minutes)
            cookMinutes = draft.cookTime.flatMap(ISODuration.minutes)
            totalMinutes = draft.totalTime.flatMap(ISODuration.minutes)
                ?? (prepMinutes == nil && cookMinutes == nil ? nil : (prepMinutes ?? 0) + (cookMinutes ?? 0))
        }
    }

    /// The columns a draft's fields are written to, in the order `writeFields` passes them.
    private static let fieldColumns = [
        "title", "prepTimeMinutes", "cookTimeMinutes", "servings", "totalTimeMinutes",
        "sourceType", "sourcePageNumber", "isFavorite", "rating", "bookId",
    ] + RecipeTextField.all.map(\.column)
    /// Writes a draft's fields to its row (the arguments in `fieldColumns` order, then the id).
    private static let updateFields = "UPDATE recipes SET \(fieldColumns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"
    /// Adds a recipe's row: id, origin, dates, then the fields in `fieldColumns` order.
    private static let insertRow = """
        INSERT INTO recipes (id, origin, createdAt, updatedAt, version, \(fieldColumns.joined(separator: ", ")))
        VALUES (?, ?, ?, ?, 1, \(databaseQuestionMarks(count: fieldColumns.count)))
        """

    /// Reads the recipe just written back and encodes it as a reply would, inside the
    /// transaction: what cannot be read back and sent is rolled back, never committed.
    static func readBack(_ id: UUID, in db: Database) throws -> Recipe {
        let key = id.databaseText
        guard let (recipe, createdAt) = try db.firstRow(selectRecipe, [key], { row in
            (try assemble(row, in: db), row.storedText(FixedColumn.createdAt.rawValue))
        }) else { throw ServiceError(.notFound, "no recipe has id \(id.uuidString)") }
        do {
            _ = try readBackEncoder.encode(recipe)
        } catch {
            throw ServiceError(.invalidArgument, "the recipe could not be stored as sent: a value cannot be read back (\(error)); nothing was changed")
        }
        ReadBack.keep(ReadBack(id: key, recipe: recipe, createdAt: createdAt, connection: UInt(bitPattern: db.sqliteConnection),
                               changes: db.totalChangesCount))
        return recipe
    }

    /// The recipe a write read back last, as the tables held it then: the change capture that follows reads the same
    /// recipe for the feed's record, and takes this instead while no row has changed since (SQLite's count of changed
    /// rows on that writing connection says so), so a create or an edit assembles its recipe once, not twice. Kept
    /// per process and matched by connection: several stores in one process (tests) each have their own count; forgotten
    /// as every write and every sync apply begins, and when a store closes.
    struct ReadBack: Sendable {
        let id: String
        let recipe: Recipe
        let createdAt: String?
        /// The writing connection it was read on, and its count of changed rows then.
        let connection: UInt
        let changes: Int

        private static let last = Mutex<ReadBack?>(nil)

        static func keep(_ readBack: ReadBack) {
            last.withLock { $0 = readBack }
        }

        static func forget() {
            last.withLock { $0 = nil }
        }

        /// The read-back of `id`, if it is still what the tables hold (and forgets it either way).
        static func take(_ id: String, in db: Database) -> ReadBack? {
            let connection = UInt(bitPattern: db.sqliteConnection), changes = db.totalChangesCount
            return last.withLock { last -> ReadBack? in
                guard let kept = last, kept.id == id, kept.connection == connection else { return nil }
                last = nil
                return kept.changes == changes ? kept : nil
            }
        }
    }

    private static let readBackEncoder = WireJSONEncoder()

    /// `id` when no other recipe's line uses it (ids are global), else a new one.
    /// The id a line at `position` of `recipe` is stored under: its own, unless a line before it in the same list
    /// has it (a replica's record can hold one twice; a client's is refused), then one made from the recipe, the
    /// list, the position and that id — the same on every replica that writes the same record. A line id names a
    /// line within its recipe: another recipe's line may have it too (v22).
    private static func freeID(_ id: UUID?, table: String, recipe: String, position: Int, in db: Database) throws -> UUID {
        guard let id else { return UUID.timeOrdered() }
        let taken = try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(table) WHERE recipeId = ? AND id = ?"),
                                     arguments: [recipe, id.databaseText]) != nil
        return taken ? DerivedID.uuid("line|\(recipe)|\(table)|\(position)|\(id.uuidString)") : id
    }

    /// Now, to the millisecond (what the database and the wire keep).
    /// A date given by a client, at the nearest whole millisecond (as every stored date is).
    static func nearestMillisecond(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1_000).rounded() / 1_000)
    }

    static func now() -> Date {
        if let pinned = SyncState.pinned { return Date(timeIntervalSince1970: Double(pinned) / 1_000) }
        return Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1_000).rounded(.down) / 1_000)
    }
}

extension RecipeStore {
    /// Creates many recipes in one transaction (ids that exist are skipped);
    /// returns how many were created. For bulk loads: one commit instead of one per recipe.
    public func importRecipes(_ items: [(id: UUID, draft: RecipeDraft)]) async throws -> Int {
        for item in items { try item.draft.validate() }
        let prepared = items.map { (id: $0.id, draft: PreparedDraft($0.draft)) }
        return try await write { db in
            var created = 0
            let now = Self.now()
            for (id, draft) in prepared {
                if try Row.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM recipes WHERE id = ?"), arguments: [id.databaseText]) != nil { continue }
                try Self.checkBook(draft.draft.bookID, in: db)
                try Self.insertRecipe(id, draft, createdAt: now, updatedAt: now, in: db)
                created += 1
            }
            return created
        }
    }
}
