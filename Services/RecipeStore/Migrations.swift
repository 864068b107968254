import GRDB
import RecipeModel

/// The schema, as versioned migrations that only ever add.
///
/// v1 is the first schema (seed 001's tables and columns); every later version
/// adds columns with `ALTER TABLE … ADD COLUMN` or adds tables (v22 alone makes two
/// tables again, copying every row, to change their primary key), so a file at any
/// older version upgrades in place without losing data.
enum Migrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 recipes") { db in
            try db.execute(sql: """
                CREATE TABLE recipes (
                    id TEXT PRIMARY KEY NOT NULL,
                    title TEXT NOT NULL,
                    summary TEXT,
                    prepTimeMinutes INTEGER,
                    cookTimeMinutes INTEGER,
                    servings REAL,
                    createdAt TEXT NOT NULL,
                    updatedAt TEXT NOT NULL
                );
                CREATE TABLE recipe_ingredients (
                    id TEXT PRIMARY KEY NOT NULL,
                    recipeId TEXT NOT NULL REFERENCES recipes(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    text TEXT NOT NULL,
                    UNIQUE (recipeId, position)
                );
                CREATE TABLE recipe_instructions (
                    id TEXT PRIMARY KEY NOT NULL,
                    recipeId TEXT NOT NULL REFERENCES recipes(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    text TEXT NOT NULL,
                    UNIQUE (recipeId, position)
                );
                """)
        }
        migrator.registerMigration("v2 optional fields") { db in
            // Seed 000's optional fields, then the rest of the schema.org/Recipe fields.
            for column in [
                "notes TEXT", "nutrition TEXT", "website TEXT",
                "recipeYield TEXT", "prepTime TEXT", "cookTime TEXT", "totalTime TEXT", "totalTimeMinutes INTEGER",
                "recipeCategory TEXT", "recipeCuisine TEXT", "author TEXT", "datePublished TEXT",
                "sourceType TEXT NOT NULL DEFAULT 'manual'", "sourcePageNumber INTEGER",
                "isFavorite INTEGER NOT NULL DEFAULT 0", "rating INTEGER NOT NULL DEFAULT 0",
                "origin TEXT NOT NULL DEFAULT 'custom'", "version INTEGER NOT NULL DEFAULT 1",
            ] {
                try db.execute(sql: "ALTER TABLE recipes ADD COLUMN \(column)")
            }
            for column in ["quantity REAL", "quantityMax REAL", "unit TEXT", "food TEXT", "note TEXT"] {
                try db.execute(sql: "ALTER TABLE recipe_ingredients ADD COLUMN \(column)")
            }
            try db.execute(sql: "ALTER TABLE recipe_instructions ADD COLUMN section TEXT")
            try db.execute(sql: """
                CREATE TABLE recipe_keywords (
                    recipeId TEXT NOT NULL REFERENCES recipes(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    keyword TEXT NOT NULL,
                    PRIMARY KEY (recipeId, position)
                );
                CREATE INDEX recipe_ingredients_food ON recipe_ingredients(food);
                CREATE INDEX recipes_cuisine ON recipes(recipeCuisine);
                CREATE INDEX recipes_category ON recipes(recipeCategory);
                """)
        }
        migrator.registerMigration("v3 photos") { db in
            try db.execute(sql: """
                CREATE TABLE recipe_photos (
                    id TEXT PRIMARY KEY NOT NULL,
                    recipeId TEXT NOT NULL REFERENCES recipes(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    sha256 TEXT NOT NULL,
                    byteCount INTEGER NOT NULL,
                    mediaType TEXT NOT NULL,
                    UNIQUE (recipeId, position)
                );
                CREATE INDEX recipe_photos_sha256 ON recipe_photos(sha256);
                """)
        }
        migrator.registerMigration("v4 books") { db in
            try db.execute(sql: """
                CREATE TABLE books (
                    id TEXT PRIMARY KEY NOT NULL,
                    title TEXT NOT NULL,
                    author TEXT,
                    createdAt TEXT NOT NULL,
                    updatedAt TEXT NOT NULL
                );
                ALTER TABLE recipes ADD COLUMN bookId TEXT REFERENCES books(id) ON DELETE SET NULL;
                CREATE INDEX recipes_book ON recipes(bookId);
                """)
        }
        migrator.registerMigration("v5 catalogue") { db in
            try db.execute(sql: """
                CREATE TABLE ingredients (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL UNIQUE,
                    category TEXT,
                    createdAt TEXT NOT NULL,
                    updatedAt TEXT NOT NULL
                );
                CREATE TABLE ingredient_aliases (
                    ingredientId TEXT NOT NULL REFERENCES ingredients(id) ON DELETE CASCADE,
                    alias TEXT NOT NULL,
                    PRIMARY KEY (ingredientId, alias)
                );
                CREATE INDEX ingredient_aliases_alias ON ingredient_aliases(alias);
                """)
        }
        migrator.registerMigration("v6 cook log") { db in
            try db.execute(sql: """
                CREATE TABLE cook_log (
                    id TEXT PRIMARY KEY NOT NULL,
                    recipeId TEXT REFERENCES recipes(id) ON DELETE SET NULL,
                    recipeName TEXT NOT NULL,
                    cookedAt TEXT NOT NULL,
                    rating INTEGER,
                    note TEXT,
                    servings REAL,
                    createdAt TEXT NOT NULL
                );
                CREATE INDEX cook_log_recipe ON cook_log(recipeId, cookedAt);
                CREATE INDEX cook_log_cookedAt ON cook_log(cookedAt);
                """)
        }
        migrator.registerMigration("v7 full-text search") { db in
            // FTS rows are found through an indexed key table: deleting by an
            // UNINDEXED FTS column would scan the whole index on every write.
            try db.execute(sql: """
                CREATE VIRTUAL TABLE recipes_fts USING fts5(
                    name, description, ingredients, keywords, notes,
                    tokenize = 'unicode61 remove_diacritics 2'
                );
                CREATE TABLE recipe_search_keys (
                    recipeId TEXT PRIMARY KEY NOT NULL REFERENCES recipes(id) ON DELETE CASCADE,
                    ftsRowid INTEGER NOT NULL UNIQUE
                );
                """)
            // Index what an older file already holds.
            let ids = try String.fetchAll(db, sql: "SELECT id FROM recipes")
            for id in ids { try SearchIndex.refresh(recipeID: id, in: db) }
        }
        migrator.registerMigration("v8 list indexes") { db in
            // Filters compare without case; the sort keys walk an index instead of sorting the table.
            try db.execute(sql: """
                CREATE INDEX recipes_cuisine_nocase ON recipes(recipeCuisine COLLATE NOCASE);
                CREATE INDEX recipes_category_nocase ON recipes(recipeCategory COLLATE NOCASE);
                CREATE INDEX recipes_by_name ON recipes(lower(title), id);
                CREATE INDEX recipes_by_created ON recipes(createdAt, id);
                CREATE INDEX recipes_by_updated ON recipes(updatedAt, id);
                CREATE INDEX recipes_by_rating ON recipes(rating, id);
                CREATE INDEX recipes_by_total_time ON recipes(COALESCE(totalTimeMinutes, 999999999), id);
                CREATE INDEX recipes_favorite ON recipes(isFavorite);
                CREATE INDEX recipes_origin ON recipes(origin);
                """)
        }
        migrator.registerMigration("v9 import jobs") { db in
            // Re-importing a page finds its recipe by address; batch imports live here so the worker keeps no state.
            try db.execute(sql: """
                CREATE INDEX recipes_website ON recipes(website);
                CREATE TABLE import_jobs (
                    id TEXT PRIMARY KEY NOT NULL,
                    createdAt DATETIME NOT NULL,
                    updatedAt DATETIME NOT NULL
                );
                CREATE TABLE import_job_items (
                    jobId TEXT NOT NULL REFERENCES import_jobs(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    url TEXT NOT NULL,
                    state TEXT NOT NULL DEFAULT 'pending',
                    outcome TEXT,
                    recipeId TEXT,
                    recipeName TEXT,
                    errorCode TEXT,
                    errorMessage TEXT,
                    photoNote TEXT,
                    finishedAt DATETIME,
                    PRIMARY KEY (jobId, position)
                );
                CREATE INDEX import_job_items_pending ON import_job_items(jobId) WHERE state = 'pending';
                CREATE INDEX import_jobs_by_created ON import_jobs(createdAt);
                """)
        }
        migrator.registerMigration("v10 replica sync") { db in
            // The change feed and what sync needs to merge: see docs/SYNC.md.
            try db.execute(sql: """
                CREATE TABLE sync_state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
                INSERT INTO sync_state (key, value) VALUES
                    ('replica', lower(hex(randomblob(6)))), ('write', '0'), ('wall', '0'), ('counter', '0');
                CREATE TABLE sync_records (
                    kind TEXT NOT NULL,
                    id TEXT NOT NULL,
                    seq INTEGER NOT NULL UNIQUE,
                    source TEXT NOT NULL,
                    live INTEGER NOT NULL,
                    body TEXT NOT NULL,
                    PRIMARY KEY (kind, id)
                ) WITHOUT ROWID;
                CREATE TABLE sync_pending (kind TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (kind, id)) WITHOUT ROWID;
                CREATE TABLE sync_cursors (peer TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL, syncedAt DATETIME);
                CREATE TABLE sync_conflicts (
                    id TEXT PRIMARY KEY NOT NULL,
                    kind TEXT NOT NULL,
                    recordId TEXT NOT NULL,
                    field TEXT NOT NULL,
                    lostValue TEXT NOT NULL,
                    copyId TEXT,
                    createdAt DATETIME NOT NULL
                );
                CREATE TABLE sync_dangling (
                    kind TEXT NOT NULL,
                    id TEXT NOT NULL,
                    target TEXT NOT NULL,
                    PRIMARY KEY (kind, id)
                ) WITHOUT ROWID;
                CREATE INDEX sync_dangling_target ON sync_dangling(target);
                """)
            func mark(_ table: String, _ kind: String, new: String, old: String) throws {
                try markChanges(table, kind, new: new, old: old, in: db)
            }
            try mark("recipes", "recipe", new: "NEW.id", old: "OLD.id")
            for table in ["recipe_ingredients", "recipe_instructions", "recipe_keywords", "recipe_photos"] {
                try mark(table, "recipe", new: "NEW.recipeId", old: "OLD.recipeId")
            }
            try mark("books", "book", new: "NEW.id", old: "OLD.id")
            try mark("ingredients", "ingredient", new: "NEW.name", old: "OLD.name")
            try mark("ingredient_aliases", "ingredient",
                     new: "(SELECT name FROM ingredients WHERE id = NEW.ingredientId)",
                     old: "(SELECT name FROM ingredients WHERE id = OLD.ingredientId)")
            try mark("cook_log", "cookLog", new: "NEW.id", old: "OLD.id")
            // What an older file already holds enters the feed on the first open.
            try db.execute(sql: """
                INSERT INTO sync_pending (kind, id) SELECT 'recipe', id FROM recipes;
                INSERT INTO sync_pending (kind, id) SELECT 'book', id FROM books;
                INSERT INTO sync_pending (kind, id) SELECT 'ingredient', name FROM ingredients;
                INSERT INTO sync_pending (kind, id) SELECT 'cookLog', id FROM cook_log;
                """)
        }
        migrator.registerMigration("v11 import attempts") { db in
            // How often a worker began a URL without finishing it: a page that kills the worker is given up, not retried for ever.
            try db.execute(sql: "ALTER TABLE import_job_items ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v12 held records and open conflicts") { db in
            // Records received but not applicable yet (a photo not here, a clock too far ahead, a value refused):
            // kept per sender and retried, so one record never stops a feed. `sync_replaced`: recipe fields this replica
            // overwrote while the value was still its own (a copy of such a value is withdrawn). `conflicts` counts a record's open
            // conflicts, so listing them reads only the records that have some.
            try db.execute(sql: """
                CREATE TABLE sync_held (
                    peer TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    id TEXT NOT NULL,
                    body TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    missing TEXT NOT NULL DEFAULT '[]',
                    retry TEXT NOT NULL DEFAULT 'never',
                    heldAt DATETIME NOT NULL,
                    PRIMARY KEY (peer, kind, id)
                ) WITHOUT ROWID;
                CREATE TABLE sync_replaced (
                    recordId TEXT NOT NULL,
                    field TEXT NOT NULL,
                    stamp TEXT NOT NULL,
                    PRIMARY KEY (recordId, field, stamp)
                ) WITHOUT ROWID;
                ALTER TABLE sync_records ADD COLUMN conflicts INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX sync_records_open_conflicts ON sync_records(conflicts) WHERE conflicts > 0;
                INSERT OR IGNORE INTO sync_pending (kind, id) SELECT 'recipe', id FROM recipes;
                """)
            // Photos and keywords were whole-list fields; every recipe is captured again on the first open, as set elements.
        }
        migrator.registerMigration("v13 conflicts live on their records") { db in
            // Losing values are kept on the records (conflict fields and conflicted copies) and listed from there;
            // this local log of them was written and never read.
            try db.execute(sql: "DROP TABLE IF EXISTS sync_conflicts")
        }
        migrator.registerMigration("v14 step titles") { db in
            // A step's own title ("Make the caramel"), as schema.org HowToStep.name gives it.
            try db.execute(sql: "ALTER TABLE recipe_instructions ADD COLUMN title TEXT")
        }
        migrator.registerMigration("v15 indexes no query reads") { db in
            // Every create paid for these (a food index entry per ingredient line, four cuisine and category
            // entries), and no query uses them: lists filter cuisine and category with the sort index on purpose
            // (RecipeStore+Queries), and can-make reads every line in recipe order.
            for index in ["recipe_ingredients_food", "recipes_cuisine", "recipes_category", "recipes_cuisine_nocase", "recipes_category_nocase"] {
                try db.execute(sql: "DROP INDEX IF EXISTS \(index)")
            }
        }
        migrator.registerMigration("v16 migrations from other apps") { db in
            // A migration is an import job whose items are entries of an export; each entry's bytes wait here
            // (staged before the job exists) until its result is recorded.
            try db.execute(sql: """
                ALTER TABLE import_jobs ADD COLUMN migrationFormat TEXT;
                ALTER TABLE import_jobs ADD COLUMN migrationSource TEXT;
                CREATE TABLE import_job_entries (
                    jobId TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    bytes BLOB NOT NULL,
                    stagedAt DATETIME NOT NULL,
                    PRIMARY KEY (jobId, position)
                ) WITHOUT ROWID;
                CREATE INDEX import_job_entries_by_staged ON import_job_entries(stagedAt);
                """)
        }
        migrator.registerMigration("v17 job counts kept, items in the order they finished") { db in
            // A job's counts are kept with it (they were counted from its items at every read and every recorded
            // result: 50,000 rows a time in a large migration). A follower of a job reads what finished since it last
            // looked (job.items, view finished): each item is numbered 1, 2, … within its job as it gets its result,
            // so the next number is the job's finished count plus one. Items finished before are numbered by when.
            try db.execute(sql: """
                ALTER TABLE import_jobs ADD COLUMN total INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE import_jobs ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE import_jobs ADD COLUMN failed INTEGER NOT NULL DEFAULT 0;
                UPDATE import_jobs SET total = counts.total, imported = counts.imported, failed = counts.failed FROM (
                    SELECT jobId, COUNT(*) AS total, SUM(state = 'imported') AS imported, SUM(state = 'failed') AS failed
                    FROM import_job_items GROUP BY jobId) AS counts
                WHERE import_jobs.id = counts.jobId;
                ALTER TABLE import_job_items ADD COLUMN finishNumber INTEGER;
                UPDATE import_job_items SET finishNumber = numbered.n FROM (
                    SELECT jobId, position, ROW_NUMBER() OVER (PARTITION BY jobId ORDER BY finishedAt, position) AS n
                    FROM import_job_items WHERE state != 'pending') AS numbered
                WHERE import_job_items.jobId = numbered.jobId AND import_job_items.position = numbered.position;
                CREATE INDEX import_job_items_finished ON import_job_items(jobId, finishNumber) WHERE finishNumber IS NOT NULL;
                """)
        }
        migrator.registerMigration("v18 text in one Unicode form") { db in
            // Text is stored composed (NFC) since this version (String.composed): a replica holding "é" as one
            // character and another holding "e" and an accent never agreed, in bytes, and an edit from one form to the
            // other reached no peer. What an older version stored is composed here; the triggers mark what changed, and
            // the first open records it in the feed as this replica's edit (every replica makes the same one).
            // An ingredient whose composed name another already has keeps its name (UPDATE OR IGNORE): two rows
            // cannot share a name.
            let composed = DatabaseFunction("rv_composed", argumentCount: 1, pure: true) { values in
                String.fromDatabaseValue(values[0].databaseValue).map(\.composed)
            }
            db.add(function: composed) // left on the connection (removing it while statements are cached is refused)
            let columns: [(table: String, columns: [String])] = [
                ("recipes", ["title", "summary", "notes", "nutrition", "website", "recipeYield", "recipeCategory", "recipeCuisine", "author", "datePublished"]),
                ("recipe_ingredients", ["text", "unit", "food", "note"]),
                ("recipe_instructions", ["text", "section", "title"]),
                ("recipe_keywords", ["keyword"]),
                ("books", ["title", "author"]),
                ("ingredients", ["name"]),
                ("ingredient_aliases", ["alias"]),
                ("cook_log", ["recipeName", "note"]),
            ]
            for (table, names) in columns {
                // Only rows with text beyond ASCII can change (ASCII is composed already).
                let changes = names.map { "\($0) = rv_composed(\($0))" }.joined(separator: ", ")
                let differs = names.map { "(\($0) GLOB '*[^\u{1}-\u{7F}]*' AND \($0) != rv_composed(\($0)))" }.joined(separator: " OR ")
                try db.execute(sql: "UPDATE OR IGNORE \(table) SET \(changes) WHERE \(differs)")
            }
            // The search index holds what the recipes now say.
            for id in try String.fetchAll(db, sql: "SELECT id FROM sync_pending WHERE kind = 'recipe'") {
                try SearchIndex.refresh(recipeID: id, in: db)
            }
        }
        migrator.registerMigration("v19 rough amounts read") { db in
            // Since this version "about 2 cups flour" and "a scant 1/2 cup sugar" read as 2 cups of flour and half a
            // cup of sugar; an older version read no amount there, and the food "2 cup flour". Such lines are read
            // again, so scaling, can-make and the ingredient list see them. The parse is this storage's own (a
            // recipe's feed record carries its lines' text only), so nothing here reaches a peer.
            let rough = IngredientParser.approximations.sorted().flatMap { word in
                ["\(word) %", "\(word). %", "a \(word) %", "an \(word) %"]
            }
            let lines = try Row.fetchAll(db, sql: """
                SELECT id, text FROM recipe_ingredients
                WHERE quantity IS NULL AND (\(rough.map { _ in "text LIKE ?" }.joined(separator: " OR ")))
                """, arguments: StatementArguments(rough))
            for line in lines {
                let parsed = IngredientParser.parse(line["text"])
                guard parsed.quantity != nil else { continue }
                try db.cachedStatement(sql: "UPDATE recipe_ingredients SET quantity = ?, quantityMax = ?, unit = ?, food = ?, note = ? WHERE id = ?")
                    .execute(arguments: [parsed.quantity, parsed.quantityMax, parsed.unit, parsed.food, parsed.note, line["id"]])
            }
        }
        migrator.registerMigration("v20 search rowids given once") { db in
            // The largest rowid the search index ever gave, so a row added after the largest was deleted does not
            // get its rowid again (FTS5 gives the largest + 1): search ranking keeps each row's length by rowid.
            try db.execute(sql: """
                CREATE TABLE search_index_state (highestRowid INTEGER NOT NULL);
                INSERT INTO search_index_state (highestRowid) SELECT COALESCE(max(id), 0) FROM recipes_fts_content;
                """)
        }
        migrator.registerMigration("v21 import begins by worker run") { db in
            // Which run of the worker last began a URL: its own begins again (after the storage was away) are not
            // counted as a worker that stopped.
            try db.execute(sql: "ALTER TABLE import_job_items ADD COLUMN startedBy TEXT")
        }
        migrator.registerMigration("v22 line ids within their recipe") { db in
            // A line's id names it within its recipe. Unique across every recipe, a line id two recipes were given (by
            // clients on two replicas) was replaced by a random one wherever the second arrived, so replicas differed
            // for ever. The one change to a table that is not an addition: SQLite changes no primary key in place, so
            // both tables are made again, their rows copied (the copy marks nothing for the feed: no value changes).
            for (table, columns) in [
                ("recipe_ingredients", "quantity REAL, quantityMax REAL, unit TEXT, food TEXT, note TEXT"),
                ("recipe_instructions", "section TEXT, title TEXT"),
            ] {
                let names = columns.split(separator: ",").map { $0.split(separator: " ")[0] }.joined(separator: ", ")
                try db.execute(sql: """
                    CREATE TABLE \(table)_v22 (
                        id TEXT NOT NULL,
                        recipeId TEXT NOT NULL REFERENCES recipes(id) ON DELETE CASCADE,
                        position INTEGER NOT NULL,
                        text TEXT NOT NULL,
                        \(columns),
                        PRIMARY KEY (recipeId, id),
                        UNIQUE (recipeId, position)
                    );
                    INSERT INTO \(table)_v22 (id, recipeId, position, text, \(names)) SELECT id, recipeId, position, text, \(names) FROM \(table);
                    DROP TABLE \(table);
                    ALTER TABLE \(table)_v22 RENAME TO \(table);
                    """)
                try markChanges(table, "recipe", new: "NEW.recipeId", old: "OLD.recipeId", in: db)
            }
        }
        migrator.registerMigration("v23 own write stamps and peers' newest writes") { db in
            // This replica's recent writes by number, with their stamps, and the newest write of each replica among the
            // records taken from others, with its stamp: a replica rolled back with its whole folder (a file-system or
            // machine snapshot) learns from a peer's newest write of it that it reused or lost numbers (`SyncSeen`).
            try db.execute(sql: """
                CREATE TABLE sync_own_writes (write INTEGER PRIMARY KEY, stamp TEXT NOT NULL);
                CREATE TABLE sync_seen (replica TEXT PRIMARY KEY NOT NULL, write INTEGER NOT NULL, stamp TEXT NOT NULL) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v24 feed marks beside cursors") { db in
            // What a peer's feed held at the cursor when it was applied up to there: a peer rolled back with its whole
            // folder, which gave those positions again, shows it at the next read (`FeedMark`).
            try db.execute(sql: "ALTER TABLE sync_cursors ADD COLUMN mark TEXT")
        }
        migrator.registerMigration("v25 own writes by start") { db in
            // Which start of the storage made each of its own writes: the writes a replica rolled back with its whole
            // folder made since begin a start of their own, which tells the roll back point (`SyncSeen.rollBackPoint`).
            try db.execute(sql: "ALTER TABLE sync_own_writes ADD COLUMN start INTEGER")
        }
        migrator.registerMigration("v26 feed positions given") { db in
            // What each feed position was given (a digest of the change record written there), the last `FeedMark.kept`:
            // a reader's mark names the feed's newest position when it read, and a replica rolled back past it — which
            // lost the change there, whatever made it: a write of its own or a change it applied from a peer — shows
            // it at the reader's next read (`FeedMark`).
            try db.execute(sql: "CREATE TABLE sync_feed_given (seq INTEGER PRIMARY KEY, given INTEGER NOT NULL)")
        }
        return migrator
    }

    /// Triggers that mark the record of every row `table` gains, changes or loses (`kind`, its id `new` or `old`):
    /// every committed change marks its record; the writing transaction turns marks into feed entries. Not INSERT OR
    /// IGNORE: a foreign-key action (a deleted book unlinking recipes) would override its IGNORE.
    static func markChanges(_ table: String, _ kind: String, new: String, old: String, in db: Database) throws {
        func add(_ kind: String, _ key: String) -> String {
            "INSERT INTO sync_pending (kind, id) SELECT '\(kind)', k FROM (SELECT \(key) AS k) WHERE k IS NOT NULL "
                + "AND NOT EXISTS (SELECT 1 FROM sync_pending WHERE kind = '\(kind)' AND id = k);"
        }
        try db.execute(sql: """
            CREATE TRIGGER sync_\(table)_insert AFTER INSERT ON \(table) BEGIN
                \(add(kind, new)) END;
            CREATE TRIGGER sync_\(table)_update AFTER UPDATE ON \(table) BEGIN
                \(add(kind, new))
                \(add(kind, old)) END;
            CREATE TRIGGER sync_\(table)_delete AFTER DELETE ON \(table) BEGIN
                \(add(kind, old)) END;
            """)
    }
}

/// Keeps `recipes_fts` in step with a recipe, inside the writing transaction.
enum SearchIndex {
    /// Re-indexes a recipe (or removes it from the index when it no longer exists), as the migrations older than
    /// v20 do: before `search_index_state` exists, so FTS5 picks the rowid.
    static func refresh(recipeID: String, in db: Database) throws {
        try remove(recipeID: recipeID, recordingHighest: false, in: db)
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT title, summary, notes FROM recipes WHERE id = ?"),
                                         arguments: [recipeID]) else { return }
        let ingredients = try String.fetchAll(
            db.cachedStatement(sql: "SELECT text FROM recipe_ingredients WHERE recipeId = ? ORDER BY position"), arguments: [recipeID])
        let keywords = try String.fetchAll(
            db.cachedStatement(sql: "SELECT keyword FROM recipe_keywords WHERE recipeId = ? ORDER BY position"), arguments: [recipeID])
        try add(recipeID: recipeID, rowid: nil, name: row["title"], description: row["summary"], ingredients: ingredients,
                keywords: keywords, notes: row["notes"], in: db)
    }

    /// Re-indexes a recipe from the values just written (the same values `refresh` would read back); `replacing`
    /// false for a recipe just added, which has no entry yet.
    static func index(recipeID: String, name: String?, description: String?, ingredients: [String], keywords: [String],
                      notes: String?, replacing: Bool = true, in db: Database) throws {
        if replacing { try remove(recipeID: recipeID, in: db) }
        try add(recipeID: recipeID, rowid: nextRowid(in: db), name: name, description: description, ingredients: ingredients,
                keywords: keywords, notes: notes, in: db)
    }

    /// Adds a recipe's entry under `rowid`, or FTS5's choice when nil.
    private static func add(recipeID: String, rowid: Int64?, name: String?, description: String?, ingredients: [String],
                            keywords: [String], notes: String?, in db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO recipes_fts (rowid, name, description, ingredients, keywords, notes) VALUES (?, ?, ?, ?, ?, ?)")
            .execute(arguments: [rowid, name, description, ingredients.joined(separator: "\n"), keywords.joined(separator: "\n"), notes])
        try db.cachedStatement(sql: "INSERT INTO recipe_search_keys (recipeId, ftsRowid) VALUES (?, ?)")
            .execute(arguments: [recipeID, rowid ?? db.lastInsertedRowID])
    }

    /// A rowid no row of the index ever had: above the largest there and the largest ever given (`SearchRanking`
    /// keeps each row's length by its rowid across changes).
    static func nextRowid(in db: Database) throws -> Int64 {
        let largest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM recipes_fts_content")) ?? 0
        let given = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(highestRowid) FROM search_index_state")) ?? 0
        // A copied file's values are not trusted to leave room for one more.
        return min(max(largest, given, 0), highestRowid) + 1
    }

    /// The largest rowid given: far below SQLite's, so the next is always one more.
    static let highestRowid: Int64 = 1 << 62

    /// Takes a recipe out of the index. `recordingHighest` false only for the migrations older than v20, before
    /// `search_index_state` exists.
    static func remove(recipeID: String, recordingHighest: Bool = true, in db: Database) throws {
        guard let rowid = try Int64.fetchOne(db.cachedStatement(sql: "SELECT ftsRowid FROM recipe_search_keys WHERE recipeId = ?"),
                                             arguments: [recipeID]) else { return }
        try db.cachedStatement(sql: "DELETE FROM recipes_fts WHERE rowid = ?").execute(arguments: [rowid])
        try db.cachedStatement(sql: "DELETE FROM recipe_search_keys WHERE recipeId = ?").execute(arguments: [recipeID])
        // The largest row gone: its rowid is remembered, so the next row added does not get it again.
        if recordingHighest {
            try db.cachedStatement(sql: """
                UPDATE search_index_state SET highestRowid = ?1
                WHERE highestRowid < ?1 AND ?1 > COALESCE((SELECT max(id) FROM recipes_fts_content), 0)
                """).execute(arguments: [rowid])
        }
    }
}
