import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

extension RecipeStore {
    /// Loads the sample books, starter recipes and catalogue (seed 004), once:
    /// when they are already there nothing changes and `loaded` is `false`.
    public func loadSamples() async throws -> SampleLoadResult {
        try await write { db in
            let counts = SampleLoadResult(loaded: false, books: SampleData.books.count, recipes: SampleData.recipes.count,
                                          ingredients: SampleData.catalogue.count)
            // Loaded already when a starter is here (a person's own recipe given a starter's id is not one).
            let starters = SampleData.recipes.map { SampleData.recipeID($0.number).databaseText }
            if try Row.fetchOne(db, sql: "SELECT 1 FROM recipes WHERE origin = 'starter' AND id IN (\(databaseQuestionMarks(count: starters.count)))",
                                arguments: StatementArguments(starters)) != nil {
                return counts
            }
            let date = SampleData.createdAt
            // A sample book a person deleted (here, or on a replica whose delete reached this one) stays deleted: the
            // samples are defaults, and on a replica that loads them before the delete arrives the delete replaces them.
            var deletedBooks: Set<UUID> = []
            for book in SampleData.books where try Self.fetchBookIfAny(book.id, in: db) == nil {
                if let record = try SyncLog.storedRecord(.book, book.id.uuidString, in: db), !record.isLive {
                    deletedBooks.insert(book.id)
                    continue
                }
                try db.execute(sql: "INSERT INTO books (id, title, author, createdAt, updatedAt) VALUES (?, ?, ?, ?, ?)",
                               arguments: [book.id.databaseText, book.title, book.author, date, date])
            }
            var written: [String] = []
            for (index, item) in SampleData.catalogue.enumerated() {
                var entry = CatalogueEntry(id: SampleData.id("5A3F", index + 1), name: item.name, category: item.category,
                                           aliases: item.aliases, createdAt: date, updatedAt: date)
                guard try Self.catalogueEntry(named: entry.name, in: db) == nil else { continue }
                // Entries a person made first keep what they hold: a sample's id or alias they took is left to them
                // (the sample gets the id made from its name, the same on every replica, and does without that alias),
                // so loading the samples never fails on them.
                if try Self.ingredientName(rowID: entry.id.databaseText, in: db) != nil {
                    let derived = SyncLog.derivedIngredientID(entry.name)
                    entry.id = try Self.ingredientName(rowID: derived, in: db) == nil ? UUID(uuidString: derived)! : UUID.timeOrdered()
                }
                let aliases = try entry.aliases.filter { try !Self.aliasTaken($0, byOtherThan: entry.id.databaseText, in: db) }
                written.append(try Self.upsert(entry, aliases: aliases, in: db).id.databaseText)
            }
            for sample in SampleData.recipes {
                let id = SampleData.recipeID(sample.number)
                // A recipe already here with a sample's id (a person's, given it by a client) keeps it.
                if try SyncLog.exists(id.databaseText, in: "recipes", db) { continue }
                var draft = sample.draft
                draft.origin = .starter
                // Its row is unlinked from a deleted book; its record still names it (SyncLog.capture).
                if let book = draft.bookID, deletedBooks.contains(book) { draft.bookID = nil }
                try Self.insertRecipe(id, draft, createdAt: date, updatedAt: date, in: db)
            }
            // Catalogue rows written above carry today's date; samples are dated alike everywhere (only they: an entry
            // of a person's with a sample's id keeps its dates).
            for id in written {
                try db.cachedStatement(sql: "UPDATE ingredients SET createdAt = ?, updatedAt = ? WHERE id = ?").execute(arguments: [date, date, id])
            }
            return SampleLoadResult(loaded: true, books: counts.books, recipes: counts.recipes, ingredients: counts.ingredients)
        }
    }

    /// `true` when the database holds no recipes, books or catalogue entries.
    public func isEmpty() async throws -> Bool {
        try await pool.read { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT COUNT(*) FROM recipes) + (SELECT COUNT(*) FROM books) + (SELECT COUNT(*) FROM ingredients)") == 0
        }
    }

    /// Counts for monitoring.
    public func stats() async throws -> StorageStats {
        let databaseURL = folder.appendingPathComponent(RecipeVault.databaseFileName)
        var databaseBytes = 0
        for suffix in ["", "-wal"] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: databaseURL.path + suffix)
            databaseBytes += (attributes?[.size] as? Int) ?? 0
        }
        let bytes = databaseBytes
        return try await pool.read { db in
            func count(_ sql: String) throws -> Int { try Int.fetchOne(db, sql: sql) ?? 0 }
            return StorageStats(
                recipes: try count("SELECT COUNT(*) FROM recipes"),
                starters: try count("SELECT COUNT(*) FROM recipes WHERE origin = 'starter'"),
                favorites: try count("SELECT COUNT(*) FROM recipes WHERE isFavorite"),
                books: try count("SELECT COUNT(*) FROM books"),
                ingredients: try count("SELECT COUNT(*) FROM ingredients"),
                cookLogEntries: try count("SELECT COUNT(*) FROM cook_log"),
                photos: try count("SELECT COUNT(DISTINCT sha256) FROM recipe_photos"),
                photoBytes: try count("SELECT COALESCE(SUM(byteCount), 0) FROM (SELECT DISTINCT sha256, byteCount FROM recipe_photos)"),
                databaseBytes: bytes,
                schemaVersion: try Migrations.migrator.appliedMigrations(db).last ?? "none",
                problem: databaseProblem())
        }
    }
}
