import Crypto
import Foundation
import RecipeModel
import RecipeProtocol
import Testing
@testable import RecipeStore

/// Receiving a snapshot: the write that brings the last byte (when the sender tells the size) starts the copy's
/// check with the digest of the bytes as they were written; anything that makes that digest unknown or stale
/// leaves the check to `installSnapshot`.
@Suite("Receiving a snapshot: the check starts with the last byte")
struct SnapshotReceiveTests {
    /// A snapshot of a store with a few recipes: its id, bytes and the install request for it.
    func snapshot() async throws -> (bytes: Data, request: (UUID) -> SyncOps.Install.Request) {
        try await withStore { source in
            for name in ["Soup", "Bread", "Salad"] { _ = try await source.createRecipe(id: UUID(), RecipeDraft(name: name, keywords: ["quick"])) }
            let made = try await source.makeSnapshot()
            let bytes = try Data(contentsOf: source.snapshotFolder.appendingPathComponent("\(made.snapshot.uuidString).sqlite"))
            return (bytes, { SyncOps.Install.Request(snapshot: $0, from: made.replicaID, seq: made.seq, bytes: made.bytes, sha256: made.sha256) })
        }
    }

    func write(_ bytes: Data, as id: UUID, to store: RecipeStore, pieces: Int = 3, total: Int?) async throws {
        let size = (bytes.count + pieces - 1) / pieces
        for offset in stride(from: 0, to: bytes.count, by: size) {
            let piece = bytes[(bytes.startIndex + offset)..<min(bytes.endIndex, bytes.startIndex + offset + size)]
            _ = try await store.writeSnapshot(id, offset: offset, bytes: Data(piece), total: total)
        }
    }

    func hex(_ bytes: Data) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    @Test("told the size, the last write starts the check with the bytes' digest, and install takes it")
    func lastWriteStartsCheck() async throws {
        let (bytes, request) = try await snapshot()
        try await withStore { store in
            let id = UUID()
            try await write(bytes, as: id, to: store, total: bytes.count)
            let started = try #require(store.incoming.take(id), "the last write started a check")
            #expect(started.bytes == bytes.count && started.sha256 == hex(bytes))
            let verdict = await started.check.value
            let passed: Bool = switch (verdict.structure, verdict.contents, verdict.feed) {
            case (.success(nil), .success, .success): true
            default: false
            }
            #expect(passed, "\(verdict)")
            // Taken once: install finds no started check now and checks itself, with the same outcome.
            #expect(store.incoming.take(id) == nil)
            let installed = try await store.installSnapshot(request(id))
            #expect(installed.installed)
            #expect(try await store.listRecipes(RecipeListQuery(limit: 10)).recipes.map(\.name).sorted() == ["Bread", "Salad", "Soup"])
        }
        try await withStore { store in
            let id = UUID()
            try await write(bytes, as: id, to: store, total: bytes.count)
            #expect(try await store.installSnapshot(request(id)).installed, "installed on the verdict the last write started")
        }
    }

    @Test("no check starts without the size, before the last byte, from a digest that missed bytes, or twice; a later write drops it")
    func nothingStaleIsTrusted() async throws {
        let (bytes, request) = try await snapshot()
        try await withStore { store in
            let id = UUID()
            try await write(bytes, as: id, to: store, total: nil)
            #expect(store.incoming.take(id) == nil, "no size told")
            let short = UUID()
            try await write(bytes.prefix(bytes.count - 1), as: short, to: store, total: bytes.count)
            #expect(store.incoming.take(short) == nil, "the last byte is not in")
            // The last piece sent again (a retry) keeps the check; bytes past the end drop it.
            let retried = UUID()
            try await write(bytes, as: retried, to: store, pieces: 2, total: bytes.count)
            let half = (bytes.count + 1) / 2
            _ = try await store.writeSnapshot(retried, offset: half, bytes: Data(bytes[half...]), total: bytes.count)
            #expect(store.incoming.take(retried)?.sha256 == hex(bytes), "a retry keeps the started check")
            let appended = UUID()
            try await write(bytes, as: appended, to: store, total: bytes.count)
            // Bytes past the end drop the check, and one check is all a snapshot gets: a sender that keeps adding a
            // byte (and says the new size) gets no new check from each.
            _ = try await store.writeSnapshot(appended, offset: bytes.count, bytes: Data("more".utf8), total: bytes.count + 4)
            #expect(store.incoming.take(appended) == nil, "bytes after the check dropped it, and started no other")
            let error = await #expect(throws: ServiceError.self) { try await store.installSnapshot(request(appended)) }
            #expect(error?.message.contains("arrived as \(bytes.count + 4) bytes") == true, "\(error?.message ?? "")")
        }
        // A storage restarted part way did not see the first bytes: it starts no check, and install checks the file.
        try await withFolder { folder in
            let id = UUID()
            let half = bytes.count / 2
            let first = try RecipeStore(folder: folder)
            _ = try await first.writeSnapshot(id, offset: 0, bytes: Data(bytes.prefix(half)), total: bytes.count)
            try first.close()
            let store = try RecipeStore(folder: folder)
            defer { try? store.close() }
            _ = try await store.writeSnapshot(id, offset: half, bytes: Data(bytes[half...]), total: bytes.count)
            #expect(store.incoming.digest(of: id, bytes: bytes.count) == nil)
            #expect(try await store.installSnapshot(request(id)).installed)
        }
    }
}

@Suite("Installing a snapshot: its pages reach the database file beside what comes next")
struct SnapshotInstallCheckpointTests {
    @Test("the install returns before the copy is checkpointed; the checkpoint beside it moves every page into the file")
    func checkpointedBeside() async throws {
        let (bytes, request) = try await SnapshotReceiveTests().snapshot()
        try await withStore { store in
            let id = UUID()
            _ = try await store.writeSnapshot(id, offset: 0, bytes: bytes, total: bytes.count)
            #expect(try await store.installSnapshot(request(id)).installed)
            // The copy went into the log; the database file grows to the copy's size once the checkpoint ran (nothing
            // is written after the install, so no commit of the writer's would start one).
            let path = store.folder.appendingPathComponent(RecipeVault.databaseFileName).path
            var inFile = 0
            // Bounded generously: on a loaded machine the checkpoint's queue may wait its turn for seconds.
            for _ in 0..<600 where inFile < bytes.count * 9 / 10 {
                inFile = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                if inFile < bytes.count * 9 / 10 { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(inFile >= bytes.count * 9 / 10, "the database file is \(inFile) bytes; the copy was \(bytes.count)")
            #expect(try await store.listRecipes(RecipeListQuery(limit: 10)).recipes.count == 3)
            let limit = try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA journal_size_limit") }
            #expect(limit == RecipeStore.logSizeLimit, "a grown log is cut back when SQLite starts it over")
        }
    }
}

@Suite("Snapshots whose copies ended midway make way")
struct AbandonedSnapshotTests {

    @Test("a source with four snapshots unused for ten minutes makes a fifth in place of the longest unused; one just read is kept; fresh ones are kept and the fifth is busy")
    func sourceSnapshotsMakeWay() async throws {
        try await withStore { store in
            _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
            var made: [UUID] = []
            for _ in 0..<4 { made.append(try await store.makeSnapshot().snapshot) }
            await #expect(throws: ServiceError.self, "four fresh ones: a fifth waits") { try await store.makeSnapshot() }
            for (index, id) in made.enumerated() {
                try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-660 - Double(index))],
                                                      ofItemAtPath: store.snapshotPath(id))
            }
            // The oldest by its file is being read now: reading marks it used, so another makes way.
            _ = try store.readSnapshot(made[3], offset: 0, length: 100)
            let fifth = try await store.makeSnapshot().snapshot
            let kept = Set(try FileManager.default.contentsOfDirectory(atPath: store.snapshotFolder.path).filter { $0.hasSuffix(".sqlite") })
            #expect(kept.contains("\(made[3].uuidString).sqlite") && kept.contains("\(fifth.uuidString).sqlite"))
            #expect(!kept.contains("\(made[2].uuidString).sqlite"), "the longest unused made way")
            #expect(kept.count == 4)
        }
    }

    @Test("a restarted storage removes the snapshots made or received before that were unused for ten minutes (their copies ended); fresher ones stay for the copy's retry")
    func restartRemovesAbandonedTransfers() async throws {
        try await withFolder { folder in
            let (bytes, _) = try await SnapshotReceiveTests().snapshot()
            let store = try RecipeStore(folder: folder.appendingPathComponent("data"))
            let old = try await store.makeSnapshot().snapshot
            let fresh = try await store.makeSnapshot().snapshot
            let oldIncoming = UUID(), freshIncoming = UUID()
            for id in [oldIncoming, freshIncoming] {
                _ = try await store.writeSnapshot(id, offset: 0, bytes: bytes.prefix(4_096), total: bytes.count)
            }
            for path in [store.snapshotPath(old), store.incomingPath(oldIncoming)] {
                try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-660)], ofItemAtPath: path)
            }
            try store.close()
            let again = try RecipeStore(folder: folder.appendingPathComponent("data"))
            let manager = FileManager.default
            #expect(!manager.fileExists(atPath: again.snapshotPath(old)) && !manager.fileExists(atPath: again.incomingPath(oldIncoming)))
            #expect(manager.fileExists(atPath: again.snapshotPath(fresh)) && manager.fileExists(atPath: again.incomingPath(freshIncoming)))
            try again.close()
        }
    }
}
