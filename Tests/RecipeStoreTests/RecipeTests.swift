import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
import Testing
@testable import RecipeStore

@Suite("Recipes in the store")
struct RecipeTests {
    let draft = RecipeDraft(
        name: "Weeknight Dal", description: "Red lentils with spices.",
        ingredients: [.init(text: "1 cup red lentils"), .init(text: "2 cloves garlic, minced"), .init(text: "½ tsp turmeric")],
        instructions: [.init(text: "Rinse the lentils."), .init(text: "Simmer with the spices.", section: "Cooking", title: "Simmer")],
        recipeYield: "4 bowls", servings: 4, prepTime: "PT10M", cookTime: "PT30M", recipeCategory: "Dinner",
        recipeCuisine: "Indian", keywords: ["lentils", "vegan"], notes: "Add spinach at the end.")

    @Test("create then get gives back every field, with the ingredient lines parsed")
    func createAndGet() async throws {
        try await withStore { store async throws in
            let id = UUID()
            let (created, isNew) = try await store.createRecipe(id: id, draft)
            #expect(isNew)
            let fetched = try await store.recipe(id)
            #expect(fetched == created)
            #expect(fetched.name == "Weeknight Dal" && fetched.recipeCuisine == "Indian" && fetched.keywords == ["lentils", "vegan"])
            #expect(fetched.ingredients.map(\.food) == ["red lentil", "garlic", "turmeric"])
            #expect(fetched.ingredients[1].quantity == 2 && fetched.ingredients[1].unit == "clove" && fetched.ingredients[1].note == "minced")
            #expect(fetched.instructions[1].section == "Cooking" && fetched.instructions[1].title == "Simmer")
            #expect(fetched.instructions[0].title == nil)
            #expect(fetched.totalMinutes == 40)
            #expect(fetched.version == 1 && fetched.origin == .custom)
        }
    }

    @Test("creating the same id again returns the stored recipe and adds nothing")
    func createIsIdempotent() async throws {
        try await withStore { store async throws in
            let id = UUID()
            let first = try await store.createRecipe(id: id, draft).recipe
            var other = draft
            other.name = "Something else"
            let (again, isNew) = try await store.createRecipe(id: id, other)
            #expect(!isNew)
            #expect(again == first)
            #expect(try await store.listRecipes(RecipeListQuery()).recipes.count == 1)
        }
    }

    @Test("an update with the version last seen applies; a stale one is a conflict and changes nothing")
    func versions() async throws {
        try await withStore { store async throws in
            let id = UUID()
            let created = try await store.createRecipe(id: id, draft).recipe
            var edit = RecipeDraft(created)
            edit.notes = "Better with lime."
            let updated = try await store.updateRecipe(id: id, expectedVersion: 1, edit)
            #expect(updated.version == 2 && updated.notes == "Better with lime.")
            #expect(updated.ingredients.map(\.id) == created.ingredients.map(\.id), "lines keep their ids across edits")

            var stale = RecipeDraft(created)
            stale.name = "Overwrite"
            let error = await #expect(throws: ServiceError.self) { _ = try await store.updateRecipe(id: id, expectedVersion: 1, stale) }
            #expect(error?.code == .conflict)
            #expect(error?.message.contains("version 2") == true)
            #expect(try await store.recipe(id).name == "Weeknight Dal")
        }
    }

    @Test("bad drafts are refused with what is wrong and what is allowed, and nothing is written")
    func validation() async throws {
        try await withStore { store async throws in
            let cases: [(RecipeDraft, String)] = [
                (RecipeDraft(name: "  "), "name is empty"),
                (RecipeDraft(name: "x", prepTime: "15 minutes"), "not an ISO 8601 duration"),
                (RecipeDraft(name: "x", rating: 7), "rating is 7; it must be 0 (unrated) to 5"),
                (RecipeDraft(name: "x", servings: 0), "servings is 0; it must be from 0.01 to 10000"),
                (RecipeDraft(name: "x", website: "ftp://x"), "not an http or https address"),
                (RecipeDraft(name: "x", origin: .starter), "origin starter cannot be set"),
                (RecipeDraft(name: "x", bookID: UUID()), "no book has id"),
            ]
            for (bad, expected) in cases {
                let error = await #expect(throws: ServiceError.self) { _ = try await store.createRecipe(id: UUID(), bad) }
                #expect(error?.message.contains(expected) == true, "\(error?.message ?? "no error")")
            }
            #expect(try await store.listRecipes(RecipeListQuery()).recipes.isEmpty)
        }
    }

    @Test("starters cannot be edited, deleted, favourited or rated; a duplicate is a custom copy")
    func starters() async throws {
        try await withStore { store async throws in
            _ = try await store.loadSamples()
            let starter = try await store.recipe(SampleData.recipeID(1))
            #expect(starter.origin == .starter)
            for attempt in [
                { _ = try await store.updateRecipe(id: starter.id, expectedVersion: 1, RecipeDraft(starter)) },
                { _ = try await store.deleteRecipe(id: starter.id) },
                { _ = try await store.setFavorite(id: starter.id, true) },
                { _ = try await store.rate(id: starter.id, 5) },
            ] as [() async throws -> Void] {
                let error = await #expect(throws: ServiceError.self) { try await attempt() }
                #expect(error?.code == .starterReadOnly)
                #expect(error?.message.contains("duplicate it") == true)
            }
            let copyID = UUID()
            let copy = try await store.duplicateRecipe(id: starter.id, newID: copyID, name: nil)
            #expect(copy.origin == .custom && copy.name == starter.name && copy.id == copyID)
            #expect(copy.ingredients.map(\.text) == starter.ingredients.map(\.text))
            #expect(Set(copy.ingredients.map(\.id)).isDisjoint(with: starter.ingredients.map(\.id)))
            let edited = try await store.setFavorite(id: copyID, true)
            #expect(edited.isFavorite && edited.version == 2)
            #expect(try await store.duplicateRecipe(id: starter.id, newID: copyID, name: nil).id == copyID, "a retried duplicate adds nothing")
        }
    }

    @Test("deleting a recipe removes it and its lines; the cook log keeps its entry with the name")
    func deleteKeepsLog() async throws {
        try await withStore { store async throws in
            let id = UUID()
            _ = try await store.createRecipe(id: id, draft)
            let entry = try await store.addCookLogEntry(id: UUID(), recipeID: id, cookedAt: nil, rating: 4, note: "Good", servings: 2)
            #expect(entry.recipeName == "Weeknight Dal")
            #expect(try await store.deleteRecipe(id: id))
            #expect(try await store.deleteRecipe(id: id) == false, "deleting again is not an error")
            let error = await #expect(throws: ServiceError.self) { _ = try await store.recipe(id) }
            #expect(error?.code == .notFound)
            let log = try await store.cookLog(recipeID: nil, limit: 10)
            #expect(log.count == 1 && log[0].recipeID == nil && log[0].recipeName == "Weeknight Dal" && log[0].rating == 4)
            let orphans = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM recipe_ingredients") }
            #expect(orphans == 0)
        }
    }

    @Test("recipe detail: cook history and scaled quantities, computed not stored")
    func detail() async throws {
        try await withStore { store async throws in
            let id = UUID()
            _ = try await store.createRecipe(id: id, draft)
            _ = try await store.addCookLogEntry(id: UUID(), recipeID: id, cookedAt: Date(timeIntervalSince1970: 1_700_000_000), rating: nil, note: nil, servings: nil)
            _ = try await store.addCookLogEntry(id: UUID(), recipeID: id, cookedAt: Date(timeIntervalSince1970: 1_800_000_000), rating: 5, note: nil, servings: nil)
            let detail = try await store.recipeDetail(id, servings: 8)
            #expect(detail.timesCooked == 2)
            #expect(detail.lastCookedAt == Date(timeIntervalSince1970: 1_800_000_000))
            #expect(detail.scaledIngredients?.map(\.quantity) == [2, 4, 1])
            #expect(try await store.recipe(id).ingredients.map(\.quantity) == [1, 2, 0.5], "the stored recipe is unchanged")
            let error = await #expect(throws: ServiceError.self) {
                _ = try await store.addCookLogEntry(id: UUID(), recipeID: id, cookedAt: nil, rating: 0, note: nil, servings: nil)
            }
            #expect(error?.message.contains("1 to 5") == true)
        }
    }
}

@Suite("Group commit")
struct GroupCommitTests {
    @Test("concurrent writes commit together, and one that fails takes nothing of the others with it")
    func concurrentWrites() async throws {
        try await withStore { store in
            let ids = (0..<40).map { _ in UUID() }
            let missingBook = UUID()
            let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
                for (index, id) in ids.enumerated() {
                    group.addTask {
                        var draft = RecipeDraft(name: "Recipe \(index)", ingredients: [.init(text: "\(index) g flour")])
                        if index % 7 == 3 { draft.bookID = missingBook } // refused inside the transaction
                        do {
                            if index % 7 == 5 {
                                // A write that changes a row and then fails: its change must not survive in the shared transaction.
                                _ = try await store.write { db in
                                    try db.execute(sql: "INSERT INTO recipes (id, title, createdAt, updatedAt, version, origin) VALUES (?, 'Doomed', '2026-01-01 00:00:00.000', '2026-01-01 00:00:00.000', 1, 'custom')",
                                                   arguments: [id.databaseText])
                                    throw ServiceError(.invalidArgument, "refused after writing")
                                }
                            }
                            _ = try await store.createRecipe(id: id, draft)
                            return (index, true)
                        } catch {
                            return (index, false)
                        }
                    }
                }
                var outcomes: [Int: Bool] = [:]
                for await (index, ok) in group { outcomes[index] = ok }
                return outcomes
            }
            for (index, id) in ids.enumerated() {
                let refused = index % 7 == 3 || index % 7 == 5
                #expect(outcomes[index] == !refused, "write \(index)")
                let stored = try? await store.recipe(id)
                #expect((stored != nil) == !refused, "recipe \(index)")
                if let stored { #expect(stored.ingredients.map(\.text) == ["\(index) g flour"]) }
            }
            // Every stored recipe is in the change feed once, each with a version of its own.
            let feed = try await store.syncChanges(since: 0, exclude: nil, limit: 1_000)
            let recorded = feed.records.filter { $0.kind == .recipe }.map(\.id)
            let expected = ids.enumerated().filter { $0.offset % 7 != 3 && $0.offset % 7 != 5 }.map { $0.element.uuidString }
            for id in expected { #expect(recorded.filter { $0.caseInsensitiveCompare(id) == .orderedSame }.count == 1, "feed \(id)") }
        }
    }

    @Test("a write alone in its transaction (no savepoint) that fails after writing leaves nothing, in the tables, the search index or the feed")
    func loneWriteFails() async throws {
        try await withStore { store in
            let before = try await store.syncChanges(since: 0, exclude: nil, limit: 1_000).records.count
            let id = UUID()
            await #expect(throws: ServiceError.self) {
                _ = try await store.write { db in
                    _ = try RecipeStore.insertRecipe(id, RecipeDraft(name: "Doomed alone", ingredients: [.init(text: "1 g salt")]),
                                                     createdAt: RecipeStore.now(), updatedAt: RecipeStore.now(), in: db)
                    throw ServiceError(.invalidArgument, "refused after writing")
                }
            }
            #expect((try? await store.recipe(id)) == nil)
            #expect(try await store.searchRecipes("doomed", limit: 10).isEmpty)
            #expect(try await store.syncChanges(since: 0, exclude: nil, limit: 1_000).records.count == before)
            // The next write alone is stored as usual.
            let (kept, _) = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Kept alone"))
            #expect(try await store.recipe(kept.id).name == "Kept alone")
            #expect(try await store.searchRecipes("kept", limit: 10).map(\.recipe.id) == [kept.id])
        }
    }
}

/// The write-ahead log goes into the database file on the checkpointer's queue, never inside a write's commit.
@Suite("Checkpoints beside the writer")
struct CheckpointerTests {
    @Test("the writer does not checkpoint by itself, the log stays bounded under many writes, and every write is in the file after close")
    func checkpointsBesideTheWriter() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-checkpoint-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try RecipeStore(folder: folder)
        let log = folder.appendingPathComponent(RecipeVault.databaseFileName + "-wal").path
        // SQLite's own automatic checkpoint is off on the writer: its log hook is the checkpointer's.
        let automatic = try await store.pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
        #expect(automatic == 0)
        var ids: [UUID] = []
        func create(_ index: Int) async throws {
            let draft = RecipeDraft(name: "Recipe \(index)", ingredients: (0..<12).map { .init(text: "\($0 + 1) g flour \(index)") },
                                    instructions: (0..<8).map { .init(text: "Step \($0) of recipe \(index), stir well") })
            ids.append(try await store.createRecipe(id: UUID.timeOrdered(), draft).recipe.id)
        }
        // Past the checkpoint's threshold and below the writer's limit: the pages reach the file beside the writer.
        let database = folder.appendingPathComponent(RecipeVault.databaseFileName).path
        let before = (try FileManager.default.attributesOfItem(atPath: database)[.size] as? Int) ?? 0
        func logFrames() -> Int { (((try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0) - 32) / (4_096 + 24) }
        var index = 0
        while index < 200, logFrames() < Int(Checkpointer.writerLimit) * 5 / 8 {
            try await create(index)
            index += 1
        }
        var inFile = before
        for _ in 0..<100 where inFile < before + 256 * 1_024 {
            try await Task.sleep(for: .milliseconds(50))
            inFile = (try FileManager.default.attributesOfItem(atPath: database)[.size] as? Int) ?? 0
        }
        #expect(inFile >= before + 256 * 1_024, "the database file grew from \(before) to \(inFile) bytes after \(index) creates (\(logFrames()) frames in the log)")
        for index in index..<(index + 250) { try await create(index) }
        // Written without any checkpoint, the log would hold every page of 250 creates (tens of megabytes).
        let written = try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count") } ?? 0
        let logBytes = (try FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0
        #expect(logBytes < 24 * 1_024 * 1_024, "log \(logBytes) bytes for a \(written)-page database")
        try store.close()
        let reopened = try RecipeStore(folder: folder)
        #expect(try reopened.integrityCheck() == "ok")
        for id in ids { #expect(try await reopened.recipe(id).id == id) }
        try reopened.close()
        try reopened.close() // closing twice gives nothing back twice
    }

    @Test("a checkpoint a reader held back (an export, a backup) reaches the log's end by itself once the reader is done, with no write after it")
    func heldBackCheckpointFinishes() async throws {
        try await withStore { store in
            let database = store.folder.appendingPathComponent(RecipeVault.databaseFileName).path
            let log = database + "-wal"
            func size(_ path: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
            _ = try store.pool.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            let before = size(database)
            // A reader of another connection, started while the log is empty: no page of the log may go into the file
            // while it reads.
            var readOnly = Configuration()
            readOnly.readonly = true
            readOnly.allowsUnsafeTransactions = true // the read stays open across the writes below
            let reader = try DatabaseQueue(path: database, configuration: readOnly)
            try reader.inDatabase { db in try db.execute(sql: "BEGIN; SELECT count(*) FROM recipes") }
            var index = 0
            while index < 400, (size(log) - 32) / (4_096 + 24) < Int(Checkpointer.threshold) * 5 / 4 {
                let draft = RecipeDraft(name: "Recipe \(index)", ingredients: (0..<12).map { .init(text: "\($0 + 1) g flour \(index)") },
                                        instructions: (0..<8).map { .init(text: "Step \($0) of recipe \(index), stir well") })
                _ = try await store.createRecipe(id: UUID.timeOrdered(), draft)
                index += 1
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(size(database) == before, "the reader held every page of the log back")
            try reader.inDatabase { db in try db.execute(sql: "COMMIT") }
            try reader.close()
            // No write from here on: only the checkpointer's own retry can move the pages.
            let pages = try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count") } ?? 0
            var inFile = size(database)
            for _ in 0..<300 where inFile < pages * 4_096 {
                try await Task.sleep(for: .milliseconds(50))
                inFile = size(database)
            }
            #expect(inFile >= pages * 4_096, "the database file is \(inFile) bytes of \(pages * 4_096) after \(index) creates")
        }
    }
}

/// The change capture takes the recipe a write read back only while no row has changed since.
@Suite("The feed's record from the write's own read-back")
struct ReadBackRecordTests {
    func recordValues(_ store: RecipeStore, _ id: UUID) async throws -> [String: JSONValue] {
        let feed = try await store.syncChanges(since: 0, exclude: nil, limit: 1_000)
        let record = try #require(feed.records.last { $0.kind == .recipe && $0.id.caseInsensitiveCompare(id.uuidString) == .orderedSame })
        return record.fields
    }

    @Test("a create's record holds what the tables hold; a change after the read-back in the same write is in the record too")
    func recordMatchesTables() async throws {
        try await withStore { store in
            let draft = RecipeDraft(name: "Read back", ingredients: [.init(text: "2 cups flour"), .init(text: "1 egg")],
                                    instructions: [.init(text: "Mix")], keywords: ["quick"])
            let (created, _) = try await store.createRecipe(id: UUID.timeOrdered(), draft)
            let fresh = try await store.pool.read { db in try SyncLog.currentValues(.recipe, created.id.databaseText, stored: [:], in: db) }
            let fields = try await recordValues(store, created.id)
            for (name, value) in try #require(fresh) { #expect(fields[name] == value, "\(name)") }

            // Read back, then changed again in the same write: the record must hold the later value.
            _ = try await store.write { db in
                var edited = draft
                edited.notes = "as read back"
                _ = try RecipeStore.writeFields(of: edited, to: created.id, in: db)
                try db.execute(sql: "UPDATE recipes SET notes = 'changed after the read-back' WHERE id = ?", arguments: [created.id.databaseText])
            }
            #expect(try await recordValues(store, created.id)["notes"] == .string("changed after the read-back"))
            #expect(try await store.recipe(created.id).notes == "changed after the read-back")
        }
    }
}
