import Foundation
import GRDB
import RecipeProtocol
@testable import RecipeStore
import Synchronization
import TestThreads
import Testing

/// A backup and a snapshot copy the database on one pool reader. Waiting for that reader must not hold up the
/// thread the request runs on: a reader is handed back when the read that took it resumes, which may be a job on
/// that very thread, so a copy waiting there could wait for good.
@Suite("Database copies and the request's thread")
struct DatabaseCopyTests {
    @Test("a backup or a snapshot waiting for a reader leaves the thread that asked for it free", arguments: ["backup", "snapshot"])
    func copyWaitsOffTheRequestThread(_ kind: String) async throws {
        try await withStore { store in
            let readers = store.pool.configuration.maximumReaderCount
            let state = HeldReaders(count: readers)
            // Every reader is taken and kept until the test lets go (or, bounded, 15 s have passed).
            let holders = (0..<readers).map { _ in
                Task.detached {
                    try await store.pool.read { _ in state.holdOne() }
                }
            }
            for _ in 0..<1_000 where state.inside < readers { try await Task.sleep(for: .milliseconds(10)) }
            #expect(state.inside == readers, "every reader was taken")
            let fallback = Thread {
                Thread.sleep(forTimeInterval: 15)
                state.release()
            }
            fallback.start()

            let target = FileManager.default.temporaryDirectory.appendingPathComponent("rv-copy-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: target) }
            // The copy starts on the request's thread; then that thread is asked to run something else.
            let resumedWhileHeld = try await onOwnExecutor(named: "request thread") { () async throws -> Bool in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        if kind == "backup" {
                            _ = try await store.backup(to: target.path)
                        } else {
                            let snapshot = try await store.makeSnapshot()
                            _ = store.removeSnapshot(snapshot.snapshot)
                        }
                    }
                    try await Task.sleep(for: .milliseconds(50))
                    let resumed = !state.released
                    state.release()
                    try await group.waitForAll()
                    return resumed
                }
            }
            #expect(resumedWhileHeld, "the request's thread ran other work while the \(kind) waited for a reader")
            for holder in holders { try await holder.value }
        }
    }
}

/// Pool readers a test takes and keeps until it lets them go.
private final class HeldReaders: Sendable {
    let count: Int
    private let state = Mutex((inside: 0, released: false))
    private let hold = DispatchSemaphore(value: 0)

    init(count: Int) { self.count = count }

    var inside: Int { state.withLock { $0.inside } }
    var released: Bool { state.withLock { $0.released } }

    /// Called inside a read: keeps its reader until `release()` (at most 30 s).
    func holdOne() {
        state.withLock { $0.inside += 1 }
        _ = hold.wait(timeout: .now() + 30)
    }

    /// Lets every held reader go (once).
    func release() {
        let first = state.withLock { state in
            defer { state.released = true }
            return !state.released
        }
        if first { for _ in 0..<count { hold.signal() } }
    }
}

@Suite("A backup that was not finished")
struct UnfinishedBackupTests {
    @Test("a finished backup holds no note; a folder holding the note is never opened, and no backup goes over it")
    func noteOfAnUnfinishedBackup() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-unfinished-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let store = try RecipeStore(folder: scratch.appendingPathComponent("data"))
        defer { try? store.close() }
        _ = try await store.createRecipe(id: UUID(), .init(name: "Kept"))
        let whole = scratch.appendingPathComponent("whole")
        #expect(try await store.backup(to: whole.path).recipes == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: whole.path).sorted() == [RecipeVault.databaseFileName, RecipeVault.photoFolderName])

        // What a kill -9 in the middle leaves: the note, and part of the copy.
        let unfinished = scratch.appendingPathComponent("unfinished")
        try FileManager.default.copyItem(at: whole, to: unfinished)
        try UnfinishedBackup.begin(in: unfinished)
        let note = try String(contentsOf: unfinished.appendingPathComponent(RecipeVault.unfinishedBackupFileName), encoding: .utf8)
        #expect(note.contains("not a copy to restore from"))
        #expect(throws: UnfinishedBackup.self) { try RecipeStore(folder: unfinished) }
        #expect(!FileManager.default.fileExists(atPath: unfinished.appendingPathComponent("Recipes.sqlite-wal").path), "nothing was opened")
        let error = DataFolderError(folder: unfinished, underlying: UnfinishedBackup(folder: unfinished))
        #expect(error.description.contains("holds a backup that recipe-storage began and did not finish"))
        #expect(error.description.contains("Restore another backup"))
        do {
            _ = try await store.backup(to: unfinished.path)
            Issue.record("a backup went over an unfinished one")
        } catch let error as ServiceError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("holds a backup that was not finished"), "\(error.message)")
        }
        #expect(FileManager.default.fileExists(atPath: unfinished.appendingPathComponent(RecipeVault.unfinishedBackupFileName).path))

        // A folder that cannot be made says why in the system's words, not Foundation's "could not be completed".
        let underAFile = scratch.appendingPathComponent("whole").appendingPathComponent(RecipeVault.databaseFileName).appendingPathComponent("x")
        let refused = await #expect(throws: ServiceError.self) { _ = try await store.backup(to: underAFile.path) }
        #expect(refused?.message == "cannot create \(underAFile.path): Not a directory", "\(refused?.message ?? "")")
    }

    @Test("a backup into the data folder is refused, whether the path names it or reaches it through a link; nothing is written there")
    func notIntoTheDataFolder() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-inside-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let data = scratch.appendingPathComponent("data")
        let store = try RecipeStore(folder: data)
        defer { try? store.close() }
        _ = try await store.createRecipe(id: UUID(), .init(name: "Kept"))
        let before = try FileManager.default.contentsOfDirectory(atPath: data.path).sorted()
        let link = scratch.appendingPathComponent("shortcut")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: data)
        for path in [data.appendingPathComponent("copy").path, link.appendingPathComponent("copy").path,
                     link.appendingPathComponent("a/b").path] {
            let refused = await #expect(throws: ServiceError.self) { _ = try await store.backup(to: path) }
            #expect(refused?.code == .invalidArgument && refused?.message.hasSuffix("is inside the storage's data folder; choose a folder outside it") == true,
                    "\(path): \(refused?.message ?? "written")")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path).sorted() == before, "nothing was written into the data folder")
        #expect(try await store.backup(to: scratch.appendingPathComponent("outside/copy").path).recipes == 1, "a folder outside it takes the backup")
    }

    @Test("with a backup folder, backups go only inside it: a name alone is read there, a path outside it or through a link out of it is refused without a word about that folder, and nothing is made outside")
    func onlyInsideTheBackupFolder() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-confined-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let data = scratch.appendingPathComponent("data")
        let store = try RecipeStore(folder: data)
        defer { try? store.close() }
        _ = try await store.createRecipe(id: UUID(), .init(name: "Kept"))

        // The backup folder may be neither the data folder nor inside it, nor a relative path; it is made if missing.
        for folder in [data, data.appendingPathComponent("backups")] {
            let refused = #expect(throws: ServiceError.self) { try store.confineBackups(to: folder) }
            #expect(refused?.message.contains("is the data folder or inside it") == true, "\(refused?.message ?? "accepted")")
        }
        let root = scratch.appendingPathComponent("backups/nightly")
        try store.confineBackups(to: root)
        #expect(FileManager.default.fileExists(atPath: root.path))

        // Outside it: refused the same way whether the folder exists, is full or is missing (a client learns nothing
        // of it), by a path, a path that climbs out, or a link from inside the folder to outside.
        let outside = scratch.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: outside.appendingPathComponent("full"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: outside.appendingPathComponent("full/file"))
        let link = root.appendingPathComponent("out")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: outside)
        for path in [outside.path, outside.appendingPathComponent("full").path, outside.appendingPathComponent("new").path,
                     link.appendingPathComponent("copy").path, "/", scratch.appendingPathComponent("backups").path] {
            let refused = await #expect(throws: ServiceError.self) { _ = try await store.backup(to: path) }
            #expect(refused?.code == .invalidArgument, "\(path)")
            #expect(refused?.message.contains("is outside the backup folder \(root.path), the only place this storage writes backups") == true,
                    "\(path): \(refused?.message ?? "written")")
        }
        for text in ["../elsewhere/new", "a/../../b", ""] {
            let refused = await #expect(throws: ServiceError.self) { _ = try await store.backup(to: text) }
            #expect(refused?.message.contains("inside the backup folder \(root.path)") == true, "\(text): \(refused?.message ?? "written")")
        }
        let itself = await #expect(throws: ServiceError.self) { _ = try await store.backup(to: root.path + "/") }
        #expect(itself?.message.contains("is the backup folder itself; give a new folder inside it") == true, "\(itself?.message ?? "written")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).sorted() == ["full"], "nothing was made outside")

        // Inside it: by name alone, by a path under it, and by its absolute path.
        let byName = try await store.backup(to: "2026-12-02")
        #expect(byName.folder == root.appendingPathComponent("2026-12-02").path && byName.recipes == 1)
        #expect(try await store.backup(to: "weekly/1").folder == root.appendingPathComponent("weekly/1").path)
        #expect(try await store.backup(to: root.appendingPathComponent("by-path").path).recipes == 1)
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("2026-12-02/\(RecipeVault.databaseFileName)").path))
        // The rules that hold everywhere hold here too: a used folder is never written over.
        let refused = await #expect(throws: ServiceError.self) { _ = try await store.backup(to: "2026-12-02") }
        #expect(refused?.message.contains("is not empty") == true, "\(refused?.message ?? "written")")
    }

    @Test("a backup lets the storage's other file work run between two photos, and a second backup asked for meanwhile is answered busy, naming the first")
    func oneBackupAtATimeTakingTurns() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-turns-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let store = try RecipeStore(folder: scratch.appendingPathComponent("data"))
        defer { try? store.close() }
        let photos = 6
        for _ in 0..<photos {
            let id = UUID()
            _ = try await store.createRecipe(id: id, .init(name: "Photographed"))
            _ = try await store.addPhoto(recipeID: id, bytes: imageBytes(.jpeg), position: nil)
        }
        let first = scratch.appendingPathComponent("first").path
        // One thread for both, as the storage runs its file work: the second task runs only when the backup lets it.
        let (backup, seen, refusal) = try await onOwnExecutor { () async throws -> (BackupOps.Backup.Response, Set<Int>, ServiceError?) in
            let finished = Atomic<Bool>(false)
            async let backup = { () async throws -> BackupOps.Backup.Response in
                defer { finished.store(true, ordering: .relaxed) }
                return try await store.backup(to: first)
            }()
            // The photos copied each time this task has the thread, until the backup ends (a bounded wait).
            var seen = Set<Int>(), refusal: ServiceError?
            let deadline = ContinuousClock.now + .seconds(60)
            while !finished.load(ordering: .relaxed), ContinuousClock.now < deadline {
                let copied = store.backupPhotosCopied.load(ordering: .relaxed)
                seen.insert(copied)
                if copied > 0, refusal == nil {
                    do {
                        _ = try await store.backup(to: scratch.appendingPathComponent("second").path)
                        Issue.record("a second backup was written while the first ran")
                    } catch let error as ServiceError {
                        refusal = error
                    }
                }
                await Task.yield()
            }
            return (try await backup, seen, refusal)
        }
        #expect(backup.photos == photos)
        #expect(seen.contains { $0 > 0 && $0 < photos }, "other work ran between the backup's photos: \(seen.sorted())")
        #expect(refusal?.code == .busy, "\(String(describing: refusal))")
        #expect(refusal?.message == "a backup into \(first) is being written; the storage writes one backup at a time: retry when it ends")
        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("second").path), "the refused backup made nothing")
        // Once it ends, the next is taken.
        #expect(try await store.backup(to: scratch.appendingPathComponent("third").path).photos == photos)
    }

    @Test("a folder whose path is too long for SQLite to open the copy is refused before anything is made (it was an internal error, after thousands of folders were made); one just short enough takes the backup; a folder that cannot be made leaves none of its parents behind")
    func folderPathLengths() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-long-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let store = try RecipeStore(folder: scratch.appendingPathComponent("data"))
        defer { try? store.close() }
        _ = try await store.createRecipe(id: UUID(), .init(name: "Kept"))
        let deep = scratch.path + "/" + String(repeating: "y/", count: 1_900)
        let refused = await #expect(throws: ServiceError.self) { _ = try await store.backup(to: deep) }
        #expect(refused?.code == .invalidArgument && refused?.message.contains("bytes long; a backup's folder may be at most \(RecipeStore.maxBackupFolderBytes) bytes") == true,
                "\(refused?.message ?? "written")")
        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("y").path), "nothing was made")

        // Exactly as long as allowed: components of at most 200 bytes.
        var longest = scratch.path
        while longest.utf8.count < RecipeStore.maxBackupFolderBytes {
            let room = RecipeStore.maxBackupFolderBytes - longest.utf8.count - 1
            longest += "/" + String(repeating: "z", count: max(1, min(200, room)))
        }
        #expect(longest.utf8.count == RecipeStore.maxBackupFolderBytes)
        #expect(try await store.backup(to: longest).recipes == 1)

        // A name the file system refuses (over 255 bytes), under two folders made on the way: both go again.
        let unmade = scratch.appendingPathComponent("a/b/" + String(repeating: "n", count: 300)).path
        let cannot = await #expect(throws: ServiceError.self) { _ = try await store.backup(to: unmade) }
        #expect(cannot?.message.hasPrefix("cannot create ") == true, "\(cannot?.message ?? "written")")
        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("a").path), "the folders made on the way were removed")
    }

    @Test("a data folder whose path is too long for SQLite to open its snapshots is refused at open, saying so; one just short enough makes a snapshot")
    func dataFolderPathLength() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-longdata-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        func folder(bytes: Int) -> URL {
            var path = scratch.path
            while path.utf8.count < bytes { path += "/" + String(repeating: "d", count: max(1, min(200, bytes - path.utf8.count - 1))) }
            return URL(fileURLWithPath: path)
        }
        let longest = folder(bytes: RecipeStore.maxDataFolderBytes)
        let store = try RecipeStore(folder: longest)
        _ = try await store.createRecipe(id: UUID(), .init(name: "Kept"))
        let snapshot = try await store.makeSnapshot()
        #expect(snapshot.records >= 1 && snapshot.bytes > 0)
        try store.close()

        let tooLong = folder(bytes: RecipeStore.maxDataFolderBytes + 1)
        let refused = #expect(throws: DataFolderPathTooLong.self) { try RecipeStore(folder: tooLong) }
        let said = DataFolderError(folder: tooLong, underlying: try #require(refused)).description
        #expect(said == "cannot open the data folder \(tooLong.path): its path is \(RecipeStore.maxDataFolderBytes + 1) bytes long, and SQLite opens the files recipe-storage keeps there only under a folder of at most \(RecipeStore.maxDataFolderBytes) bytes; choose another with --data or RECIPES_DATA, with a shorter path", "\(said)")
    }

    @Test("without a backup folder a name alone is refused, saying a path is needed")
    func aNameAloneNeedsABackupFolder() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-unconfined-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let store = try RecipeStore(folder: scratch.appendingPathComponent("data"))
        defer { try? store.close() }
        let refused = await #expect(throws: ServiceError.self) { _ = try await store.backup(to: "2026-12-02") }
        #expect(refused?.message == "folder \"2026-12-02\": give an absolute path on the storage's machine, without .. (a name alone is read inside the backup folder of a storage started with --backup-folder; this one has none)",
                "\(refused?.message ?? "written")")
    }
}
