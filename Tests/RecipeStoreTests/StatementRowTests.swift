import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
import Testing
import TestRandom
@testable import RecipeStore

/// A recipe is read by column position straight from SQLite (`StatementRow`), not through GRDB's `Row`.
/// These hold that reading to GRDB's conversions, and show that a stored value of the wrong kind is read
/// as a fallback instead of stopping the service.
@Suite("Rows read by column position")
struct StatementRowTests {
    /// Every storage class SQLite has, and the texts a recipe's columns hold (ids in both cases, dates, odd text).
    static let values: [DatabaseValue] = [
        .null, 0.databaseValue, 1.databaseValue, (-7).databaseValue, Int64.max.databaseValue, 2.5.databaseValue,
        (-0.0).databaseValue, 1e300.databaseValue, "".databaseValue, "text".databaseValue, "12".databaseValue,
        "E621E1F8-C36C-495A-93FC-0C247A3E6E5F".databaseValue, "e621e1f8-c36c-495a-93fc-0c247a3e6e5f".databaseValue,
        "E621E1F8-C36C-495A-93FC-0C247A3E6E5".databaseValue, "E621E1F8xC36C-495A-93FC-0C247A3E6E5F".databaseValue,
        "2026-11-26 01:02:03.456".databaseValue, "2026-11-26".databaseValue, "2026-11-26T01:02:03Z".databaseValue,
        "héllo wörld 🍅".databaseValue, Data([0, 1, 2]).databaseValue,
    ]

    @Test("each column reads as GRDB's Row converts it, wherever GRDB converts it")
    func readsAsRowDoes() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (position INTEGER PRIMARY KEY, v)")
            for (position, value) in Self.values.enumerated() {
                try db.execute(sql: "INSERT INTO t (position, v) VALUES (?, ?)", arguments: [position, value])
            }
        }
        try queue.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT v FROM t ORDER BY position")
            var position = 0
            try db.forEachRow("SELECT v FROM t ORDER BY position", []) { row in
                let expected = rows[position]
                let value: DatabaseValue = expected[0]
                func check<T: DatabaseValueConvertible & StatementColumnConvertible & Equatable>(_: T.Type) {
                    // Where GRDB's Row gives a value, the column reader gives the same one; NULL is nil for both.
                    if let converted = T.fromDatabaseValue(value) { #expect(row[0] as T? == converted, "\(value) as \(T.self)") }
                    if value.isNull { #expect(row[0] as T? == nil) }
                }
                // A blob is never stored where text is read: GRDB's Row decodes its bytes, the column reader stops at a NUL.
                let isBlob = if case .blob = value.storage { true } else { false }
                if !isBlob { check(String.self) }
                check(Int.self)
                check(Int64.self)
                check(Double.self)
                check(Bool.self)
                check(Date.self)
                let text = String.fromDatabaseValue(value)
                if !isBlob { #expect(row.storedText(0) == text, "\(value): stored text") }
                #expect(row.uuid(0) == text.flatMap { UUID(uuidString: $0) }, "\(value): uuid")
                position += 1
            }
            #expect(position == Self.values.count)
        }
    }

    @Test("random dates read back as GRDB reads them")
    func randomDates() throws {
        var random = SplitMix(seed: 0xDA7E)
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (position INTEGER PRIMARY KEY, v)")
            for position in 0..<500 {
                let date = Date(timeIntervalSince1970: Double(random.below(4_000_000_000_000)) / 1_000)
                try db.execute(sql: "INSERT INTO t (position, v) VALUES (?, ?)", arguments: [position, date])
            }
            let expected = try Row.fetchAll(db, sql: "SELECT v FROM t ORDER BY position").map { $0[0] as Date }
            var read: [Date] = []
            try db.forEachRow("SELECT v FROM t ORDER BY position", []) { read.append($0[0, or: .distantPast]) }
            #expect(read == expected)
        }
    }

    @Test("firstRow stops at the first row, and a statement left by a thrown error is ready for its next use")
    func firstRowAndErrors() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (v INTEGER)")
            try db.execute(sql: "INSERT INTO t (v) VALUES (1), (2), (3)")
            var calls = 0
            let first = try db.firstRow("SELECT v FROM t ORDER BY v", []) { row -> Int in
                calls += 1
                return row[0, or: -1]
            }
            #expect(first == 1 && calls == 1)
            #expect(try db.firstRow("SELECT v FROM t WHERE v > ?", [9]) { $0[0, or: -1] as Int } == nil)
            struct Stop: Error {}
            #expect(throws: Stop.self) { try db.forEachRow("SELECT v FROM t ORDER BY v", []) { _ in throw Stop() } }
            var all: [Int] = []
            try db.forEachRow("SELECT v FROM t ORDER BY v", []) { all.append($0[0, or: -1]) }
            #expect(all == [1, 2, 3])
            // A write can follow: nothing is left stepping.
            try db.execute(sql: "DELETE FROM t")
            // Wrong arguments are GRDB's error, not a crash.
            #expect(throws: DatabaseError.self) { try db.forEachRow("SELECT v FROM t WHERE v = ?", []) { _ in } }
        }
    }

    @Test("a recipe whose stored values are of the wrong kind is read with fallbacks, not a crash")
    func damagedRecipeReads() async throws {
        let store = try temporaryStore()
        let draft = RecipeDraft(name: "Soup", ingredients: [.init(text: "2 carrots"), .init(text: "salt")],
                                instructions: [.init(text: "Boil.")], keywords: ["warm"])
        let (recipe, _) = try await store.createRecipe(id: UUID(), draft)
        try await store.pool.write { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            defer { try? db.execute(sql: "PRAGMA ignore_check_constraints = OFF") }
            try db.execute(sql: "UPDATE recipes SET rating = 'five', servings = 'many', sourcePageNumber = x'00' WHERE id = ?",
                           arguments: [recipe.id.databaseText])
            try db.execute(sql: "UPDATE recipe_ingredients SET id = 'not an id ' || position, quantity = 'some' WHERE recipeId = ?",
                           arguments: [recipe.id.databaseText])
        }
        let read = try await store.recipe(recipe.id)
        #expect(read.name == "Soup" && read.keywords == ["warm"] && read.instructions.map(\.text) == ["Boil."])
        #expect(read.ingredients.map(\.text) == ["2 carrots", "salt"])
        #expect(Set(read.ingredients.map(\.id)).count == 2) // ids that are not UUIDs get fresh ones
        #expect(read.rating == 0) // SQLite's conversion of the text 'five'
        // Lists and search read the same row as a summary.
        let listed = try await store.listRecipes(RecipeListQuery(limit: 10)).recipes.first { $0.id == recipe.id }
        #expect(listed?.name == "Soup" && listed?.rating == 0)
        #expect(try await store.searchRecipes("soup", limit: 5).map(\.recipe.id).contains(recipe.id))
    }
}
