import Foundation
import GRDB
import Logging
import Messaging
import RecipeModel
import RecipeProtocol
import RecipeStore
import StorageService
import TestDamage
import Testing

/// A `Recipes.sqlite` damaged on disk (a failing disk, a copy cut short, another program's write) made every request
/// that met the damage answer `internal_error` with SQLite's words and the storage's own SQL statement ("SQLite error
/// 11: database disk image is malformed - while executing `SELECT r.id, r.title, …`"), exit 70 in the CLI.
@Suite("A database damaged on disk: said as such, with what to do, and the rest still served")
struct DamagedDatabaseTests {
    @Test("requests that meet a damaged page are answered storage_damaged without SQL; what is intact is still read")
    func damagedPage() async throws {
        let folder = Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await Self.store(in: folder, recipes: 60)
        let book = try await store.createBook(id: UUID(), title: "Soups", author: nil)
        try store.close()

        // Overwrite the recipes table's first page (its root) in the file, as a failing disk would.
        try await DamagedFile.overwriteRoot(of: "recipes", in: folder)

        try await withStorageService(seedSamples: false, folder: folder) { client, _ async throws in
            for (op, call) in [("recipe.list", { _ = try await client.call(RecipeOps.List.self, RecipeListQuery()) }),
                               ("recipe.create", { _ = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(name: "After"))) })]
                as [(String, () async throws -> Void)] {
                let error = await #expect(throws: ServiceError.self) { try await call() }
                #expect(error?.code == .storageDamaged, "\(op): \(String(describing: error))")
                let message = error?.message ?? ""
                #expect(message.hasPrefix("\(op) was not done: Recipes.sqlite in recipe-storage's data folder is damaged where this request needed it (SQLite: "),
                        "\(message)")
                #expect(message.contains("nothing was changed. Stop recipe-storage and restore a backup into its data folder (README, \"Backups\")"), "\(message)")
                for statement in ["SELECT", "INSERT", "while executing", "`"] { #expect(!message.contains(statement), "\(message)") }
            }
            // The books are on pages of their own: still read.
            #expect(try await client.call(BookOps.List.self, .init()).books.map(\.book.id) == [book.id])
        }
    }

    @Test("damage a request met is remembered and reported by storage.stats (so by recipes status) while the counts still read")
    func damageInStats() async throws {
        let folder = Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Self.store(in: folder, recipes: 5).close()
        // The change feed's table, which a write records into and the counts do not read.
        try await DamagedFile.overwriteRoot(of: "sync_records", in: folder)
        try await withStorageService(seedSamples: false, folder: folder) { client, _ async throws in
            #expect(try await client.call(StorageOps.Stats.self, Empty()).problem == nil, "no request has met the damage yet")
            let error = await #expect(throws: ServiceError.self) {
                _ = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(name: "After")))
            }
            #expect(error?.code == .storageDamaged)
            let stats = try await client.call(StorageOps.Stats.self, Empty())
            #expect(stats.recipes == 5)
            #expect(stats.problem?.hasPrefix("Recipes.sqlite in recipe-storage's data folder is damaged where recipe.create needed it (SQLite: ") == true,
                    "\(stats.problem ?? "")")
            #expect(stats.problem?.contains("restore a backup") == true)
        }
    }

    /// A data folder of this test's own (the caller removes it).
    static func scratchFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("rv-damaged-\(UUID().uuidString)")
    }

    /// A store in `folder` holding `recipes` recipes ("Soup 0", "Soup 1", …).
    static func store(in folder: URL, recipes: Int) async throws -> RecipeStore {
        let store = try RecipeStore(folder: folder)
        for index in 0..<recipes { _ = try await store.createRecipe(id: UUID.timeOrdered(), RecipeDraft(name: "Soup \(index)")) }
        return store
    }

    /// A data folder removed while the storage ran (`rm -rf` of the wrong folder): every write was acknowledged into
    /// files no path named any more, and all of them were gone at the next start.
    @Test("a data folder, or the database's log alone, removed under a running storage: writes are refused, not acknowledged and lost", arguments: [false, true])
    func removedUnderIt(logOnly: Bool) async throws {
        let folder = Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withStorageService(seedSamples: false, folder: folder) { client, _ async throws in
            _ = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(name: "Before")))
            let removed = logOnly ? folder.appendingPathComponent(RecipeVault.databaseFileName + "-wal") : folder
            try FileManager.default.removeItem(at: removed)
            let error = await #expect(throws: ServiceError.self) {
                _ = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(name: "After")))
            }
            #expect(error?.code == .storageDamaged)
            let file = logOnly ? "Recipes.sqlite's log (Recipes.sqlite-wal)" : "Recipes.sqlite"
            #expect(error?.message == "recipe.create was not done: \(file) was removed from recipe-storage's data folder (\(folder.path)) while it ran, "
                    + "and a write now would be gone at its next start; nothing of this request was kept. Stop recipe-storage, put its data "
                    + "folder back as it was (or restore a backup into it) and start it again", "\(String(describing: error))")
            let again = await #expect(throws: ServiceError.self) { _ = try await client.call(BookOps.Create.self, .init(title: "Later")) }
            #expect(again?.code == .storageDamaged && again?.message.hasPrefix("book.create was not done: \(file) was") == true, "\(String(describing: again))")
        }
    }
}
