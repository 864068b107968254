import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
@testable import RecipeStore
import ReplicaSync
import Synchronization
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

    /// Copies every file under `copy` over the file of the same name under `folder`, in place where there is one (as
    /// `cp -a copy/. folder/` does: each file keeps its identity), and the rest beside them.
    static func overwriteFolder(_ folder: URL, from copy: URL) throws {
        let manager = FileManager.default
        for name in try manager.contentsOfDirectory(atPath: copy.path) {
            let source = copy.appendingPathComponent(name), target = folder.appendingPathComponent(name)
            var isFolder: ObjCBool = false
            _ = manager.fileExists(atPath: source.path, isDirectory: &isFolder)
            if isFolder.boolValue {
                try manager.createDirectory(at: target, withIntermediateDirectories: true)
                try overwriteFolder(target, from: source)
            } else if manager.fileExists(atPath: target.path) {
                try overwrite(target.path, with: try Data(contentsOf: source))
            } else {
                try manager.copyItem(at: source, to: target)
            }
        }
    }

    /// Puts every file of `copy` back over `folder`'s in place, as a file-system or machine snapshot rolled back would:
    /// the write mark agrees with the database and holds the file's time as it is now, so the open cannot tell.
    static func rollBack(_ folder: URL, to copy: URL) throws {
        try overwriteFolder(folder, from: copy)
        let database = folder.appendingPathComponent(RecipeVault.databaseFileName).path
        let mark = try #require(WriteMark.read(databasePath: database))
        let time = try #require(WriteMark.fileTime(database))
        try Data("\(mark.replica) \(mark.write) \(time)\n".utf8).write(to: URL(fileURLWithPath: WriteMark.path(database)))
    }

    /// Changes the status-change time of the file at `path`, and nothing else (a mode set and set back).
    static func touchStatus(_ path: String) throws {
        var info = stat()
        #expect(stat(path, &info) == 0)
        let before = WriteMark.fileTime(path)
        #expect(chmod(path, 0o644) == 0 && chmod(path, info.st_mode & 0o7777) == 0)
        #expect(WriteMark.fileTime(path) != before)
    }

    /// A scratch root (removed by the caller), the data folder `a` in it, and that folder's database path.
    static func scratch() -> (root: URL, folder: URL, database: String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rv-inplace-\(UUID().uuidString)")
        let folder = root.appendingPathComponent("a")
        return (root, folder, folder.appendingPathComponent(RecipeVault.databaseFileName).path)
    }

    /// The replica's incarnations, as its log lines say them (empty when it never took a new one).
    static func incarnationHistory(_ replica: LocalReplica) async throws -> String {
        try await replica.store.pool.read { db in try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'incarnations'") } ?? ""
    }

    static func recipeNames(_ replica: LocalReplica) async throws -> [String] {
        try await replica.store.listRecipes(.init(limit: 50)).recipes.map(\.name).sorted()
    }

    /// The notes of every recipe named "Soup…" on `replica` (the one shown and its conflicted copies), sorted.
    static func soupNotes(_ replica: LocalReplica) async throws -> [String] {
        var notes: [String] = []
        for summary in try await replica.store.listRecipes(.init(limit: 50)).recipes where summary.name.hasPrefix("Soup") {
            notes.append(try await replica.store.recipe(summary.id).notes ?? "")
        }
        return notes.sorted()
    }

    /// Stops `a`, copies its data folder aside to `root/older` (what a snapshot keeps; returned) and opens it again.
    static func copiedAside(_ a: inout LocalReplica, folder: URL, root: URL) throws -> URL {
        try a.store.close()
        let older = root.appendingPathComponent("older")
        try FileManager.default.copyItem(at: folder, to: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        return older
    }

    /// Replicas `a` (at `folder`) and `b` in step on "Before the copy"; `a`'s stopped folder is copied aside to
    /// `root/older`; then `a` makes "After the copy", syncs it to `b` and stops. Returns `a`'s replica id.
    static func advancedPastACopy(root: URL, folder: URL, b: LocalReplica) async throws -> String {
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Before the copy"))
        try await syncAll([a, b])
        _ = try Self.copiedAside(&a, folder: folder, root: root)
        #expect(a.store.incarnationNote == nil)
        let replica = try await a.store.syncInfo().replicaID
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "After the copy"))
        try await syncAll([a, b])
        try a.store.close()
        return replica
    }

    /// `a`, put back from the copy and reopened, writes "After the restore" before any sync (under its old id that
    /// write would reuse the number of the lost one, which `b` holds); after syncing, both hold every recipe, alike.
    static func writesThenConverges(_ a: LocalReplica, _ b: LocalReplica) async throws {
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "After the restore"))
        try await syncAll([a, b])
        for replica in [a, b] {
            #expect(try await recipeNames(replica) == ["After the copy", "After the restore", "Before the copy"])
        }
        try await expectSameContent(a, b)
        try a.store.close()
        try b.store.close()
    }

    @Test("a replica whose database is put back in place from an older copy, which writes before it syncs: it takes a new incarnation at open, and both replicas end with every recipe")
    func olderCopyInPlaceConverges() async throws {
        let (root, folder, database) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        let replica = try await Self.advancedPastACopy(root: root, folder: folder, b: b)
        let written = try #require(WriteMark.read(databasePath: database))
        #expect(written.replica == replica && written.write > 0)

        try Self.overwrite(database, with: try Data(contentsOf: root.appendingPathComponent("older").appendingPathComponent(RecipeVault.databaseFileName)))
        let a = LocalReplica(store: try RecipeStore(folder: folder))
        let note = try #require(a.store.incarnationNote)
        #expect(note.contains("put back from an older copy") && note.contains("this folder's was \(written.write)"), "\(note)")
        #expect(try await a.store.syncInfo().replicaID != replica)
        #expect(try #require(WriteMark.read(databasePath: database)).replica != replica, "the mark follows the new incarnation")
        try await Self.writesThenConverges(a, b)
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

    @Test("a whole data folder copied aside while stopped and later copied back over it in place (every file keeps its identity, the write mark comes back with the database it agrees with): the file's changed time tells the open, which takes a new incarnation, and after a write and a sync both replicas hold every recipe")
    func wholeFolderInPlaceConverges() async throws {
        let (root, folder, database) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        let replica = try await Self.advancedPastACopy(root: root, folder: folder, b: b)
        let older = root.appendingPathComponent("older")
        let identity = SyncState.fileIdentity(database)
        try Self.overwriteFolder(folder, from: older)
        #expect(SyncState.fileIdentity(database) == identity)
        #expect(WriteMark.read(databasePath: database) == WriteMark.read(databasePath: older.appendingPathComponent(RecipeVault.databaseFileName).path))
        let a = LocalReplica(store: try RecipeStore(folder: folder))
        let note = try #require(a.store.incarnationNote)
        #expect(note.contains("changed while the storage was stopped"), "\(note)")
        #expect(try await a.store.syncInfo().replicaID != replica)
        try await Self.writesThenConverges(a, b)
    }

    @Test("the storage's own changes to its file (checkpoints beside many writes, the close) never read as a change behind its back; a mark left in the middle of a copy into the file tells nothing; a file changed while the storage was stopped takes one new incarnation")
    func fileTimeFollowsTheStorage() async throws {
        let (root, folder, database) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        var store = try RecipeStore(folder: folder)
        let replica = try await store.syncInfo().replicaID
        // Enough writes to take the log past a checkpoint's threshold several times.
        let writer = store
        for round in 0..<4 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<25 {
                    group.addTask {
                        _ = try await writer.createRecipe(id: UUID(), RecipeDraft(name: "Stew \(round)-\(index)",
                            ingredients: (1...12).map { .init(text: "\($0) cups of stock") }, instructions: (1...8).map { .init(text: "Stir \($0).") }))
                    }
                }
                try await group.waitForAll()
            }
        }
        try store.close()
        let mark = try #require(WriteMark.read(databasePath: database))
        #expect(mark.fileTime != nil && mark.fileTime == WriteMark.fileTime(database))
        store = try RecipeStore(folder: folder)
        #expect(store.incarnationNote == nil)
        #expect(try await store.syncInfo().replicaID == replica)
        try store.close()

        // A kill -9 in the middle of a checkpoint: the mark says `-`, and the file's time is one it never held.
        var copying = try #require(WriteMark.read(databasePath: database))
        copying.fileTime = nil
        try Data("\(copying.replica) \(copying.write) -\n".utf8).write(to: URL(fileURLWithPath: WriteMark.path(database)))
        try Self.touchStatus(database)
        store = try RecipeStore(folder: folder)
        #expect(store.incarnationNote == nil)
        #expect(try await store.syncInfo().replicaID == replica)
        try store.close()

        // Changed while stopped, by anything: one new incarnation, then none.
        try Self.touchStatus(database)
        store = try RecipeStore(folder: folder)
        #expect(store.incarnationNote?.contains("changed while the storage was stopped") == true, "\(store.incarnationNote ?? "")")
        let second = try await store.syncInfo().replicaID
        #expect(second != replica)
        try store.close()
        store = try RecipeStore(folder: folder)
        #expect(store.incarnationNote == nil)
        #expect(try await store.syncInfo().replicaID == second)
        try store.close()
    }

    @Test("while writes run and checkpoints copy them into the file, the mark says `-` or holds the file's time: a kill -9 at any moment leaves a folder that reads as the storage's own")
    func markNeverBehindTheFile() async throws {
        let (root, folder, database) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = try RecipeStore(folder: folder)
        let timeAtStart = WriteMark.fileTime(database)
        let finished = Finished()
        let writes = Task {
            defer { finished.flag.withLock { $0 = true } }
            for round in 0..<8 {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<25 {
                        group.addTask {
                            _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Stew \(round)-\(index)",
                                ingredients: (1...12).map { .init(text: "\($0) cups of stock") }, instructions: (1...8).map { .init(text: "Stir \($0).") }))
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        // Samples where the file did not change while the mark was read: the mark must not hold another time.
        var behind: [String] = [], times: Set<Int64> = [], copying = 0, samples = 0
        let deadline = ContinuousClock.now + .seconds(120)
        while !finished.flag.withLock({ $0 }) && ContinuousClock.now < deadline {
            let before = WriteMark.fileTime(database)
            let mark = WriteMark.read(databasePath: database)
            let after = WriteMark.fileTime(database)
            if let before, before == after, let mark {
                samples += 1
                times.insert(before)
                if let noted = mark.fileTime { if noted != before { behind.append("mark \(noted), file \(before)") } } else { copying += 1 }
            }
            try await Task.sleep(for: .microseconds(50))
        }
        try await writes.value
        let timeAtEnd = WriteMark.fileTime(database)
        try store.close()
        #expect(behind.isEmpty, "\(behind.count) of \(samples) samples: \(behind.prefix(3))")
        // Checkpoints changed the file while it was watched. (How many times the samples saw depends on how the two
        // cores were shared: alone, several; beside the whole suite, sometimes one.)
        #expect(samples > 0 && timeAtEnd != timeAtStart, "\(times.count) times, \(samples) samples, \(copying) mid-copy")
    }

    final class Finished: Sendable {
        let flag = Mutex(false)
    }

    /// Two replicas in step; `a` makes "After the copy" after its folder was copied aside, syncs it to `b`, and is rolled
    /// back to the copy as a snapshot would (`rollBack`): its open cannot tell. Returns `a` reopened and its old id.
    static func rolledBackReplica(root: URL, folder: URL, b: LocalReplica) async throws -> (a: LocalReplica, replica: String) {
        let replica = try await advancedPastACopy(root: root, folder: folder, b: b)
        try Self.rollBack(folder, to: root.appendingPathComponent("older"))
        let a = LocalReplica(store: try RecipeStore(folder: folder))
        #expect(a.store.incarnationNote == nil, "a snapshot rolled back is not told at start")
        #expect(try await a.store.syncInfo().replicaID == replica)
        return (a, replica)
    }

    @Test("a replica rolled back with its whole folder as a snapshot would (its start cannot tell), which syncs before it writes: its peer's newest write of it is one it never made, it takes a new incarnation, and what it lost comes back")
    func rolledBackSyncsFirst() async throws {
        let (root, folder, _) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        let (a, replica) = try await Self.rolledBackReplica(root: root, folder: folder, b: b)
        // Pulled from b first: a is the target, and b's newest write of it comes with the page.
        _ = try await SyncEngine.pull(from: b, to: a)
        #expect(try await a.store.syncInfo().replicaID != replica, "rolled back, told by the page")
        try await syncAll([a, b])
        let history = try await Self.incarnationHistory(a)
        #expect(history.contains("a peer holds this replica's write"), "\(history)")
        try await Self.writesThenConverges(a, b)
    }

    @Test("a replica rolled back with its whole folder as a snapshot would, which writes more than it lost before it syncs and sends first: its own write of its peer's newest number has another stamp, it takes a new incarnation before sending, and both replicas end with every recipe",
          arguments: [false, true])
    func rolledBackWritesFirst(sendsFirst: Bool) async throws {
        let (root, folder, _) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        let (a, replica) = try await Self.rolledBackReplica(root: root, folder: folder, b: b)
        for index in 1...3 { _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "After the restore \(index)")) }
        if sendsFirst {
            // Pulled by b first: a is the source, and b's newest write of it goes with the read of a's feed.
            _ = try await SyncEngine.pull(from: a, to: b)
            #expect(try await a.store.syncInfo().replicaID != replica, "rolled back, told by the read of its feed")
        }
        try await syncAll([a, b])
        #expect(try await a.store.syncInfo().replicaID != replica)
        let history = try await Self.incarnationHistory(a)
        #expect(history.contains("write numbers were used twice"), "\(history)")
        let names = ["After the copy", "After the restore 1", "After the restore 2", "After the restore 3", "Before the copy"]
        for replica in [a, b] { #expect(try await Self.recipeNames(replica) == names) }
        try await expectSameContent(a, b)
        try a.store.close()
        try b.store.close()
    }

    @Test("a replica rolled back with its whole folder as a snapshot would, which edits the field its lost write edited before it syncs: its edit is stamped again under its new incarnation, and both edits survive on both replicas (one shown, the other as a conflicted copy)",
          arguments: [false, true])
    func rolledBackEditMeetsTheLostEdit(sendsFirst: Bool) async throws {
        let (root, folder, database) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        let soup = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup", notes: "start")).0
        let bread = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Bread", notes: "start")).0
        try await syncAll([a, b])
        let older = try Self.copiedAside(&a, folder: folder, root: root)
        let replica = try await a.store.syncInfo().replicaID
        // The write the roll back loses, after b took it.
        _ = try await a.store.updateRecipe(id: soup.id, expectedVersion: try await a.store.recipe(soup.id).version,
                                           RecipeDraft(name: "Soup", notes: "lost with the roll back"))
        try await syncAll([a, b])
        try a.store.close()
        try Self.rollBack(folder, to: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        #expect(a.store.incarnationNote == nil, "a snapshot rolled back is not told at start")
        // The same write number again, for the same field; and an edit of a record the lost write never touched.
        _ = try await a.store.updateRecipe(id: soup.id, expectedVersion: try await a.store.recipe(soup.id).version,
                                           RecipeDraft(name: "Soup", notes: "after the roll back"))
        _ = try await a.store.updateRecipe(id: bread.id, expectedVersion: try await a.store.recipe(bread.id).version,
                                           RecipeDraft(name: "Bread", notes: "after the roll back"))
        if sendsFirst {
            _ = try await SyncEngine.pull(from: a, to: b)
        }
        try await syncAll([a, b])
        #expect(try await a.store.syncInfo().replicaID != replica)
        let history = try await Self.incarnationHistory(a)
        #expect(history.contains("stamped again under its new id"), "\(history)")
        for replica in [a, b] {
            let notes = try await Self.soupNotes(replica)
            #expect(notes == ["after the roll back", "lost with the roll back"], "\(replica.name): \(notes)")
            #expect(try await replica.store.recipe(bread.id).notes == "after the roll back")
        }
        try await expectSameContent(a, b)
        #expect(WriteMark.read(databasePath: database)?.replica != replica)
        try a.store.close()
        try b.store.close()
    }

    @Test("a replica rolled back as a snapshot would redoes the lost edit's field under the same write number, and a third replica takes the new edit before anyone tells it, then passes it on first: both edits survive on every replica (one shown, the other as a conflicted copy), in every order of the syncs after",
          arguments: [0, 1, 2])
    func rolledBackEditReachesAThirdReplicaFirst(order: Int) async throws {
        let (root, folder, _) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        let c = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("c")))
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        let soup = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup", notes: "start")).0
        try await syncAll([a, b, c])
        let older = try Self.copiedAside(&a, folder: folder, root: root)
        // The write the roll back loses, after b took it.
        _ = try await a.store.updateRecipe(id: soup.id, expectedVersion: try await a.store.recipe(soup.id).version,
                                           RecipeDraft(name: "Soup", notes: "lost with the roll back"))
        _ = try await SyncEngine.pull(from: a, to: b)
        try a.store.close()
        try Self.rollBack(folder, to: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        // The same field under the same write number again, and c takes it before any replica holding the lost one
        // tells a (nothing can tell c: it never held the lost write).
        _ = try await a.store.updateRecipe(id: soup.id, expectedVersion: try await a.store.recipe(soup.id).version,
                                           RecipeDraft(name: "Soup", notes: "after the roll back"))
        _ = try await SyncEngine.pull(from: a, to: c)
        switch order {
        case 0: try await syncAll([a, b, c]) // a hears of its roll back from b first
        case 1: _ = try await SyncEngine.pull(from: b, to: c) // c meets the lost edit first
        default: _ = try await SyncEngine.pull(from: c, to: b) // b meets the new edit first, before a is told
        }
        try await syncAll([a, b, c])
        try await syncAll([a, b, c])
        for replica in [a, b, c] {
            let notes = try await Self.soupNotes(replica)
            #expect(notes == ["after the roll back", "lost with the roll back"], "\(replica.name): \(notes)")
        }
        try await expectSameContent(a, b)
        try await expectSameContent(b, c)
        for replica in [a, b, c] { try replica.store.close() }
    }

    @Test("a replica rolled back as a snapshot would, whose lost write its peer holds only because its machine's clock ran ahead then (set right since), its cursor saved before that write: the held write tells it, its old id ends, and the peer re-dates and applies the write; nothing stays held")
    func rolledBackWriteHeldForItsStamp() async throws {
        let (root, folder, _) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        let soup = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup", notes: "start")).0
        try await syncAll([a, b])
        let older = try Self.copiedAside(&a, folder: folder, root: root)
        let replica = try await a.store.syncInfo().replicaID
        // The machine's clock two hours ahead: b holds the edit for its stamp.
        try await a.store.setClockOffset(milliseconds: 2 * 3_600_000)
        _ = try await a.store.updateRecipe(id: soup.id, expectedVersion: try await a.store.recipe(soup.id).version,
                                           RecipeDraft(name: "Soup", notes: "written while the clock ran ahead"))
        // Applied by a worker killed before it saved its cursor: b's cursor (and what it noted its feed held there)
        // stays before the write, so only the held write itself can tell a.
        let cursor = try await b.cursor(peer: replica).seq
        let page = try await a.changes(since: cursor, exclude: try await b.info().replicaID, limit: 10)
        _ = try await b.apply(from: replica, records: page.records, cursor: nil)
        #expect(try await b.store.heldRecords().count == 1)
        try a.store.close()
        try Self.rollBack(folder, to: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Bread"))
        try await syncAll([a, b])
        try await syncAll([a, b])
        #expect(try await a.store.syncInfo().replicaID != replica, "the held write told it")
        for replica in [a, b] {
            #expect(try await replica.store.heldRecords().isEmpty, "\(replica.name)")
            #expect(try await replica.store.recipe(soup.id).notes == "written while the clock ran ahead", "\(replica.name)")
        }
        try await expectSameContent(a, b)
        try a.store.close()
        try b.store.close()
    }

    @Test("the merge: two versions that have seen the same writes but hold different values under different stamps of one writer that counts in them (one write number given to two writes) are concurrent, the other value a loss; a re-dating of the same value, or a conflicted copy's fields made twice, are not")
    func oneNumberTwoWrites() {
        let lost = SyncField(value: .string("lost"), clock: SyncClock(vv: ["a": 3, "b": 1], stamp: "0001763700000100.000000.a"))
        let again = SyncField(value: .string("again"), clock: SyncClock(vv: ["a": 3, "b": 1], stamp: "0001763700900000.000000.a"))
        for (ours, theirs) in [(lost, again), (again, lost)] {
            let (merged, losses) = SyncMerge.merge(["notes": ours], ["notes": theirs])
            #expect(merged["notes"] == again, "the later stamp shown")
            #expect(losses.map(\.value) == [.string("lost")], "the other kept as a loss (a conflicted copy)")
        }
        var redated = lost
        redated.clock = SyncClock(vv: lost.clock.vv.merging([SyncClock.restartEntry: 1]) { $1 }, stamp: "0001763700000200.000000.a")
        let (merged, losses) = SyncMerge.merge(["notes": lost], ["notes": redated])
        #expect(merged["notes"] == redated && losses.isEmpty)
        let (ranked, none) = SyncMerge.merge(["notes": lost], ["notes": lost])
        #expect(ranked["notes"] == lost && none.isEmpty)
        // A conflicted copy's fields, made by two replicas from records that had moved on differently: no write of
        // anyone's (one stamp, no count of its writer), settled by rank without another copy.
        let copyHere = SyncField(value: .string("one way"), clock: SyncClock(vv: [:], stamp: "0001763700000100.000000.a"))
        let copyThere = SyncField(value: .string("another way"), clock: SyncClock(vv: [:], stamp: "0001763700000100.000000.a"))
        let (copy, copyLosses) = SyncMerge.merge(["notes": copyHere], ["notes": copyThere])
        #expect(copy["notes"] == copyHere && copyLosses.isEmpty)
    }

    @Test("a replica rolled back with its whole folder as a snapshot would, that had merged its peer's concurrent edit since (a book keeps the losing title on itself, a recipe's losing notes go to a conflicted copy) and lost no write of its own the peer holds, so nothing tells it: the peer holds the merge as the replica's own echo, and sends it all the same (it counts a write of the peer's the replica says it has not seen); both replicas end with both edits and the same conflicts (seed 3572172329969080711)",
          arguments: [false, true])
    func rolledBackMergeComesBack(recipe: Bool) async throws {
        try await rollBackAMerge(recipe: recipe, ofAThird: false)
    }

    /// Replica `a` makes an edit and is copied aside; a concurrent edit (its peer `b`'s, or with `ofAThird` a third
    /// replica `c`'s, whose stamp wins) reaches it, and `a` passes the merge (the loss kept) on to `b`, whose record of it
    /// is then `a`'s echo; `a` is rolled back and syncs with `b` only. Nothing tells it (it lost no write of its own),
    /// and it still ends with both edits and the one conflict, as `b` does (then `c` too).
    func rollBackAMerge(recipe: Bool, ofAThird: Bool) async throws {
        let (root, folder, _) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        let editor = ofAThird ? LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("c"))) : b
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        let book = try await a.store.createBook(id: UUID(), title: "Soups", author: nil)
        let soup = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup", notes: "start")).0
        try await syncAll(ofAThird ? [a, b, editor] : [a, b])
        func edit(_ replica: LocalReplica, _ text: String) async throws {
            if recipe {
                _ = try await replica.store.updateRecipe(id: soup.id, expectedVersion: try await replica.store.recipe(soup.id).version,
                                                         RecipeDraft(name: "Soup", notes: text))
            } else {
                _ = try await replica.store.updateBook(id: book.id, title: text, author: nil)
            }
        }
        // a's edit, in its snapshot (b has it too when the concurrent edit is c's); the concurrent one after it.
        try await edit(a, "from a")
        if ofAThird { try await syncAll([a, b]) }
        let replica = try await a.store.syncInfo().replicaID
        let older = try Self.copiedAside(&a, folder: folder, root: root)
        let edited = "from \(editor.name)"
        try await edit(editor, edited)
        _ = try await SyncEngine.pull(from: editor, to: a)
        _ = try await SyncEngine.pull(from: a, to: b)
        #expect(try await b.store.conflicts().count == 1)
        try a.store.close()
        try Self.rollBack(folder, to: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        try await syncAll([a, b])
        try await syncAll([a, b])
        #expect(try await a.store.syncInfo().replicaID == replica, "nothing told it: it lost no write of its own")
        for replica in [a, b] {
            #expect(try await replica.store.conflicts().count == 1, "\(replica.name)")
            if recipe {
                #expect(try await Self.soupNotes(replica) == ["from a", edited], "\(replica.name)")
            } else {
                #expect(try await replica.store.book(book.id).book.title == edited, "\(replica.name)")
            }
        }
        try await expectSameContent(a, b)
        if ofAThird {
            try await syncAll([a, b, editor])
            try await expectSameContent(a, editor)
            try editor.store.close()
        }
        try a.store.close()
        try b.store.close()
    }

    @Test("a replica rolled back with its whole folder as a snapshot would, that had merged a third replica's concurrent edit since and passed the merge on to its peer (no write of its own lost: nothing tells it), and then syncs with that peer only: the peer holds the merge as the replica's echo holding a write of the third replica's the replica says it has not seen (its whole `seen`, not only the peer's), and sends it; all three end alike",
          arguments: [false, true])
    func rolledBackMergeOfAThirdReplicaComesBack(recipe: Bool) async throws {
        try await rollBackAMerge(recipe: recipe, ofAThird: true)
    }

    @Test("a replica whose stamps ran ahead of its own clock after a peer's it took after its snapshot, rolled back with its whole folder as a snapshot would: every write it made since is stamped again when its peer tells it, also those under numbers below the lost write the peer names (the writes since began a start of their own), so an edit since of a recipe a lost write deleted brings it back, and a lost edit and a new one of the same field are both kept (seed 10309206708669977794: stamps and numbers put the roll back point above the edit since, and the lost delete's version counted it as seen)")
    func rolledBackAfterFollowingAPeersClock() async throws {
        let (root, folder, _) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        try await b.store.setClockOffset(milliseconds: 600_000)
        let soup = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup", notes: "start")).0
        let copy = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Copy", notes: "start")).0
        try await syncAll([a, b])
        let older = try Self.copiedAside(&a, folder: folder, root: root)
        let kept = try await a.store.pool.read { db in try SyncState.load(db).write }
        // After the snapshot: a takes b's edit, stamped ten minutes ahead, and its own stamps follow it.
        _ = try await b.store.createRecipe(id: UUID(), RecipeDraft(name: "Bread"))
        _ = try await SyncEngine.pull(from: b, to: a)
        func edit(_ recipe: Recipe, _ notes: String) async throws {
            _ = try await a.store.updateRecipe(id: recipe.id, expectedVersion: try await a.store.recipe(recipe.id).version,
                                               RecipeDraft(name: recipe.name, notes: notes))
        }
        // The writes the roll back loses, after b took them: an edit of Soup, then Copy deleted.
        try await edit(soup, "lost")
        #expect(try await a.store.deleteRecipe(id: copy.id))
        _ = try await SyncEngine.pull(from: a, to: b)
        try a.store.close()
        try Self.rollBack(folder, to: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        // Its clock as the snapshot left it: its writes since are stamped below the lost ones, under their numbers.
        try await edit(copy, "after")
        try await edit(soup, "after")
        try await syncAll([a, b])
        let history = try await Self.incarnationHistory(a)
        #expect(history.contains("its writes since its write \(kept) are stamped again"), "\(history)")
        for replica in [a, b] {
            #expect(try await replica.store.recipe(copy.id).notes == "after", "\(replica.name): an edit the delete had not seen")
            #expect(try await Self.soupNotes(replica) == ["after", "lost"], "\(replica.name)")
        }
        try await expectSameContent(a, b)
        try a.store.close()
        try b.store.close()
    }

    @Test("a replica whose clock runs behind its peer's (its stamps follow the peer's, ahead of its own clock), rolled back with its whole folder as a snapshot would: the write it makes again under a lost write's number carries another stamp (a stamp's counter steps at random), so the peer holding the lost one tells it, and the lost edit and the new one of the same field are both kept (seed 16013143301308792775: the same stamps again, the roll back told by the feed only, and the lost edit superseded)",
          arguments: [1, 3])
    func rolledBackBehindItsPeersClock(writesAgain: Int) async throws {
        let (root, folder, _) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        try await b.store.setClockOffset(milliseconds: 600_000)
        try await a.store.setClockOffset(milliseconds: -600_000)
        let soup = try await b.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup", notes: "start")).0
        try await syncAll([a, b])
        let replica = try await a.store.syncInfo().replicaID
        let older = try Self.copiedAside(&a, folder: folder, root: root)
        func edit(_ text: String) async throws {
            _ = try await a.store.updateRecipe(id: soup.id, expectedVersion: try await a.store.recipe(soup.id).version,
                                               RecipeDraft(name: "Soup", notes: text))
        }
        try await edit("lost")
        _ = try await SyncEngine.pull(from: a, to: b)
        try a.store.close()
        try Self.rollBack(folder, to: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        for n in 1...writesAgain { try await edit("after \(n)") }
        try await syncAll([a, b])
        #expect(try await a.store.syncInfo().replicaID != replica, "its peer holds a write of it it made otherwise")
        for replica in [a, b] {
            #expect(try await Self.soupNotes(replica) == ["after \(writesAgain)", "lost"], "\(replica.name)")
        }
        try await expectSameContent(a, b)
        try a.store.close()
        try b.store.close()
    }

    @Test("a replica rolled back with its whole folder as a snapshot would, that had loaded the samples since and passed them on (no write of anyone's: nothing tells it): the peer holds them as the replica's own echoes and sends them all the same, and both replicas end with the samples (seed 10979777721377659889, found with three-replica roll backs on)")
    func rolledBackSamplesComeBack() async throws {
        let (root, folder, _) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
        try await syncAll([a, b])
        let replica = try await a.store.syncInfo().replicaID
        let older = try Self.copiedAside(&a, folder: folder, root: root)
        _ = try await a.store.loadSamples()
        _ = try await SyncEngine.pull(from: a, to: b)
        let names = try await Self.recipeNames(b)
        #expect(names.count > 1)
        try a.store.close()
        try Self.rollBack(folder, to: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        #expect(try await Self.recipeNames(a) == ["Soup"])
        try await syncAll([a, b])
        #expect(try await a.store.syncInfo().replicaID == replica, "nothing told it")
        for replica in [a, b] { #expect(try await Self.recipeNames(replica) == names, "\(replica.name)") }
        try await expectSameContent(a, b)
        try a.store.close()
        try b.store.close()
    }

    @Test("a replica rolled back with its whole folder as a snapshot would, whose peer had read its feed past the roll back point (a change it had applied from that peer, no write of its own), places a new change at that position: the peer's next read tells it by what the position held, it takes a new incarnation, and the change arrives",
          arguments: [false, true])
    func rolledBackFeedPositionsGivenAgain(writesFirst: Bool) async throws {
        let (root, folder, _) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Before the copy"))
        try await syncAll([a, b])
        let older = try Self.copiedAside(&a, folder: folder, root: root)
        let replica = try await a.store.syncInfo().replicaID
        // b's change reaches a (a new feed position there, no write of a's), and b reads a's feed past it.
        _ = try await b.store.createRecipe(id: UUID(), RecipeDraft(name: "From b"))
        _ = try await SyncEngine.pull(from: b, to: a)
        _ = try await SyncEngine.pull(from: a, to: b)
        let read = try await b.cursor(peer: replica)
        let latest = try await a.info().latestSeq
        #expect(read.mark != nil && read.seq == latest)
        try a.store.close()
        try Self.rollBack(folder, to: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        #expect(a.store.incarnationNote == nil, "a snapshot rolled back is not told at start")
        // The position b read up to is given again, to a's own change.
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "After the roll back"))
        let given = try await a.info().latestSeq
        #expect(given == read.seq)
        if writesFirst { _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "After the roll back, again")) }
        _ = try await SyncEngine.pull(from: a, to: b)
        #expect(try await a.store.syncInfo().replicaID != replica, "rolled back, told by what b read at its cursor")
        try await syncAll([a, b])
        let history = try await Self.incarnationHistory(a)
        #expect(history.contains("feed positions were given twice"), "\(history)")
        let names = ["After the roll back"] + (writesFirst ? ["After the roll back, again"] : []) + ["Before the copy", "From b"]
        for replica in [a, b] { #expect(try await Self.recipeNames(replica) == names, "\(replica.name)") }
        try await expectSameContent(a, b)
        try a.store.close()
        try b.store.close()
    }

    @Test("a replica rolled back with its whole folder as a snapshot would, whose peer had read its feed up to a position between a record's place before a lost edit and its place after (passing the old place while it was empty): the peer's next read tells it by the newest write it named then, it takes a new incarnation (a write made since stamped again under it), and the record as it is now arrives (seed 13226495568987508509)",
          arguments: [false, true])
    func rolledBackRecordPutBackBehindTheCursor(writesFirst: Bool) async throws {
        let (root, folder, _) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let b = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("b")))
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Stew"))
        let older = try Self.copiedAside(&a, folder: folder, root: root)
        let replica = try await a.store.syncInfo().replicaID
        // The soup is edited: its record moves on past the stew's place, and leaves its own empty.
        let soup = try #require(try await a.store.listRecipes(.init(limit: 10)).recipes.first { $0.name == "Soup" })
        _ = try await a.store.updateRecipe(id: soup.id, expectedVersion: try await a.store.recipe(soup.id).version, RecipeDraft(name: "Soup, edited"))
        // b reads one record: the stew. Its cursor is past the soup's old place, before its new one.
        _ = try await SyncEngine.pull(from: a, to: b, pageSize: 1, maxPages: 1)
        #expect(try await Self.recipeNames(b) == ["Stew"])
        try a.store.close()
        try Self.rollBack(folder, to: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        // The edit is lost; the soup is back at its old place, behind b's cursor, where b found nothing.
        #expect(try await Self.recipeNames(a) == ["Soup", "Stew"])
        if writesFirst { _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "After the roll back")) }
        try await syncAll([a, b])
        #expect(try await a.store.syncInfo().replicaID != replica, "rolled back, told by the newest write b's cursor named")
        let history = try await Self.incarnationHistory(a)
        #expect(history.contains("a peer read this replica's feed when its newest write was"), "\(history)")
        // The write made since the roll back took the lost edit's number: stamped again under the new id, from the number
        // the mark named (a third replica that took the lost edit meets it as the concurrent write it was).
        #expect(history.contains("its writes since its write 2 are stamped again") == writesFirst, "\(history)")
        let names = ["Soup", "Stew"] + (writesFirst ? ["After the roll back"] : [])
        for replica in [a, b] { #expect(try await Self.recipeNames(replica) == names.sorted(), "\(replica.name)") }
        try await expectSameContent(a, b)
        try a.store.close()
        try b.store.close()
    }

    @Test("a replica rolled back with its whole folder past a change it applied from a peer (no write of its own lost): the record that change had moved on past a reader's cursor is back behind it, and the reader's next read from it alone tells the roll back by the newest position its mark names, and reads it again")
    func rolledBackPeerChangePutBackBehindTheCursor() async throws {
        let (root, folder, _) = Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let peer = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("peer")))
        let reader = LocalReplica(store: try RecipeStore(folder: root.appendingPathComponent("reader")))
        var a = LocalReplica(store: try RecipeStore(folder: folder))
        // The peer's soup reaches a; a's own stew comes after it in a's feed.
        let soup = try await peer.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup")).0
        _ = try await SyncEngine.pull(from: peer, to: a)
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Stew"))
        let older = try Self.copiedAside(&a, folder: folder, root: root)
        let replica = try await a.store.syncInfo().replicaID
        // The peer edits the soup and a applies the edit: the soup's record moves on past the stew's place in a's feed.
        _ = try await peer.store.updateRecipe(id: soup.id, expectedVersion: try await peer.store.recipe(soup.id).version, RecipeDraft(name: "Soup, edited"))
        _ = try await SyncEngine.pull(from: peer, to: a)
        // The reader reads one record of a's: the stew. Its cursor is past the soup's old place, before its new one.
        _ = try await SyncEngine.pull(from: a, to: reader, pageSize: 1, maxPages: 1)
        #expect(try await Self.recipeNames(reader) == ["Stew"])
        try a.store.close()
        try Self.rollBack(folder, to: older)
        a = LocalReplica(store: try RecipeStore(folder: folder))
        // The edit is lost at a, which lost no write of its own: the soup is back at its old place, behind the cursor.
        #expect(try await Self.recipeNames(a) == ["Soup", "Stew"])
        _ = try await SyncEngine.pull(from: a, to: reader)
        #expect(try await a.store.syncInfo().replicaID != replica, "rolled back, told by the newest position the reader's mark named")
        let history = try await Self.incarnationHistory(a)
        #expect(history.contains("a peer read this replica's feed when it reached position"), "\(history)")
        #expect(try await Self.recipeNames(reader) == ["Soup", "Stew"], "the reader read a's whole feed again")
        // And the three agree once synced, with the peer's edit.
        try await syncAll([a, peer, reader])
        for replica in [a, peer, reader] { #expect(try await Self.recipeNames(replica) == ["Soup, edited", "Stew"], "\(replica.name)") }
        try await expectSameContent(a, reader)
        try await expectSameContent(a, peer)
        for replica in [a, peer, reader] { try replica.store.close() }
    }

    @Test("feed marks: a page names the feed's newest position with its change and the newest write, the target keeps it with the cursor (kept when a page ends where the cursor is, or continues from behind it; gone when the cursor is set back); a feed that only moved on is no sign of a roll back, one that no longer reaches the position named or gave it another change is, as a mark of an earlier release still tells; a mark that is not one is refused saying what it takes")
    func feedMarksKeptAndChecked() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
            let bread = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Bread")).0
            let aID = try await a.info().replicaID
            let page = try await a.changes(since: 0, exclude: nil, limit: 1)
            #expect(page.more && page.records.count == 1)
            let mark = try #require(page.nextMark)
            let stored = try await a.store.pool.read { db in try FeedMark.at(page.next, in: db) }
            // The feed's newest position (the bread's, past the page's end) with its change, and a's newest write then.
            let head = try #require(FeedMark.parts(mark).head)
            let given = try await a.store.pool.read { db in try FeedMark.givenDigest(at: head.seq, in: db) }
            #expect(head.seq == page.next + 1 && head.given == given && FeedMark.parts(mark).write?.number == 2 && mark == stored, "\(mark)")
            #expect(mark.count <= FeedMark.maxLength)
            _ = try await b.apply(from: aID, records: page.records, cursor: page.next, to: nil, after: nil, seen: nil, cursorMark: mark)
            #expect(try await b.cursor(peer: aID).mark == mark)
            // A page that ends where the cursor is, with no mark, and one continuing from behind it: the mark stays.
            _ = try await b.apply(from: aID, records: [], cursor: page.next)
            _ = try await b.apply(from: aID, records: [], cursor: page.next - 1, to: nil, after: 0, seen: nil, cursorMark: "0")
            #expect(try await b.cursor(peer: aID).mark == mark)
            // The record at the newest position changes again and moves on, and more come: the feed only moved on.
            _ = try await a.store.updateRecipe(id: bread.id, expectedVersion: try await a.store.recipe(bread.id).version, RecipeDraft(name: "Bread, again"))
            _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Stew"))
            let later = try await a.changes(since: page.next, exclude: nil, limit: 10, seen: nil, sinceMark: mark, seenWrites: nil)
            #expect(later.records.map(\.fields["name"]) == [.string("Bread, again"), .string("Stew")])
            #expect(try await a.info().replicaID == aID, "no roll back: the feed only moved on")
            // A mark naming another change at a position the feed gave, or a position past its end, is a roll back: a new
            // incarnation, nothing read. So is a mark of an earlier release naming another record at the cursor.
            let other = FeedMark.hex16(head.given ^ 1)
            let ends = try await a.info().latestSeq
            let forged = ["h\(String(head.seq, radix: 16))g\(other)": "the change given to that position now is another",
                          "h\(String(ends + 1, radix: 16))g\(other)": "when it reached position \(ends + 1), and it reaches \(ends) now",
                          FeedMark.of(body: "another record"): "the change there now is another"]
            var id = aID
            for (bad, said) in forged {
                do {
                    _ = try await a.changes(since: later.next, exclude: nil, limit: 10, seen: nil, sinceMark: bad, seenWrites: nil)
                    Issue.record("\(bad) was taken")
                } catch let error as ServiceError {
                    #expect(error.code == .syncRestart && error.message.contains("took a new incarnation"), "\(error.message)")
                }
                let now = try await a.info().replicaID
                #expect(now != id)
                id = now
                #expect(try await Self.incarnationHistory(a).contains(said), "\(bad)")
            }
            // Set back to 0, the cursor keeps no mark.
            _ = try await b.apply(from: aID, records: [], cursor: 0)
            #expect(try await b.cursor(peer: aID).mark == nil)
            for bad in ["", "not a mark", String(repeating: "a", count: 65), "café"] {
                do {
                    _ = try await a.changes(since: 1, exclude: nil, limit: 10, seen: nil, sinceMark: bad, seenWrites: nil)
                    Issue.record("sinceMark \(bad) was taken")
                } catch let error as ServiceError {
                    #expect(error.code == .invalidArgument && error.message.contains("is not a feed mark (1 to 64 letters and digits"), "\(error.message)")
                }
                do {
                    _ = try await b.apply(from: aID, records: [], cursor: 1, to: nil, after: nil, seen: nil, cursorMark: bad)
                    Issue.record("cursorMark \(bad) was taken")
                } catch let error as ServiceError {
                    #expect(error.code == .invalidArgument && error.message.contains("cursorMark"), "\(error.message)")
                }
            }
        }
    }

    @Test("a cursor names the newest write of every replica among the records taken (`seenWrites`, the peer's own as `seen`), and `sync.changes` refuses a list that is not one saying what it takes: a write under 1, a stamp that is not one, one replica twice, more than 10,000")
    func seenWritesListedAndChecked() async throws {
        try await withReplicas(3) { replicas in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
            _ = try await b.store.createRecipe(id: UUID(), RecipeDraft(name: "Bread"))
            _ = try await b.store.createBook(id: UUID(), title: "Breads", author: nil)
            try await syncAll([a, b, c])
            let (aID, bID) = (try await a.info().replicaID, try await b.info().replicaID)
            let cursor = try await c.cursor(peer: aID)
            let writes = try #require(cursor.seenWrites)
            #expect(Set(writes.map { StampOrder.parts($0.stamp).map { String($0.replica) } }) == [aID, bID])
            #expect(writes.first { $0.stamp.hasSuffix(aID) } == cursor.seen)
            #expect(writes.first { $0.stamp.hasSuffix(bID) }?.write == 2)
            _ = try await a.changes(since: 0, exclude: try await c.info().replicaID, limit: 10, seen: cursor.seen, sinceMark: nil, seenWrites: writes)
            let stamp = writes[0].stamp
            let bad: [([SyncOps.SeenWrite], String)] = [
                ([.init(write: 0, stamp: stamp)], "seenWrites[0].write is 0; it must be 1 or more"),
                ([.init(write: 1, stamp: stamp), .init(write: 1, stamp: "soon")], "seenWrites[1].stamp \"soon\" is not a stamp"),
                ([.init(write: 1, stamp: stamp), .init(write: 2, stamp: stamp)], "seenWrites[1] names replica \(StampOrder.parts(stamp)?.replica ?? "?") again; it holds one write per replica"),
                (Array(repeating: .init(write: 1, stamp: stamp), count: 10_001), "it may hold at most 10000, one per replica"),
            ]
            for (list, message) in bad {
                do {
                    _ = try await a.changes(since: 0, exclude: nil, limit: 10, seen: nil, sinceMark: nil, seenWrites: list)
                    Issue.record("\(list.prefix(2)) was taken")
                } catch let error as ServiceError {
                    #expect(error.code == .invalidArgument && error.message.contains("seenWrites") && error.message.contains(message), "\(error.message)")
                }
            }
        }
    }
}
