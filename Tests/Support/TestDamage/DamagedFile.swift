import Foundation
import GRDB
import RecipeProtocol

/// Damage done to a stopped storage's files, as a failing disk would do it.
public enum DamagedFile {
    /// Overwrites the first page (the root) of `table` in the database file of `folder` with random bytes.
    public static func overwriteRoot(of table: String, in folder: URL) async throws {
        let file = folder.appendingPathComponent(RecipeVault.databaseFileName)
        let (page, pageSize) = try await DatabaseQueue(path: file.path).read { db in
            (try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = ?", arguments: [table]) ?? 0,
             try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0)
        }
        guard page > 1, pageSize >= 512 else { throw DamageError("\(table) has no page of its own to damage (root \(page), page size \(pageSize))") }
        let handle = try FileHandle(forWritingTo: file)
        try handle.seek(toOffset: UInt64((page - 1) * pageSize))
        var generator = SystemRandomNumberGenerator()
        try handle.write(contentsOf: Data((0..<pageSize).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        try handle.close()
    }

    struct DamageError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
