import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
@testable import RecipeStore
import ReplicaSync
import Testing

/// An older copy of the database put back over the file in place keeps the file's identity: the write mark beside it
/// (`WriteMark`) tells the open, which takes a new incarnation before anything is written.
@Suite("Replica sync: an older database put back in place")
struct InPlaceRestoreTests {
    /// Writes `bytes` over the file at `path` in place: the same file (device and inode), as `cp` onto it does.
    static func overwrite(_ path: String, with bytes: Data) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    /// A scratch root (removed by the caller), the data folder `a` in it, and that folder's database path.
    static func scratch() -> (root: URL, folder: URL, database: String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rv-inplace-\(UUID().uuidString)")
        let folder = root.appendingPathComponent("a")
        return (root, folder, folder.appendingPathComponent(RecipeVault.databaseFileName).path)
    }

    static func recipeNames(_ replica: LocalReplica) async throws -> [String] {
        try await replica.store.listRecipes(.init(limit: 50)).recipes.map(\.name).sorted()
    }

    @Test("a replica whose database is put back in place from an older copy, which writes before it syncs: it takes a new incarnation at open, and both replicas end with every recipe")
    func olderCopyInPlaceConverges() async throws {
        let (root, folder, database) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Before the copy"))
        try await syncAll([a, b])
        try a.store.close()
        let older = try Data(contentsOf: URL(fileURLWithPath: database))
        let replica = try #require(WriteMark.read(databasePath: database)).replica

        a = LocalReplica(store: try RecipeStore(folder: folder))
        #expect(a.store.incarnationNote == nil)
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "After the copy"))
        try await syncAll([a, b])
        let written = try #require(WriteMark.read(databasePath: database))
        #expect(written.replica == replica && written.write > 0)
        try a.store.close()

        try Self.overwrite(database, with: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        let note = try #require(a.store.incarnationNote)
        #expect(note.contains("put back from an older copy") && note.contains("this folder's was \(written.write)"), "\(note)")
        #expect(try await a.store.syncInfo().replicaID != replica)
        #expect(try #require(WriteMark.read(databasePath: database)).replica != replica, "the mark follows the new incarnation")
        // It writes before any sync: under the old id that write would reuse the number of the lost one, which b holds.
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "After the restore"))
        try await syncAll([a, b])
        for replica in [a, b] {
            #expect(try await Self.recipeNames(replica) == ["After the copy", "After the restore", "Before the copy"])
        }
        try await expectSameContent(a, b)
        try a.store.close()
        try b.store.close()
    }

    @Test("the mark follows every committed write and never a refused one; a store reopened on its own database takes no new incarnation")
    func markFollowsCommits() async throws {
        let (root, folder, database) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        var store = try RecipeStore(folder: folder)
        func written() async throws -> Int64 {
            try await store.pool.read { db in try SyncState.load(db).write }
        }
        let (recipe, _) = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
        #expect(WriteMark.read(databasePath: database)?.write == (try await written()))
        await #expect(throws: ServiceError.self) {
            _ = try await store.updateRecipe(id: recipe.id, expectedVersion: 999, RecipeDraft(name: "Refused"))
        }
        #expect(WriteMark.read(databasePath: database)?.write == (try await written()))
        // Writes at once, gathered into one commit.
        let writer = store
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask { _ = try await writer.createRecipe(id: UUID(), RecipeDraft(name: "Stew \(index)")) }
            }
            try await group.waitForAll()
        }
        #expect(WriteMark.read(databasePath: database)?.write == (try await written()))
        try store.close()
        // Closed, the whole database is in its file: a copy of that file alone is all of it.
        #expect(!FileManager.default.fileExists(atPath: database + "-wal"))
        store = try RecipeStore(folder: folder)
        #expect(store.incarnationNote == nil)
        #expect(try await store.recipeCount() == 21)
        // A mark that does not read as one, or is missing, tells nothing; the open writes it again.
        try Data("not a mark".utf8).write(to: URL(fileURLWithPath: WriteMark.path(database)))
        try store.close()
        store = try RecipeStore(folder: folder)
        #expect(store.incarnationNote == nil)
        #expect(WriteMark.read(databasePath: database)?.write == (try await written()))
        try store.close()
    }

    @Test("the same older copy put back again after the new incarnation it made wrote: the mark names an incarnation the copy never knew, and it takes another; a fresh database beside an old mark takes none")
    func olderCopyPutBackTwice() async throws {
        let (root, folder, database) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        var store = try RecipeStore(folder: folder)
        _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: "First"))
        try store.close()
        let older = try Data(contentsOf: URL(fileURLWithPath: database))
        let first = try #require(WriteMark.read(databasePath: database)).replica
        store = try RecipeStore(folder: folder)
        _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Second"))
        try store.close()
        try Self.overwrite(database, with: older)
        store = try RecipeStore(folder: folder)
        #expect(store.incarnationNote?.contains("put back from an older copy") == true, "\(store.incarnationNote ?? "")")
        let second = try await store.syncInfo().replicaID
        _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Third"))
        try store.close()
        try Self.overwrite(database, with: older)
        store = try RecipeStore(folder: folder)
        let note = try #require(store.incarnationNote)
        #expect(note.contains("not the one last written in this folder (that was replica \(second))"), "\(note)")
        #expect(Set([first, second]).contains(try await store.syncInfo().replicaID) == false)
        try store.close()
        // The database removed to start over, its mark left behind: a new one has nothing a peer could hold.
        try FileManager.default.removeItem(atPath: database)
        store = try RecipeStore(folder: folder)
        #expect(store.incarnationNote == nil)
        try store.close()
    }
}
