import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
@testable import RecipeStore
import TestRandom
import Testing

/// Can-make keeps only an id and a count per qualifying recipe and reads the foods of the few it returns again.
/// Checked here against the straightforward version that keeps every qualifying recipe's foods (the one it replaced).
@Suite("Can-make against its straightforward version")
struct CanMakeReferenceTests {
    @Test("random questions over the samples and random recipes get the same answers, in the same order")
    func sameAnswers() async throws {
        try await withStore { store async throws in
            _ = try await store.loadSamples()
            var rng = SplitMix(seed: 41)
            // Foods the samples use, their aliases and staples, and foods of their own.
            let foods = ["eggs", "rice", "garlic", "salt", "olive oil", "scallions", "green onion", "chickpeas", "tahini",
                         "lemons", "cumin", "milk", "flour", "butter", "sugar", "carrot", "tomatoes", "basil", "pepper"]
            for number in 0..<80 {
                let count = Int.random(in: 1...7, using: &rng)
                let lines = (0..<count).map { _ in "\(Int.random(in: 1...4, using: &rng)) cups \(foods.randomElement(using: &rng)!)" }
                _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Dish \(number % 13)",
                                                                         ingredients: lines.map { RecipeDraft.Line(text: $0) }))
            }
            for _ in 0..<60 {
                let have = (0..<Int.random(in: 0...8, using: &rng)).map { _ in foods.randomElement(using: &rng)! }
                let maxMissing = Int.random(in: 0...5, using: &rng)
                let staples = Bool.random(using: &rng)
                let limit = [1, 2, 5, 17, 50, 200].randomElement(using: &rng)!
                let answer = try await store.canMake(have: have, maxMissing: maxMissing, ignoreStaples: staples, limit: limit)
                let reference = try await store.pool.read { db in
                    try Self.reference(have: have.map(IngredientParser.normalizeFood), maxMissing: maxMissing,
                                       ignoreStaples: staples, limit: limit, in: db)
                }
                #expect(answer.matching == reference.matching, "have \(have), missing ≤ \(maxMissing), staples ignored: \(staples)")
                #expect(answer.results == reference.results, "have \(have), missing ≤ \(maxMissing), limit \(limit), staples ignored: \(staples)")
            }
        }
    }

    /// Every qualifying recipe with its foods and missing foods, then ranked: fewest missing, name, id.
    private static func reference(have: [String], maxMissing: Int, ignoreStaples: Bool, limit: Int, in db: Database) throws
        -> (results: [CanMakeResult], matching: Int) {
        var canonical: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT a.alias, i.name FROM ingredient_aliases a JOIN ingredients i ON i.id = a.ingredientId") {
            canonical[row[0]] = row[1]
        }
        let owned = Set(have.map { canonical[$0] ?? $0 }.filter { !$0.isEmpty })
        var foodsByRecipe: [String: [String]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT recipeId, food FROM recipe_ingredients WHERE food IS NOT NULL AND food != '' ORDER BY recipeId, position") {
            let food = canonical[row[1] as String] ?? row[1]
            if !(foodsByRecipe[row[0], default: []].contains(food)) { foodsByRecipe[row[0], default: []].append(food) }
        }
        var qualifying: [(missing: [String], name: String, id: String, foods: [String])] = []
        for (id, foods) in foodsByRecipe {
            let missing = (ignoreStaples ? foods.filter { !RecipeStore.pantryStaples.contains($0) } : foods).filter { !owned.contains($0) }
            guard missing.count <= maxMissing else { continue }
            let title = try String.fetchOne(db, sql: "SELECT title FROM recipes WHERE id = ?", arguments: [id]) ?? ""
            qualifying.append((missing, title.lowercased(), id, foods))
        }
        qualifying.sort { ($0.missing.count, $0.name, $0.id) < ($1.missing.count, $1.name, $1.id) }
        let results = try qualifying.prefix(limit).compactMap { item -> CanMakeResult? in
            guard let summary = try db.firstRow("SELECT \(RecipeStore.summaryColumns) FROM recipes r WHERE r.id = ?", [item.id], RecipeStore.summary) else {
                return nil
            }
            return CanMakeResult(recipe: summary, missing: item.missing, matched: item.foods.count - item.missing.count, total: item.foods.count)
        }
        return (results, qualifying.count)
    }
}
