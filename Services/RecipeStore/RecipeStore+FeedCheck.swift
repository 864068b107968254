import Foundation
import GRDB
import RecipeProtocol

extension RecipeStore {
    /// Where the change feed and the tables disagree on what exists: a live record whose row is gone, or a row no
    /// live record stands for. Empty when they agree — as they must after every write, local or applied, or replicas
    /// never converge: the feed is what other replicas get, the tables what this one answers from. (Values may
    /// differ by design: a merge no person could write, such as one line id in two lists, is made valid in the
    /// tables the same way on every replica.) Each finding is "kind id: why".
    public func feedDisagreements(limit: Int = 20) async throws -> [String] {
        try await pool.read { db in
            let tables: [(kind: SyncKind, table: String, key: String)] = [
                (.recipe, "recipes", "id"), (.book, "books", "id"), (.ingredient, "ingredients", "name"), (.cookLog, "cook_log", "id"),
            ]
            var found: [String] = []
            for (kind, table, key) in tables where found.count < limit {
                found += try String.fetchAll(db, sql: """
                    SELECT r.id || ': its record is live, its row is gone' FROM sync_records r
                    WHERE r.kind = ? AND r.live = 1 AND NOT EXISTS (SELECT 1 FROM \(table) t WHERE t.\(key) = r.id)
                    UNION ALL
                    SELECT t.\(key) || ': its row has no live record' FROM \(table) t
                    WHERE NOT EXISTS (SELECT 1 FROM sync_records r WHERE r.kind = ? AND r.id = t.\(key) AND r.live = 1)
                    LIMIT ?
                    """, arguments: [kind.rawValue, kind.rawValue, limit]).map { "\(kind.rawValue) \($0)" }
            }
            // A catalogue entry's row id is the records' to give (`SyncLog.settleCatalogue`), whatever order they came in.
            if found.count < limit {
                let (placed, target) = try SyncLog.cataloguePlacement(in: db)
                for (name, id) in placed.sorted(by: { $0.key < $1.key }) where target[name] != id {
                    found.append("ingredient \(name): its row id is \(id), and the records place it at \(target[name] ?? "none")")
                }
            }
            return Array(found.prefix(limit))
        }
    }
}
