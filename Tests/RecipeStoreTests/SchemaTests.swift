import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
import Testing
@testable import RecipeStore

@Suite("Schema, migrations and durability")
struct SchemaTests {
    @Test("jobs finished before items had finish numbers are numbered by when each item finished")
    func finishNumbersOnUpgrade() async throws {
        try await withFolder { folder async throws in
            let path = folder.appendingPathComponent(RecipeVault.databaseFileName).path
            let job = "44444444-4444-4444-8444-444444444444", other = "55555555-5555-4555-8555-555555555555"
            do {
                let old = try DatabaseQueue(path: path)
                try Migrations.migrator.migrate(old, upTo: "v16 migrations from other apps")
                try await old.write { db in
                    try db.execute(sql: """
                        INSERT INTO import_jobs (id, createdAt, updatedAt) VALUES
                            ('\(job)', '2026-01-01 10:00:00.000', '2026-01-01 10:05:00.000'),
                            ('\(other)', '2026-01-02 10:00:00.000', '2026-01-02 10:00:00.000');
                        INSERT INTO import_job_items (jobId, position, url, state, finishedAt) VALUES
                            ('\(job)', 0, 'https://a.example/0', 'imported', '2026-01-01 10:03:00.000'),
                            ('\(job)', 1, 'https://a.example/1', 'failed', '2026-01-01 10:01:00.000'),
                            ('\(job)', 2, 'https://a.example/2', 'pending', NULL),
                            ('\(job)', 3, 'https://a.example/3', 'imported', '2026-01-01 10:02:00.000'),
                            ('\(other)', 0, 'https://b.example/0', 'imported', '2026-01-02 10:01:00.000');
                        """)
                }
                try old.close()
            }
            let store = try RecipeStore(folder: folder)
            defer { try? store.close() }
            let page = try await store.jobItems(jobID: UUID(uuidString: job)!, view: .finished, from: 0, limit: 10)
            #expect(page.items.map(\.position) == [1, 3, 0] && page.next == 4)
            #expect(page.job.total == 4 && page.job.imported == 2 && page.job.failed == 1 && page.job.state == .running, "the counts kept with the job")
            _ = try await store.recordJobItem(jobID: UUID(uuidString: job)!, position: 2,
                                              result: .init(position: 2, url: "https://a.example/2", state: .imported, outcome: .created))
            let last = try await store.jobItems(jobID: UUID(uuidString: job)!, view: .finished, from: page.next, limit: 10)
            #expect(last.items.map(\.position) == [2] && last.job.state == .done && last.job.imported == 3)
            #expect(try await store.jobItems(jobID: UUID(uuidString: other)!, view: .finished, from: 0, limit: 10).next == 2)
        }
    }

    @Test("a file at the first schema version, with data, upgrades with the data intact")
    func upgradeFromV1() async throws {
        try await withFolder { folder async throws in
            let path = folder.appendingPathComponent(RecipeVault.databaseFileName).path
            do {
                let old = try DatabaseQueue(path: path)
                try Migrations.migrator.migrate(old, upTo: "v1 recipes")
                try await old.write { db in
                    try db.execute(sql: """
                        INSERT INTO recipes (id, title, summary, prepTimeMinutes, cookTimeMinutes, servings, createdAt, updatedAt)
                        VALUES ('11111111-1111-4111-8111-111111111111', 'Old Soup', 'From before', 10, 35, 4,
                                '2023-05-01 10:00:00.000', '2023-05-01 10:00:00.000');
                        INSERT INTO recipe_ingredients (id, recipeId, position, text) VALUES
                            ('22222222-2222-4222-8222-222222222221', '11111111-1111-4111-8111-111111111111', 0, '2 cups diced tomatoes'),
                            ('22222222-2222-4222-8222-222222222222', '11111111-1111-4111-8111-111111111111', 1, '1 onion');
                        INSERT INTO recipe_instructions (id, recipeId, position, text) VALUES
                            ('33333333-3333-4333-8333-333333333331', '11111111-1111-4111-8111-111111111111', 0, 'Simmer everything.');
                        """)
                }
                try old.close()
            }
            let store = try RecipeStore(folder: folder)
            defer { try? store.close() }
            #expect(try store.appliedMigrations() == Migrations.migrator.migrations)
            let recipe = try await store.recipe(UUID(uuidString: "11111111-1111-4111-8111-111111111111")!)
            #expect(recipe.name == "Old Soup")
            #expect(recipe.description == "From before")
            #expect(recipe.prepTime == "PT10M" && recipe.cookTime == "PT35M" && recipe.totalMinutes == 45)
            #expect(recipe.servings == 4)
            #expect(recipe.ingredients.map(\.text) == ["2 cups diced tomatoes", "1 onion"])
            #expect(recipe.ingredients.map(\.food) == ["tomato", "onion"])
            #expect(recipe.instructions.map(\.text) == ["Simmer everything."])
            #expect(recipe.origin == .custom && recipe.sourceType == .manual && recipe.version == 1)
            let hits = try await store.searchRecipes("tomato", limit: 10)
            #expect(hits.map(\.recipe.name) == ["Old Soup"], "older recipes are indexed for search on upgrade")
            #expect(try store.integrityCheck() == "ok")
        }
    }

    @Test("writes are durable: WAL with synchronous=FULL actually in force")
    func durability() async throws {
        try await withStore { store async throws in
            let settings = try store.durabilitySettings()
            #expect(settings.journalMode == "wal")
            #expect(settings.synchronous == 2, "2 is FULL; GRDB's default after WAL setup would be 1 (NORMAL)")
        }
    }

    @Test("v22: a file at v21 keeps every line and step; a line id then names a line within its recipe, and line changes still reach the feed")
    func lineIDsWithinTheirRecipe() async throws {
        try await withFolder { folder async throws in
            let path = folder.appendingPathComponent(RecipeVault.databaseFileName).path
            let soup = UUID(), line = UUID(), step = UUID()
            do {
                let old = try DatabaseQueue(path: path)
                try Migrations.migrator.migrate(old, upTo: "v21 import begins by worker run")
                try await old.write { db in
                    let (r, l, st) = (soup.uuidString, line.uuidString, step.uuidString)
                    try db.execute(sql: """
                        INSERT INTO recipes (id, title, createdAt, updatedAt) VALUES ('\(r)', 'Soup', '2026-05-01 10:00:00.000', '2026-05-01 10:00:00.000');
                        INSERT INTO recipe_ingredients (id, recipeId, position, text, quantity, quantityMax, unit, food, note) VALUES
                            ('\(l)', '\(r)', 0, '2 onions, sliced', 2, NULL, NULL, 'onion', 'sliced'),
                            ('22222222-2222-4222-8222-222222222222', '\(r)', 1, 'salt', NULL, NULL, NULL, 'salt', NULL);
                        INSERT INTO recipe_instructions (id, recipeId, position, text, section, title) VALUES ('\(st)', '\(r)', 0, 'Stir.', 'Base', 'Start');
                        """)
                }
                try old.close()
            }
            let store = try RecipeStore(folder: folder)
            defer { try? store.close() }
            #expect(try store.appliedMigrations() == Migrations.migrator.migrations)
            let kept = try await store.recipe(soup)
            #expect(kept.ingredients.map(\.text) == ["2 onions, sliced", "salt"] && kept.ingredients[0].id == line)
            #expect(kept.ingredients[0].quantity == 2 && kept.ingredients[0].food == "onion" && kept.ingredients[0].note == "sliced")
            #expect(kept.instructions.map(\.id) == [step] && kept.instructions[0].section == "Base" && kept.instructions[0].title == "Start")
            // Another recipe may have the same line and step ids; each keeps its own.
            let (stew, _) = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Stew", ingredients: [.init(id: line, text: "1 leek")],
                                                                                instructions: [.init(id: step, text: "Bake.")]))
            #expect(stew.ingredients.map(\.id) == [line] && stew.instructions.map(\.id) == [step])
            #expect(try await store.recipe(soup).ingredients[0].id == line)
            // The rebuilt tables still mark their recipe's record: an edit of a line is a new version in the feed.
            let before = try #require(try await store.syncRecord(.recipe, id: soup.uuidString)).seq
            var draft = RecipeDraft(kept)
            draft.ingredients[1].text = "a pinch of salt"
            _ = try await store.updateRecipe(id: soup, expectedVersion: kept.version, draft)
            #expect(try #require(try await store.syncRecord(.recipe, id: soup.uuidString)).seq > before)
            #expect(try store.integrityCheck() == "ok")
        }
    }

    @Test("the schema has the tables and constraints the design names")
    func tables() async throws {
        try await withStore { store async throws in
            let tables = try await store.pool.read { db in
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'recipes_fts_%'")
            }
            for table in ["recipes", "recipe_ingredients", "recipe_instructions", "recipe_photos", "books", "ingredients", "cook_log", "recipes_fts"] {
                #expect(tables.contains(table), "\(table)")
            }
            let recipe = try await store.createRecipe(id: UUID(), RecipeDraft(name: "X", ingredients: [.init(text: "1 egg")])).recipe
            // (recipeId, position) is unique in the child tables.
            await #expect(throws: DatabaseError.self) {
                try await store.pool.write { db in
                    try db.execute(sql: "INSERT INTO recipe_ingredients (id, recipeId, position, text) VALUES (?, ?, 0, 'dup')",
                                   arguments: [UUID().uuidString, recipe.id.uuidString])
                }
            }
            // Foreign keys are enforced.
            await #expect(throws: DatabaseError.self) {
                try await store.pool.write { db in
                    try db.execute(sql: "INSERT INTO recipe_ingredients (id, recipeId, position, text) VALUES (?, 'no-such-recipe', 0, 'x')",
                                   arguments: [UUID().uuidString])
                }
            }
        }
    }
}

@Suite("Lines an older version parsed")
struct ReparsedLinesTests {
    @Test("a rough amount an older version read as no amount is read on upgrade; the feed is not told, for the parse is local")
    func roughAmountsOnUpgrade() async throws {
        try await withFolder { folder async throws in
            let path = folder.appendingPathComponent(RecipeVault.databaseFileName).path
            let recipe = "66666666-6666-4666-8666-666666666667"
            let before: SyncRecord
            do {
                let old = try DatabaseQueue(path: path)
                try Migrations.migrator.migrate(old, upTo: "v18 text in one Unicode form")
                before = try await old.write { db in
                    try db.execute(sql: """
                        INSERT INTO recipes (id, title, servings, createdAt, updatedAt) VALUES (?, 'Bread', 2, '2026-01-01 10:00:00.000', '2026-01-01 10:00:00.000');
                        INSERT INTO recipe_ingredients (id, recipeId, position, text, food) VALUES ('88888888-8888-4888-8888-888888888881', ?, 0, 'about 2 cups flour', '2 cup flour');
                        INSERT INTO recipe_ingredients (id, recipeId, position, text, food) VALUES ('88888888-8888-4888-8888-888888888882', ?, 1, 'A scant 1/2 cup sugar', 'scant 1/2 cup sugar');
                        INSERT INTO recipe_ingredients (id, recipeId, position, text, food) VALUES ('88888888-8888-4888-8888-888888888883', ?, 2, 'salt to taste', 'salt');
                        """, arguments: [recipe, recipe, recipe, recipe])
                    try SearchIndex.refresh(recipeID: recipe, in: db)
                    try SyncLog.capture(in: db)
                    return try #require(try SyncLog.storedRecord(.recipe, recipe, in: db))
                }
                try old.close()
            }
            let store = try RecipeStore(folder: folder)
            defer { try? store.close() }
            let lines = try await store.recipe(UUID(uuidString: recipe)!).ingredients
            #expect(lines.map(\.quantity) == [2, 0.5, nil])
            #expect(lines.map(\.unit) == ["cup", "cup", nil])
            #expect(lines.map(\.food) == ["flour", "sugar", "salt"])
            #expect(try await store.syncRecord(.recipe, id: recipe) == before, "no edit recorded")
        }
    }
}

@Suite("Text in one Unicode form")
struct ComposedTextTests {
    static let composed = "Caf\u{E9} cr\u{E8}me", decomposed = "Cafe\u{301} cre\u{300}me"

    @Test("a file an older version wrote in decomposed form is composed on upgrade, recorded as an edit, and found by search")
    func upgradeComposes() async throws {
        try await withFolder { folder async throws in
            let path = folder.appendingPathComponent(RecipeVault.databaseFileName).path
            let recipe = "66666666-6666-4666-8666-666666666666", book = "77777777-7777-4777-8777-777777777777"
            do {
                let old = try DatabaseQueue(path: path)
                try Migrations.migrator.migrate(old, upTo: "v17 job counts kept, items in the order they finished")
                try await old.write { db in
                    try db.execute(sql: """
                        INSERT INTO books (id, title, createdAt, updatedAt) VALUES (?, ?, '2026-01-01 10:00:00.000', '2026-01-01 10:00:00.000');
                        INSERT INTO recipes (id, title, summary, createdAt, updatedAt, bookId) VALUES (?, ?, ?, '2026-01-01 10:00:00.000', '2026-01-01 10:00:00.000', ?);
                        INSERT INTO recipe_ingredients (id, recipeId, position, text) VALUES ('88888888-8888-4888-8888-888888888888', ?, 0, ?);
                        INSERT INTO recipe_keywords (recipeId, position, keyword) VALUES (?, 0, ?);
                        """, arguments: [book, Self.decomposed, recipe, Self.decomposed, "plain ASCII", book, recipe, "1 cup \(Self.decomposed)", recipe, Self.decomposed])
                    try SearchIndex.refresh(recipeID: recipe, in: db)
                    try SyncLog.capture(in: db)
                }
                try old.close()
            }
            let store = try RecipeStore(folder: folder)
            defer { try? store.close() }
            let stored = try await store.recipe(UUID(uuidString: recipe)!)
            #expect(Array(stored.name.utf8) == Array(Self.composed.utf8))
            #expect(Array(stored.ingredients[0].text.utf8) == Array("1 cup \(Self.composed)".utf8))
            #expect(stored.keywords.map { Array($0.utf8) } == [Array(Self.composed.utf8)])
            #expect(stored.description == "plain ASCII")
            #expect(Array(try await store.book(UUID(uuidString: book)!).book.title.utf8) == Array(Self.composed.utf8))
            // The feed carries the composed values as this replica's edit, so peers that hold the old form get them.
            let record = try #require(try await store.syncRecord(.recipe, id: recipe))
            #expect(record.fields["name"].map { value in if case .string(let text) = value { Array(text.utf8) == Array(Self.composed.utf8) } else { false } } == true)
            #expect(record.fields.keys.contains { Array($0.utf8) == Array("keyword:\(Self.composed)".utf8) })
            #expect(try await store.searchRecipes("crème", limit: 5).map(\.recipe.id.uuidString) == [recipe])
        }
    }

    @Test("a run of combining marks past Unicode's stream-safe limit is refused, naming the field, and never normalised (quadratic)",
          .timeLimit(.minutes(3)))
    func combiningRuns() async throws {
        // A million marks stacked on one letter: one "character", 2 MB. Normalising it took ~18 minutes here; the checks
        // without it take seconds, and past a minute on a machine loaded by other work (CI, 2026-12-03, beside a build).
        let zalgo = "e" + String(repeating: "\u{301}\u{323}", count: 500_000)
        #expect(zalgo.composed.utf8.elementsEqual(zalgo.utf8), "left as it is")
        #expect(zalgo.longestCombiningRun == 1_000_000)
        try await withStore { store async throws in
            // Past four bytes a character of its field's limit, refused by its bytes before any of it is read; within
            // them, by its run.
            let refusals = [
                (RecipeDraft(name: zalgo), "name is 2000001 bytes of UTF-8 in 1 characters; the most allowed is 800"),
                (RecipeDraft(name: "Soup", ingredients: [.init(text: "1 \(zalgo)")]), "ingredients[0] is 2000003 bytes of UTF-8 in 3 characters; the most allowed is 4000"),
                (RecipeDraft(name: "Soup", notes: "e" + String(repeating: "\u{301}", count: String.maxCombiningRun + 1)), "notes has 31 combining marks in a row; at most 30 are allowed"),
                (RecipeDraft(name: "Soup", notes: "e" + String(repeating: "\u{301}", count: 1_000)), "notes has 1000 combining marks in a row; at most 30 are allowed"),
            ]
            for (draft, says) in refusals {
                let error = await #expect(throws: ServiceError.self) { _ = try await store.createRecipe(id: UUID(), draft) }
                #expect(error?.message.hasPrefix(says) == true, "\(error?.message ?? "")")
            }
            // A book's title of one such character is 2 MB: refused by its bytes (four a character of its limit), unread.
            let title = await #expect(throws: ServiceError.self) { _ = try await store.createBook(id: UUID(), title: zalgo, author: nil) }
            #expect(title?.message.hasPrefix("the book's title is 2000001 bytes of UTF-8 in 1 characters; the most allowed is 800") == true)
            #expect(try await store.listBooks().isEmpty)
            // Thirty is fine, and composed.
            let thirty = "e\u{301}" + String(repeating: "\u{323}", count: 29)
            let (recipe, _) = try await store.createRecipe(id: UUID(), RecipeDraft(name: thirty))
            #expect(recipe.name.utf8.elementsEqual(thirty.composed.utf8) && !recipe.name.utf8.elementsEqual(thirty.utf8))
        }
    }

    @Test("what a client writes in decomposed form is stored composed: recipes, books, the catalogue and the cook log")
    func writesCompose() async throws {
        try await withStore { store async throws in
            let (recipe, _) = try await store.createRecipe(id: UUID(), RecipeDraft(
                name: Self.decomposed, description: Self.decomposed, ingredients: [.init(text: "2 \(Self.decomposed)")],
                instructions: [.init(text: Self.decomposed, section: Self.decomposed, title: Self.decomposed)], keywords: [Self.decomposed, Self.composed],
                notes: Self.decomposed))
            let texts = [recipe.name, recipe.description, recipe.ingredients[0].text, recipe.instructions[0].text, recipe.instructions[0].section,
                         recipe.instructions[0].title, recipe.notes].map { $0.map { Array($0.utf8) } }
            #expect(texts.allSatisfy { $0 == Array(Self.composed.utf8) || $0 == Array("2 \(Self.composed)".utf8) }, "\(texts)")
            #expect(recipe.keywords.map { Array($0.utf8) } == [Array(Self.composed.utf8)], "the two forms are one keyword")
            let book = try await store.createBook(id: UUID(), title: Self.decomposed, author: Self.decomposed)
            #expect(Array(book.title.utf8) == Array(Self.composed.utf8) && book.author.map { Array($0.utf8) } == Array(Self.composed.utf8))
            let entry = try await store.upsertIngredient(id: UUID(), name: "cre\u{300}me", category: nil, aliases: ["cre\u{300}me frai\u{302}che"])
            #expect(Array(entry.name.utf8) == Array("cr\u{E8}me".utf8) && entry.aliases.map { Array($0.utf8) } == [Array("cr\u{E8}me fra\u{EE}che".utf8)])
            // Searched for, or filtered by, in either form: found.
            #expect(try await store.searchRecipes(Self.decomposed, limit: 5).map(\.recipe.id) == [recipe.id])
            #expect(try await store.searchRecipes(Self.composed, limit: 5).map(\.recipe.id) == [recipe.id])
            _ = try await store.updateRecipe(id: recipe.id, expectedVersion: recipe.version, { var d = RecipeDraft(recipe); d.recipeCuisine = Self.composed; return d }())
            #expect(try await store.listRecipes(RecipeListQuery(cuisine: Self.decomposed)).recipes.map(\.id) == [recipe.id])
            let logged = try await store.addCookLogEntry(id: UUID(), recipeID: recipe.id, cookedAt: nil, rating: nil, note: Self.decomposed, servings: nil)
            #expect(logged.note.map { Array($0.utf8) } == Array(Self.composed.utf8))
        }
    }
}

@Suite("A store opened for reading only")
struct ReadOnlyStoreTests {
    @Test("it reads what the file holds (a recipe, a list, a search) and writes nothing: the file and its log are byte for byte as they were; a write is refused, never half done; closed, a full open takes writes again")
    func readsAndWritesNothing() async throws {
        try await withFolder { folder async throws in
            let id = UUID()
            do {
                let store = try RecipeStore(folder: folder)
                _ = try await store.createRecipe(id: id, RecipeDraft(name: "Barley Soup", ingredients: [.init(text: "100 g barley")]))
                try store.close()
            }
            let files = [RecipeVault.databaseFileName, RecipeVault.databaseFileName + "-wal"].map { folder.appendingPathComponent($0) }
            // (An empty log where there was none is no write: SQLite may make one to read a file in its log's mode.)
            let before = files.map { (try? Data(contentsOf: $0)) ?? Data() }
            let store = try RecipeStore(readingOnly: folder, because: "a test")
            #expect(store.readOnlyReason == "a test")
            #expect(try await store.recipe(id).name == "Barley Soup")
            #expect(try await store.listRecipes(RecipeListQuery(limit: 10)).recipes.map(\.id) == [id])
            #expect(try await store.searchRecipes("barley", limit: 5).map(\.recipe.id) == [id])
            #expect(store.databaseProblem()?.contains("it runs read-only (a test)") == true)
            await #expect(throws: (any Error).self) { _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Not stored")) }
            try store.close()
            #expect(files.map { (try? Data(contentsOf: $0)) ?? Data() } == before, "nothing written")
            let full = try RecipeStore(folder: folder)
            defer { try? full.close() }
            #expect(try await full.listRecipes(RecipeListQuery(limit: 10)).recipes.map(\.name) == ["Barley Soup"])
            _ = try await full.createRecipe(id: UUID(), RecipeDraft(name: "Stored"))
        }
    }

    @Test("a file of an older release, whose changes were never written, is not opened for reading only (this release cannot read it as it is)")
    func olderFileRefused() async throws {
        try await withFolder { folder async throws in
            let old = try DatabaseQueue(path: folder.appendingPathComponent(RecipeVault.databaseFileName).path)
            try Migrations.migrator.migrate(old, upTo: "v16 migrations from other apps")
            try old.close()
            #expect(throws: ReadOnlyOpenRefused.self) { _ = try RecipeStore(readingOnly: folder, because: "a test") }
        }
    }
}
