import Crypto
import Foundation
import GRDB
import RecipeModel
import RecipeProtocol
import RecipeStore
import ReplicaSync
import Testing

@Suite("Replica sync: an empty replica gets a snapshot")
struct SnapshotTests {
    /// A replica with samples, a dozen recipes (three with photos), a cook-log entry, a conflict and an import job.
    func populated(_ a: LocalReplica, _ helper: LocalReplica) async throws -> [UUID] {
        _ = try await a.store.loadSamples()
        var ids: [UUID] = []
        for index in 0..<12 {
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(
                name: "Recipe \(index)", ingredients: [.init(text: "\(index + 1) eggs")], instructions: [.init(text: "Cook.")], notes: "n\(index)"))
            ids.append(recipe.id)
            if index < 3 { _ = try await a.store.addPhoto(recipeID: recipe.id, bytes: jpegBytes(seed: UInt64(index) + 1), position: nil) }
        }
        _ = try await a.store.addCookLogEntry(id: UUID(), recipeID: ids[0], cookedAt: Date(timeIntervalSince1970: 1_700_000_000), rating: 4,
                                              note: "good", servings: 2)
        // A conflict: the same field edited on a and on a helper replica, then merged into a.
        try await syncAll([a, helper])
        for (replica, notes) in [(a, "from a"), (helper, "from helper")] {
            let current = try await replica.store.recipe(ids[1])
            var draft = RecipeDraft(current)
            draft.notes = notes
            _ = try await replica.store.updateRecipe(id: ids[1], expectedVersion: current.version, draft)
        }
        _ = try await SyncEngine.pull(from: helper, to: a)
        _ = try await a.store.createJob(id: UUID(), urls: ["https://example.com/a-job-of-this-replica"])
        return ids
    }

    @Test("the same content and photos arrive at once; the replica keeps its id; later changes flow both ways; nothing is read back")
    func snapshotJoin() async throws {
        try await withReplicas(3) { replicas in
            let (a, b, helper) = (replicas[0], replicas[1], replicas[2])
            let ids = try await populated(a, helper)
            let before = try await b.info()
            #expect(before.empty == true)
            let sourceInfo = try await a.info()
            let report = try await SyncEngine.pull(from: a, to: b, snapshotAbove: 0)
            let after = try await b.info()
            #expect(after.replicaID == before.replicaID, "the replica keeps its id")
            #expect(after.empty == false && after.latestSeq == sourceInfo.latestSeq)
            #expect(report.photos == 3 && report.changed > 12)
            #expect(try await b.store.canonicalDump() == a.store.canonicalDump(), "the same content")
            #expect(try await b.cursor(peer: sourceInfo.replicaID).seq == sourceInfo.latestSeq)
            #expect(try await b.store.jobs(unfinished: false, limit: 10).isEmpty, "a's import jobs are a's")
            #expect(try await b.store.conflicts().count == a.store.conflicts().count)
            #expect(try await a.store.conflicts().count >= 1)
            for id in ids.prefix(3) {
                let photo = try #require(try await b.store.recipe(id).photos.first)
                #expect(try b.store.photoBlob(sha256: photo.sha256).count == 3_000)
            }
            // Neither direction sends anything back now: b's feed is a's own state, and a knows it.
            let (aToB, bToA) = try await SyncEngine.sync(a, b, snapshotAbove: 0)
            #expect(aToB.received == 0 && bToA.received == 0, "\(aToB) \(bToA)")
            // Edits on each side, and the helper (which a snapshot never reached), all converge.
            try await edit(b, ids[4]) { $0.notes = "edited on b" }
            try await edit(a, ids[5]) { $0.rating = 5 }
            _ = try await b.store.createRecipe(id: UUID(), RecipeDraft(name: "Made on b"))
            try await syncAll([a, b, helper], snapshotAbove: 0)
            try await expectSameContent(a, b)
            try await expectSameContent(a, helper)
            #expect(try await a.store.recipe(ids[4]).notes == "edited on b")
            #expect(try await b.store.recipe(ids[5]).rating == 5)
            // Reopened, b is the same replica: the copied file is its own, not a restore.
            let folder = b.store.folder
            try b.store.close()
            let reopened = try RecipeStore(folder: folder)
            #expect(reopened.incarnationNote == nil)
            #expect(try await reopened.syncInfo().replicaID == before.replicaID)
            try reopened.close()
            _ = try? RecipeStore(folder: folder).close() // the helper closes what withReplicas opened
        }
    }

    @Test("a replica that holds something gets records; a damaged, mislabelled or doctored snapshot is refused and changes nothing")
    func refusals() async throws {
        try await withReplicas(3) { replicas in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            _ = try await a.store.loadSamples()
            let (cooked, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Cooked", keywords: ["quick"]))
            _ = try await a.store.addCookLogEntry(id: UUID(), recipeID: cooked.id, cookedAt: nil, rating: nil, note: nil, servings: nil)
            _ = try await b.store.createRecipe(id: UUID(), RecipeDraft(name: "Already here"))
            #expect(try await b.info().empty == false)
            let snapshot = try await a.snapshot()
            let bytes = try Data(contentsOf: a.store.folder.appendingPathComponent("snapshots/\(snapshot.snapshot.uuidString).sqlite"))
            #expect(bytes.count == snapshot.bytes)
            await #expect(throws: ServiceError.self) { try await b.writeSnapshot(snapshot.snapshot, offset: 0, bytes: bytes, total: bytes.count) }
            _ = try await SyncEngine.pull(from: a, to: b, snapshotAbove: 0)
            #expect(try await names(b).count == names(a).count + 1, "records merged, nothing replaced")

            // Each copy goes in twice: with its size told (the last write starts the check, install takes the verdict)
            // and without (install checks): the verdicts must be the same.
            func install(_ data: Data, from: String? = nil, sha: String? = nil, seq: Int? = nil, told: Bool) async throws -> SyncOps.Install.Response {
                let id = UUID()
                let total = told ? data.count : nil
                _ = try await c.store.writeSnapshot(id, offset: 0, bytes: data.prefix(10_000), total: total)
                if data.count > 10_000 { _ = try await c.store.writeSnapshot(id, offset: 10_000, bytes: data.dropFirst(10_000), total: total) }
                return try await c.install(.init(snapshot: id, from: from ?? snapshot.replicaID, seq: seq ?? snapshot.seq, bytes: data.count,
                                                 sha256: sha ?? sha256(data)))
            }
            func refused(_ data: Data, from: String? = nil, sha: String? = nil, seq: Int? = nil, saying words: String) async throws {
                var messages: [String] = []
                for told in [true, false] {
                    let error = await #expect(throws: ServiceError.self) { _ = try await install(data, from: from, sha: sha, seq: seq, told: told) }
                    #expect(error?.code == .invalidArgument && (words.isEmpty || error?.message.contains(words) == true),
                            "\(words) (size told: \(told)): \(error?.message ?? "")")
                    #expect(try await c.info().empty == true, "nothing was installed")
                    messages.append(error?.message.replacingOccurrences(of: #"snapshot [0-9A-F-]{36}"#, with: "snapshot", options: .regularExpression) ?? "")
                }
                #expect(messages[0] == messages[1], "the same verdict early and at install: \(messages)")
            }
            var flipped = bytes
            flipped[bytes.count / 2] ^= 0xFF
            try await refused(flipped, sha: snapshot.sha256, saying: "not the \(bytes.count) bytes")
            var damaged = bytes // the second page's b-tree header overwritten
            damaged.replaceSubrange(4_096..<4_108, with: Data(repeating: 0xFF, count: 12))
            try await refused(damaged, saying: "damaged")
            try await refused(bytes, from: "0123456789ab", saying: "was not made on replica 0123456789ab")
            try await refused(bytes, seq: snapshot.seq + 1, saying: "does not end at change")
            try await refused(Data("not a database".utf8), saying: "")
            // A value the storage could not read back, written into an otherwise sound copy.
            for (sql, column) in [("UPDATE recipes SET title = x'00'", "recipes.title"), ("UPDATE recipe_keywords SET recipeId = lower(recipeId)", ""),
                                  ("UPDATE cook_log SET cookedAt = 'yesterday'", "cook_log.cookedAt"),
                                  ("UPDATE sync_records SET body = 'not a record' WHERE seq = (SELECT MAX(seq) FROM sync_records)", "change record"),
                                  // Records are checked beside the rest, but judged after it: the first problem in order is the one named.
                                  ("UPDATE sync_records SET body = '{'; UPDATE recipes SET title = x'00'", "recipes.title"),
                                  ("UPDATE sync_records SET body = '{'; UPDATE sync_state SET value = 'elsewhere' WHERE key = 'replica'",
                                   "was not made on replica"),
                                  // Change records that never end (a view where the table was): refused for its schema, never read.
                                  ("ALTER TABLE sync_records RENAME TO kept; CREATE VIEW sync_records AS WITH RECURSIVE c(x) AS "
                                   + "(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x AS seq, (SELECT body FROM kept LIMIT 1) AS body FROM c",
                                   "other than its migrations make")] {
                let doctored = try doctor(bytes, sql)
                try await refused(doctored, saying: column)
            }
            // A received copy is not installed over something stored after it arrived.
            let id = UUID()
            try await c.writeSnapshot(id, offset: 0, bytes: bytes, total: bytes.count)
            _ = try await c.store.createRecipe(id: UUID(), RecipeDraft(name: "Arrived meanwhile"))
            let late = try await c.install(.init(snapshot: id, from: snapshot.replicaID, seq: snapshot.seq, bytes: bytes.count, sha256: snapshot.sha256))
            #expect(!late.installed && late.reason?.contains("not empty") == true)
            #expect(try await names(c) == ["Arrived meanwhile"])
            try await a.snapshotDone(snapshot.snapshot)
            #expect(!FileManager.default.fileExists(atPath: a.store.folder.appendingPathComponent("snapshots/\(snapshot.snapshot.uuidString).sqlite").path))
            let incoming = (try? FileManager.default.contentsOfDirectory(atPath: c.store.folder.appendingPathComponent("incoming").path)) ?? []
            #expect(incoming.isEmpty, "received copies are removed once installed or refused: \(incoming)")
        }
    }

    func names(_ replica: LocalReplica) async throws -> [String] {
        try await replica.store.listRecipes(RecipeListQuery(limit: 200)).recipes.map(\.name)
    }

    func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    func edit(_ replica: LocalReplica, _ id: UUID, _ change: (inout RecipeDraft) -> Void) async throws {
        try await ScenarioTests().edit(replica, id, change)
    }

    /// `bytes` (a database file) with `sql` run on it.
    func doctor(_ bytes: Data, _ sql: String) throws -> Data {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rv-doctored-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try bytes.write(to: URL(fileURLWithPath: path))
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA foreign_keys = OFF; " + sql) }
        try queue.close()
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    @Test("copies that failed midway leave their files at the new replica; they keep no later copy out: one idle for ten minutes makes way, and while they are fresh the records come instead of an error")
    func abandonedCopiesMakeWay() async throws {
        try await withReplicas(3) { replicas in
            let (a, fresh, idle) = (replicas[0], replicas[1], replicas[2])
            for index in 0..<5 {
                _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Recipe \(index)", ingredients: [.init(text: "\(index + 1) eggs")]))
            }
            let (photoRecipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "With a photo"))
            _ = try await a.store.addPhoto(recipeID: photoRecipe.id, bytes: jpegBytes(seed: 9), position: nil)
            func incoming(_ replica: LocalReplica) -> [String] {
                ((try? FileManager.default.contentsOfDirectory(atPath: replica.store.folder.appendingPathComponent("incoming").path)) ?? [])
                    .filter { $0.hasSuffix(".sqlite") }
            }
            // Four copies into each that stopped after their first bytes (the source was restarted, or its answers
            // stopped): the source let its snapshots go, the targets kept what they had received.
            for target in [fresh, idle] {
                for _ in 0..<4 {
                    let made = try await a.snapshot()
                    let first = try await a.readSnapshot(made.snapshot, offset: 0).prefix(4_096)
                    try await target.writeSnapshot(made.snapshot, offset: 0, bytes: Data(first), total: made.bytes)
                    try await a.snapshotDone(made.snapshot)
                }
                #expect(incoming(target).count == 4)
            }
            // Fresh ones: this target takes no fifth snapshot now, and the pull brings the records instead of failing.
            _ = try await SyncEngine.pull(from: a, to: fresh, snapshotAbove: 0)
            try await expectSameContent(a, fresh)
            #expect(try await incarnations(fresh).contains("started from a snapshot") == false)
            // Idle for eleven minutes: the longest idle makes way, and the copy goes as a snapshot.
            let folder = idle.store.folder.appendingPathComponent("incoming")
            for name in incoming(idle) {
                try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-660)],
                                                      ofItemAtPath: folder.appendingPathComponent(name).path)
            }
            let report = try await SyncEngine.pull(from: a, to: idle, snapshotAbove: 0)
            try await expectSameContent(a, idle)
            #expect(try await incarnations(idle).contains("started from a snapshot"), "\(report)")
            #expect(incoming(idle).count == 3, "one abandoned copy made way; the installed one is removed: \(incoming(idle))")
        }
    }

    @Test("a new replica that stops being empty while a snapshot goes to it (a person writes there, or another worker's copy went in first) gets the records in the same pull, not an error", arguments: [0, 1])
    func targetWrittenDuringCopy(atWrite: Int) async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            for index in 0..<5 {
                _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Recipe \(index)", ingredients: [.init(text: "\(index + 1) eggs")]))
            }
            // Before the copy's first bytes, or before its second (the source's file is read 4 KB a time here).
            let target = WrittenDuringCopy(forwardee: b, atWrite: atWrite)
            _ = try await SyncEngine.pull(from: ChunkedSource(forwardee: a), to: target, snapshotAbove: 0)
            _ = try await SyncEngine.pull(from: b, to: a)
            try await expectSameContent(a, b)
            #expect(try await b.store.listRecipes(.init(limit: 20)).recipes.contains { $0.name == "Written meanwhile" })
            #expect(try await incarnations(b).contains("started from a snapshot") == false)
        }
    }

    /// Writes a recipe at the replica before its write number `atWrite` of a snapshot's bytes.
    final class WrittenDuringCopy: ForwardingEndpoint, @unchecked Sendable {
        let forwardee: any SyncEndpoint
        let local: LocalReplica
        let atWrite: Int
        private var writes = 0 // the copy's writes come one after another
        init(forwardee: LocalReplica, atWrite: Int) {
            self.forwardee = forwardee
            self.local = forwardee
            self.atWrite = atWrite
        }
        func writeSnapshot(_ id: UUID, offset: Int, bytes: Data, total: Int) async throws {
            if writes == atWrite { _ = try await local.store.createRecipe(id: UUID(), RecipeDraft(name: "Written meanwhile")) }
            writes += 1
            try await forwardee.writeSnapshot(id, offset: offset, bytes: bytes, total: total)
        }
    }

    /// A source whose snapshot is read 4 KB a time, so a copy takes several writes.
    struct ChunkedSource: ForwardingEndpoint {
        let forwardee: any SyncEndpoint
        func readSnapshot(_ id: UUID, offset: Int) async throws -> Data {
            Data(try await forwardee.readSnapshot(id, offset: offset).prefix(4_096))
        }
    }

    /// The replica's incarnation history, as its database file says it.
    func incarnations(_ replica: LocalReplica) async throws -> String {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: replica.store.folder.appendingPathComponent(RecipeVault.databaseFileName).path, configuration: configuration)
        defer { try? queue.close() }
        return try await queue.read { db in try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'incarnations'") ?? "" }
    }

}
