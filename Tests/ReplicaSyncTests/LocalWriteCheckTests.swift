import Foundation
import RecipeModel
import RecipeProtocol
@testable import RecipeStore
import ReplicaSync
import Testing

/// What a person writes on one replica is what every other replica takes: a write another replica would hold back
/// (its record failing the checks a received record goes through) is refused where it is made, with what is allowed,
/// instead of being stored here and never reaching the others.
@Suite("Replica sync: a local write is one other replicas take")
struct LocalWriteCheckTests {
    @Test("a catalogue entry keeps to the limits replicas hold it to: at most 50 aliases of 1 to 100 characters")
    func catalogueLimits() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            // Once stored with 2,500 aliases (2 MB of them), such an entry was held back by every other replica,
            // while `recipes sync` said the two were in step.
            let many = (0...50).map { "alias \($0)" }
            let tooMany = await #expect(throws: ServiceError.self) {
                _ = try await a.store.upsertIngredient(id: UUID(), name: "quince", category: nil, aliases: many)
            }
            #expect(tooMany?.code == .invalidArgument)
            #expect(tooMany?.message == "the ingredient has 51 aliases; the most allowed is 50")
            let long = String(repeating: "q", count: 101)
            let tooLong = await #expect(throws: ServiceError.self) {
                _ = try await a.store.upsertIngredient(id: UUID(), name: "quince", category: nil, aliases: ["membrillo", long])
            }
            #expect(tooLong?.message.hasPrefix("the alias \"qqqq") == true && tooLong?.message.hasSuffix("is 101 characters; the most allowed is 100") == true)
            let longName = String(repeating: "quince ", count: 20_000)
            let badName = await #expect(throws: ServiceError.self) {
                _ = try await a.store.upsertIngredient(id: UUID(), name: longName, category: nil, aliases: [])
            }
            #expect(badName?.message.contains("must be 1 to 100 characters") == true)
            #expect((badName?.message.utf8.count ?? .max) < 300, "the refusal does not echo 140,000 characters back")
            let missing = await #expect(throws: ServiceError.self) { _ = try await a.store.findIngredient("quince") }
            #expect(missing?.code == .notFound, "nothing of a refused entry is stored")

            // At the limits: stored here, and taken by the other replica.
            let atLimit = (0..<50).map { "alias \($0) " + String(repeating: "q", count: 100 - "alias \($0) ".count) }
            let entry = try await a.store.upsertIngredient(id: UUID(), name: "quince", category: .fruit, aliases: atLimit)
            #expect(entry.aliases.count == 50)
            try await syncAll([a, b])
            #expect(try await b.store.heldRecords().isEmpty)
            #expect(try await b.store.findIngredient(atLimit[49]).name == "quince")
            try await expectSameContent(a, b)
        }
    }

    @Test("a write whose record another replica would hold back is refused whole, saying why; a deletion goes through")
    func recordCheckedAtCapture() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let entry = try await a.store.upsertIngredient(id: UUID(), name: "medlar", category: nil, aliases: ["loquat"])
            // A write that gets past its operation's own checks (here, rows written straight into the tables) is
            // still checked as its record will be on another replica.
            let refused = await #expect(throws: ServiceError.self) {
                try await a.store.write { db in
                    try db.execute(sql: "UPDATE ingredients SET category = 'fruit' WHERE id = ?", arguments: [entry.id.databaseText])
                    for index in 0..<60 {
                        try db.execute(sql: "INSERT INTO ingredient_aliases (ingredientId, alias) VALUES (?, ?)",
                                       arguments: [entry.id.databaseText, "other name \(index)"])
                    }
                }
            }
            #expect(refused?.code == .invalidArgument)
            #expect(refused?.message.hasPrefix("the ingredient has 61 aliases; the most allowed is 50; nothing was stored") == true)
            let kept = try await a.store.findIngredient("medlar")
            #expect(kept.aliases == ["loquat"] && kept.category == nil, "the refused write's other changes are undone too")
            try await syncAll([a, b])
            #expect(try await b.store.heldRecords().isEmpty)
            try await expectSameContent(a, b)

            // A recipe written straight into its row past a draft's limits is refused the same way.
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Medlar jelly"))
            let longName = await #expect(throws: ServiceError.self) {
                try await a.store.write { db in
                    try db.execute(sql: "UPDATE recipes SET title = ? WHERE id = ?",
                                   arguments: [String(repeating: "m", count: 201), recipe.id.databaseText])
                }
            }
            #expect(longName?.message.contains("the most allowed is 200") == true)
            #expect(try await a.store.recipe(recipe.id).name == "Medlar jelly")
            // A record past the limits can still be deleted (an older version may have stored it): a tombstone carries
            // no values. (Written here without a record, as such a version's write would stand.)
            try await a.store.pool.write { db in
                try db.execute(sql: "UPDATE recipes SET title = ? WHERE id = ?", arguments: [String(repeating: "m", count: 201), recipe.id.databaseText])
            }
            #expect(try await a.store.deleteRecipe(id: recipe.id))
            try await syncAll([a, b])
            try await expectSameContent(a, b)
        }
    }

    @Test("a recipe whose name an older version stored past 4 bytes a character can still be cooked: the log copies the name cut within its limit, and the other replica takes the entry")
    func heavyStoredNameCooked() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Quince paste"))
            try await syncAll([a, b])
            // As an older version stored it (its write captured without a person's write's check): 200 characters,
            // each a letter under 30 combining marks (12,200 bytes).
            let heavy = String(repeating: "q" + String(repeating: "\u{301}", count: 30), count: 200)
            try await a.store.pool.write { db in
                try db.execute(sql: "UPDATE recipes SET title = ? WHERE id = ?", arguments: [heavy, recipe.id.databaseText])
                try SyncLog.capture(in: db)
            }
            let entry = try await a.store.addCookLogEntry(id: UUID(), recipeID: recipe.id, cookedAt: nil, rating: 5, note: "Set well.", servings: nil)
            #expect(entry.recipeName.count == 13 && heavy.hasPrefix(entry.recipeName) && entry.recipeName.isWithin(characters: RecipeDraft.Limits.nameLength))
            try await syncAll([a, b])
            #expect(try await b.store.heldRecords().map(\.kind) == [.recipe], "the recipe's own heavy name waits for a newer version; its cook log does not")
            #expect(try await b.store.cookLogPage(recipeID: recipe.id, limit: 10, after: nil).entries.map(\.recipeName) == [entry.recipeName])
        }
    }

    @Test("a recipe merged past 4 MiB of text from two replicas' edits, each within it, is taken by both, and may be edited without growing")
    func mergedPastTextBytes() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Long", instructions: [.init(text: "Stir.")]))
            try await syncAll([a, b])
            // 3.8 MiB of steps on one replica, 1 MB of lines and notes on the other: 4.8 MiB merged.
            let onA = try await a.store.recipe(recipe.id)
            var steps = RecipeDraft(onA)
            steps.instructions = (0..<100).map { _ in .init(text: String(repeating: "🍅", count: 10_000)) }
            _ = try await a.store.updateRecipe(id: recipe.id, expectedVersion: onA.version, steps)
            let onB = try await b.store.recipe(recipe.id)
            var lines = RecipeDraft(onB)
            lines.ingredients = (0..<250).map { .init(text: "\($0) " + String(repeating: "🧅", count: 990)) }
            lines.notes = String(repeating: "🧄", count: 20_000)
            _ = try await b.store.updateRecipe(id: recipe.id, expectedVersion: onB.version, lines)
            try await syncAll([a, b])
            #expect(try await a.store.heldRecords().isEmpty)
            #expect(try await b.store.heldRecords().isEmpty)
            try await expectSameContent(a, b)
            let merged = try await a.store.recipe(recipe.id)
            #expect(merged.instructions.count == 100 && merged.ingredients.count == 250 && RecipeDraft(merged).textBytes > RecipeDraft.Limits.textBytes)

            // An edit that leaves it no larger goes through; one that makes it larger is refused, saying what it may keep.
            var renamed = RecipeDraft(merged)
            renamed.name = "Long, merged"
            renamed.notes = "Steps and lines from two replicas."
            let edited = try await a.store.updateRecipe(id: recipe.id, expectedVersion: merged.version, renamed)
            var grown = RecipeDraft(edited)
            grown.instructions.append(.init(text: String(repeating: "🍅", count: 10_000)))
            let refused = await #expect(throws: ServiceError.self) {
                _ = try await a.store.updateRecipe(id: recipe.id, expectedVersion: edited.version, grown)
            }
            let had = String(format: "%.1f", Double(RecipeDraft(edited).textBytes) / 1_048_576)
            #expect(refused?.message.contains("a recipe may hold at most 4.0 MiB of text (UTF-8, every field together) (one synced with more may keep the \(had) MiB it has, and add none)") == true,
                    "\(refused?.message ?? "")")
            try await syncAll([a, b])
            try await expectSameContent(a, b)
        }
    }

    @Test("a sync says how many records each side holds back, so two replicas are never called in step while one refuses a record")
    func heldCounts() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
            let first = try await SyncEngine.sync(a, b)
            #expect(first.aToB.held == 0 && first.bToA.held == 0)
            // A record of a third replica (an older version, or a stranger with a peer's key) that b will not take.
            let clock = SyncClock(vv: ["peer1": 1], stamp: "0001763700000000.000000001.peer1")
            let bad = SyncRecord(kind: .recipe, id: UUID().uuidString, seq: 1, states: [
                "name": SyncField(value: .string(String(repeating: "n", count: 500)), clock: clock),
                SyncRecord.deletedField: SyncField(value: .bool(false), clock: clock),
            ])
            #expect(try await b.store.applySync(from: "peer1", records: [bad], cursor: nil, expecting: nil, after: nil).held == 1)
            _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Bread"))
            let second = try await SyncEngine.sync(a, b)
            #expect(second.aToB.changed == 1 && second.aToB.held == 1 && second.bToA.held == 0, "\(second)")
            // Nothing to send either way: still said, from what each side reports of itself.
            let third = try await SyncEngine.sync(a, b)
            #expect(third.aToB.changed == 0 && third.aToB.held == 1 && third.bToA.held == 0, "\(third)")
        }
    }
}

