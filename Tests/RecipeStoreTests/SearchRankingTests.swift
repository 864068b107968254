import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
import Testing
import TestRandom
@testable import RecipeStore

/// Search ranks by `recipe_rank`, which keeps what bm25 reads between searches: it must give bm25's score, to the
/// bit, for every matching row, on the first search and every one after, whatever changed the index in between.
@Suite("Search ranking")
struct SearchRankingTests {
    static let weights = RecipeStore.searchWeights
    static let words = ["bean", "beet", "beef", "carrot", "caraway", "dill", "dal", "egg", "eggplant", "fennel",
                        "garlic", "ginger", "herb", "honey", "leek", "lemon", "lime", "mint", "miso", "onion"]
    static let matches = [
        "\"be\"*", "\"bean\"* AND \"dill\"*", "(\"leek\"* OR \"lime\"*) AND \"egg\"*", "(\"garlic\"*) NOT (\"onion\"*)",
        "\"c\"* AND \"d\"* AND \"e\"*", "\"honey\"*", "\"mint\"* AND \"miso\"*", "\"l\"*",
    ]

    static func text(_ random: inout SplitMix, words count: Int) -> String {
        (0..<count).map { _ in words[random.below(words.count)] }.joined(separator: " ")
    }

    static func draft(_ random: inout SplitMix, long: Bool = false) -> RecipeDraft {
        let scale = long ? 8 : 1
        return RecipeDraft(name: text(&random, words: 1 + random.below(4)),
                           description: text(&random, words: random.below(12) * scale),
                           ingredients: (0..<(1 + random.below(6))).map { _ in .init(text: "1 cup " + text(&random, words: 1 + random.below(3))) },
                           keywords: (0..<random.below(3)).map { _ in text(&random, words: 1) },
                           notes: text(&random, words: random.below(20) * scale))
    }

    /// Every matching row's `recipe_rank` beside its `bm25`, for each search, through the store's own ranking.
    static func mismatches(_ store: RecipeStore) throws -> [String] {
        try store.pool.read { db in
            var found: [String] = []
            for match in matches {
                var rows = 0
                try store.ranking.ranking(match, in: db) { query in
                    try db.forEachRow("""
                        SELECT rowid, recipe_rank(recipes_fts, ?, \(weights)), bm25(recipes_fts, \(weights))
                        FROM recipes_fts WHERE recipes_fts MATCH ?
                        """, [nil, match], bind: { query.bind(to: $0, at: 1) }) { row in
                        rows += 1
                        let rank: Double = row[1, or: .nan], bm25: Double = row[2, or: .nan]
                        if rank.bitPattern != bm25.bitPattern {
                            found.append("\(match) row \(row[0, or: Int64(0)]): \(rank) against bm25 \(bm25)")
                        }
                    }
                }
                if rows == 0 { found.append("\(match) matched nothing: the check checks nothing") }
            }
            return found
        }
    }

    @Test("every match scores as bm25, searched again after each kind of change to the index")
    func ranksAsBM25() async throws {
        try await withStore { store async throws in
            var random = SplitMix(seed: 17)
            var ids: [UUID] = []
            for _ in 0..<200 {
                ids.append(try await store.createRecipe(id: .timeOrdered(), Self.draft(&random)).recipe.id)
            }
            #expect(try Self.mismatches(store) == [], "the first search, reading every length")
            #expect(try Self.mismatches(store) == [], "again, with the lengths kept")

            // The recipe indexed last, edited to be much longer: its entry is deleted and added again, and SQLite
            // gives the new entry the rowid the old one had (the largest), with another length.
            let last = try await store.recipe(ids[ids.count - 1])
            _ = try await store.updateRecipe(id: last.id, expectedVersion: last.version, Self.draft(&random, long: true))
            #expect(try Self.mismatches(store) == [], "after the last recipe was edited longer")
            // Deleted, then a new one in its place (the same rowid again).
            _ = try await store.deleteRecipe(id: last.id)
            #expect(try Self.mismatches(store) == [], "after a delete")
            _ = try await store.createRecipe(id: .timeOrdered(), Self.draft(&random, long: true))
            #expect(try Self.mismatches(store) == [], "after a create in the deleted one's place")
            // Many edits, some shorter, some longer, and searches between.
            for round in 0..<20 {
                let id = ids[random.below(ids.count - 1)]
                let recipe = try await store.recipe(id)
                _ = try await store.updateRecipe(id: id, expectedVersion: recipe.version, Self.draft(&random, long: round % 2 == 0))
                if round % 5 == 4 { #expect(try Self.mismatches(store) == [], "after edit round \(round)") }
            }
        }
    }

    @Test("what searches read is kept for every search text while the index is unchanged, and dropped for a database replaced, even mid-search")
    func keptUntilReplaced() async throws {
        try await withStore { store async throws in
            var random = SplitMix(seed: 5)
            for _ in 0..<60 { _ = try await store.createRecipe(id: .timeOrdered(), Self.draft(&random)) }
            #expect(try Self.mismatches(store) == [])
            var kept = store.ranking.state
            #expect(Set(kept.idf.keys) == Set(Self.matches), "each search text's counts, kept side by side")
            #expect(kept.lengths?.filter { $0 > 0 }.count == 60)
            // A snapshot installed while a search runs: what that search read belongs to the database before.
            try await store.pool.read { db in
                try store.ranking.ranking(Self.matches[0], in: db) { query in
                    try db.forEachRow("SELECT recipe_rank(recipes_fts, ?, \(Self.weights)) FROM recipes_fts WHERE recipes_fts MATCH ?",
                                      [nil, Self.matches[0]], bind: { query.bind(to: $0, at: 1) }) { _ in }
                    store.ranking.forget()
                }
            }
            kept = store.ranking.state
            #expect(kept.lengths?.contains { $0 > 0 } != true, "no row's length put back")
            #expect(kept.idf.isEmpty)
            #expect(try Self.mismatches(store) == [], "read again after")
        }
    }

    @Test("the search index never gives a rowid twice: not after the largest is deleted, nor after a restart")
    func rowidsGivenOnce() async throws {
        try await withFolder { folder async throws in
            func largest(_ store: RecipeStore) throws -> Int64 {
                try store.pool.read { db in try Int64.fetchOne(db, sql: "SELECT max(ftsRowid) FROM recipe_search_keys") ?? 0 }
            }
            var random = SplitMix(seed: 9)
            var store = try RecipeStore(folder: folder)
            var ids: [UUID] = []
            for _ in 0..<150 { ids.append(try await store.createRecipe(id: .timeOrdered(), Self.draft(&random)).recipe.id) }
            var given = try largest(store)
            // The recipe holding the largest rowid deleted, then another added: a new rowid.
            _ = try await store.deleteRecipe(id: ids.removeLast())
            ids.append(try await store.createRecipe(id: .timeOrdered(), Self.draft(&random)).recipe.id)
            #expect(try largest(store) == given + 1)
            given += 1
            // Edited: deleted and added in one write, a new rowid again.
            let last = try await store.recipe(ids[ids.count - 1])
            _ = try await store.updateRecipe(id: last.id, expectedVersion: last.version, Self.draft(&random))
            #expect(try largest(store) == given + 1)
            given += 1
            // Deleted before a restart: the next one after it still gets a new rowid.
            _ = try await store.deleteRecipe(id: ids.removeLast())
            try store.close()
            store = try RecipeStore(folder: folder)
            _ = try await store.createRecipe(id: .timeOrdered(), Self.draft(&random))
            #expect(try largest(store) == given + 1)
            #expect(try Self.mismatches(store) == [])
            try store.close()
        }
    }

    @Test("search results carry bm25's score and order")
    func resultsAsBM25() async throws {
        try await withStore { store async throws in
            var random = SplitMix(seed: 5)
            for _ in 0..<120 { _ = try await store.createRecipe(id: .timeOrdered(), Self.draft(&random)) }
            for text in ["be", "bean dill", "leek OR lime egg", "garlic -onion", "honey"] {
                for limit in [50, 1, 7, 50] { // read, then kept; the best 1 and 7 of many
                    let hits = try await store.searchRecipes(text, limit: limit)
                    let reference = try await Self.bm25Scores(store, text: text)
                    #expect(!hits.isEmpty, "\(text)")
                    for hit in hits {
                        #expect(reference[hit.recipe.id.uuidString] == hit.score, "\(text): \(hit.recipe.name)")
                    }
                    let best = reference.values.sorted(by: >).prefix(hits.count)
                    #expect(hits.map(\.score) == Array(best), "\(text): the best of all matches, best first")
                    #expect(hits.count == min(limit, reference.count), "\(text): \(limit) asked, \(reference.count) match")
                }
            }
        }
    }

    @Test("random searches, between random edits, deletes and creates, answer bm25's best of all matches")
    func randomSearchesAsBM25() async throws {
        for seed: UInt64 in [1, 2, 3] {
            try await withStore { store async throws in
                var random = SplitMix(seed: seed)
                var ids: [UUID] = []
                for _ in 0..<80 { ids.append(try await store.createRecipe(id: .timeOrdered(), Self.draft(&random)).recipe.id) }
                for step in 0..<60 {
                    switch random.below(4) {
                    case 0 where ids.count > 10:
                        _ = try await store.deleteRecipe(id: ids.remove(at: random.below(ids.count)))
                    case 1:
                        ids.append(try await store.createRecipe(id: .timeOrdered(), Self.draft(&random, long: random.below(2) == 0)).recipe.id)
                    case 2:
                        let id = ids[random.below(ids.count)]
                        let recipe = try await store.recipe(id)
                        _ = try await store.updateRecipe(id: id, expectedVersion: recipe.version, Self.draft(&random, long: random.below(2) == 0))
                    default:
                        break // searches again on the same index: what was kept is used
                    }
                    // A word, a prefix of one, alternatives, or a word left out.
                    func word() -> String {
                        let whole = Self.words[random.below(Self.words.count)]
                        return random.below(3) == 0 ? String(whole.prefix(1 + random.below(whole.count))) : whole
                    }
                    var text = word()
                    for _ in 0..<random.below(3) {
                        switch random.below(3) {
                        case 0: text += " OR " + word()
                        case 1: text += " -" + word()
                        default: text += " " + word()
                        }
                    }
                    let limit = [1, 3, 20][random.below(3)]
                    let hits = try await store.searchRecipes(text, limit: limit)
                    let reference = try await Self.bm25Scores(store, text: text)
                    let context = "seed \(seed) step \(step): \"\(text)\" limit \(limit)"
                    #expect(hits.count == min(limit, reference.count), "\(context)")
                    #expect(hits.map(\.score) == Array(reference.values.sorted(by: >).prefix(limit)), "\(context)")
                    for hit in hits { #expect(reference[hit.recipe.id.uuidString] == hit.score, "\(context): \(hit.recipe.name)") }
                }
            }
        }
    }

    /// Every recipe matching `text` with its bm25 score (as a search hit's: higher is better), by FTS5's own bm25.
    static func bm25Scores(_ store: RecipeStore, text: String) async throws -> [String: Double] {
        let match = try RecipeStore.searchExpression(text).match
        return try await store.pool.read { db in
            var scores: [String: Double] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT k.recipeId AS id, bm25(recipes_fts, \(weights)) AS rank FROM recipes_fts
                JOIN recipe_search_keys k ON k.ftsRowid = recipes_fts.rowid WHERE recipes_fts MATCH ?
                """, arguments: [match]) {
                scores[row["id"]] = -(row["rank"] as Double)
            }
            return scores
        }
    }
}
