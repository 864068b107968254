import Foundation
import RecipeModel
import RecipeProtocol
import RecipeStore
import Testing

/// A storage stopped by kill -9 leaves `Recipes.sqlite-wal` (and `-shm`) in its data folder. A backup's contents
/// copied over that folder (the way a Compose volume is restored) must not get that log replayed onto it: SQLite
/// would write the old database's last pages over the backup's and leave a damaged file with rows of both.
@Suite("Replica sync: a backup restored over the data folder of a storage killed with kill -9")
struct RestoreOverCrashTests {
    static let files = [RecipeVault.databaseFileName, RecipeVault.databaseFileName + "-wal", RecipeVault.databaseFileName + "-shm"]

    /// The data folder as kill -9 would leave it: the database, its write-ahead log and index as they are on
    /// disk while the store is open (every write SQLite made is already there), and the photos.
    func copyAsKilled(_ folder: URL, to target: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: target, withIntermediateDirectories: true)
        for name in Self.files where manager.fileExists(atPath: folder.appendingPathComponent(name).path) {
            try manager.copyItem(at: folder.appendingPathComponent(name), to: target.appendingPathComponent(name))
        }
        try manager.copyItem(at: folder.appendingPathComponent(RecipeVault.photoFolderName),
                             to: target.appendingPathComponent(RecipeVault.photoFolderName))
    }

    /// `cp -r backup/. folder/`: the backup's files written over the folder's, anything else left.
    func copyContents(of backup: URL, over folder: URL) throws {
        let manager = FileManager.default
        for name in try manager.contentsOfDirectory(atPath: backup.path) {
            let source = backup.appendingPathComponent(name), target = folder.appendingPathComponent(name)
            var isFolder: ObjCBool = false
            if manager.fileExists(atPath: source.path, isDirectory: &isFolder), isFolder.boolValue {
                try manager.createDirectory(at: target, withIntermediateDirectories: true)
                try copyContents(of: source, over: target)
            } else {
                try Data(contentsOf: source).write(to: target) // in place, as cp writes into an existing file
            }
        }
    }

    func names(_ store: RecipeStore) async throws -> Set<String> {
        Set(try await store.listRecipes(RecipeListQuery(limit: RecipeListQuery.maxLimit)).recipes.map(\.name))
    }

    @Test("the killed storage's log is set aside, the backup opens whole, and sync brings back the rest")
    func backupOverKilledFolder() async throws {
        let manager = FileManager.default
        let root = manager.temporaryDirectory.appendingPathComponent("rv-restore-crash-\(UUID().uuidString)")
        defer { try? manager.removeItem(at: root) }
        let folderA = root.appendingPathComponent("a"), backup = root.appendingPathComponent("backup")
        let killed = root.appendingPathComponent("killed")
        let a = LocalReplica(store: try RecipeStore(folder: folderA))
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        var before: Set<String> = []
        for index in 0..<20 {
            let name = "Before the backup \(index)"
            var draft = RecipeDraft(name: name)
            draft.ingredients = (0..<6).map { RecipeDraft.Line(text: "\($0 + 1) cups flour \(index)") }
            draft.keywords = ["k\(index)"]
            _ = try await a.store.createRecipe(id: UUID.timeOrdered(), draft)
            before.insert(name)
        }
        _ = try await a.store.backup(to: backup.path)
        // Writes after the backup, touching the pages the backup holds too (edits, deletes, new rows).
        var all = before
        for index in 0..<40 {
            var draft = RecipeDraft(name: "After the backup \(index)")
            draft.ingredients = (0..<8).map { RecipeDraft.Line(text: "\($0 + 2) eggs \(index)") }
            _ = try await a.store.createRecipe(id: UUID.timeOrdered(), draft)
            all.insert(draft.name)
        }
        for recipe in try await a.store.listRecipes(RecipeListQuery(limit: 5)).recipes {
            _ = try await a.store.deleteRecipe(id: recipe.id)
            all.remove(recipe.name)
        }
        try await syncAll([a, b])
        try copyAsKilled(folderA, to: killed)
        #expect(manager.fileExists(atPath: killed.appendingPathComponent(RecipeVault.databaseFileName + "-wal").path))

        try copyContents(of: backup, over: killed)
        let restored = LocalReplica(store: try RecipeStore(folder: killed))
        #expect(try restored.store.integrityCheck() == "ok")
        #expect(restored.store.setAsideLogNote?.contains("restored backup") == true)
        #expect(restored.store.incarnationNote?.contains("backup") == true)
        #expect(manager.fileExists(atPath: killed.appendingPathComponent(RecipeVault.databaseFileName + "-wal.before-restore").path))
        #expect(try await names(restored.store) == before)

        // Writes on the restored replica, then kill -9 again: this log is its own and is replayed, not set aside.
        _ = try await restored.store.createRecipe(id: UUID.timeOrdered(), RecipeDraft(name: "After the restore"))
        all.insert("After the restore")
        let killedAgain = root.appendingPathComponent("killed-again")
        try copyAsKilled(killed, to: killedAgain)
        let reopened = LocalReplica(store: try RecipeStore(folder: killedAgain))
        #expect(reopened.store.setAsideLogNote == nil)
        #expect(reopened.store.incarnationNote != nil) // a copied folder, another incarnation
        #expect(try await names(reopened.store).contains("After the restore"))

        try await syncAll([restored, b])
        #expect(try await names(restored.store) == all)
        try await expectConverged([restored, b])
        for store in [a.store, b.store, restored.store, reopened.store] { try store.close() }
    }

    @Test("a log beside a database that is not a backup is the database's own and is replayed")
    func ownLogReplayed() async throws {
        let manager = FileManager.default
        let root = manager.temporaryDirectory.appendingPathComponent("rv-own-log-\(UUID().uuidString)")
        defer { try? manager.removeItem(at: root) }
        let folder = root.appendingPathComponent("a"), killed = root.appendingPathComponent("killed")
        let store = try RecipeStore(folder: folder)
        _ = try await store.createRecipe(id: UUID.timeOrdered(), RecipeDraft(name: "Only in the log"))
        try copyAsKilled(folder, to: killed)
        let reopened = try RecipeStore(folder: killed)
        #expect(reopened.setAsideLogNote == nil)
        #expect(try await names(reopened).contains("Only in the log"))
        try store.close()
        try reopened.close()
    }
}
