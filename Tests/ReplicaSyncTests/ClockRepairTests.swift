import Foundation
import RecipeModel
import RecipeProtocol
@testable import RecipeStore
import ReplicaSync
import Synchronization
import Testing

/// A machine whose clock was ahead for a while (a wrong time at boot, a time zone taken for UTC) and was then set
/// right: the replica's hybrid clock only moves forward, so before the restart every later write was stamped ahead
/// too, and every other replica held them back until real time caught up — a year, for a clock a year ahead.
@Suite("A replica's clock left ahead by the machine's, after the machine's clock is set right")
struct ClockRepairTests {
    static let year: Int64 = 365 * 86_400_000

    @Test("a person's edit of the version they read is taken when the clock restart it sets off shows the recipe's keywords in another order: a re-dating is no one's edit (seed 1405504297626771429)")
    func editAcrossTheRestart() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
            _ = try await syncAll(replicas)
            // Two keywords added at once at the same place: "party" on b, its clock 20 minutes ahead (within what replicas
            // take), "vegan" on a, its clock a year ahead. One place, so they show by their stamps: party, vegan.
            try await b.store.setClockOffset(milliseconds: 20 * 60_000)
            try await a.store.setClockOffset(milliseconds: Self.year)
            for (replica, keyword) in [(b, "party"), (a, "vegan")] {
                let current = try await replica.store.recipe(recipe.id)
                var draft = RecipeDraft(current)
                draft.keywords = [keyword]
                _ = try await replica.store.updateRecipe(id: recipe.id, expectedVersion: current.version, draft)
            }
            _ = try await SyncEngine.pull(from: b, to: a)
            // a's machine clock is set right; a person reads the recipe there and edits it. The edit's write restarts the
            // clock, which stamps "vegan" again at now, before "party": the order shown changes in the edit's own transaction.
            try await a.store.setClockOffset(milliseconds: 0)
            let current = try await a.store.recipe(recipe.id)
            #expect(current.keywords == ["party", "vegan"])
            var draft = RecipeDraft(current)
            draft.notes = "less salt"
            let edited = try await a.store.updateRecipe(id: recipe.id, expectedVersion: current.version, draft)
            #expect(try await a.store.clockRestarts().count == 1)
            #expect(edited.notes == "less salt" && edited.version == current.version + 1)
            // What the person sent is what they saw: their order stands, and reaches b.
            #expect(try await a.store.recipe(recipe.id).keywords == ["party", "vegan"])
            try await b.store.setClockOffset(milliseconds: 0)
            try await expectConverged(replicas)
        }
    }

    /// `replica` stopped, its data folder replaced by `backup`, and a storage started on it (a new incarnation).
    static func restore(_ replica: LocalReplica, from backup: URL) throws -> LocalReplica {
        let folder = replica.store.folder
        try replica.store.close()
        try FileManager.default.removeItem(at: folder)
        try FileManager.default.moveItem(at: backup, to: folder)
        return LocalReplica(store: try RecipeStore(folder: folder))
    }

    /// `a` makes and edits recipes, a book and a cook-log entry while its machine's clock is `ahead` ms ahead; then the
    /// clock is set right. Returns the recipe edited on both sides of the fix, and the one made after it.
    static func writeAhead(_ a: LocalReplica, _ b: LocalReplica, ahead: Int64) async throws -> (shared: UUID, later: UUID, fixedAt: Int64) {
        let (shared, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Shared"))
        _ = try await syncAll([a, b])
        try await a.store.setClockOffset(milliseconds: ahead)
        _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Made while ahead", ingredients: [.init(text: "2 eggs")]))
        var current = try await a.store.recipe(shared.id)
        _ = try await a.store.updateRecipe(id: shared.id, expectedVersion: current.version, RecipeDraft(name: "Shared, edited ahead", notes: "ahead"))
        let book = try await a.store.createBook(id: UUID(), title: "Ahead", author: nil)
        _ = try await a.store.addCookLogEntry(id: UUID(), recipeID: shared.id, cookedAt: nil, rating: 4, note: nil, servings: nil)
        _ = book
        try await a.store.setClockOffset(milliseconds: 0)
        let fixedAt = Int64(Date().timeIntervalSince1970 * 1_000)
        let (later, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Made after the fix"))
        current = try await a.store.recipe(shared.id)
        _ = try await a.store.updateRecipe(id: shared.id, expectedVersion: current.version, RecipeDraft(name: "Shared, edited after", notes: "ahead"))
        return (shared.id, later.id, fixedAt)
    }

    @Test("the next write restarts the clock and stamps again what was written ahead: the other replica takes every record, holds none, and both end alike",
          arguments: [2 * 3_600_000, year] as [Int64])
    func nextWriteRestarts(ahead: Int64) async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (shared, later, fixedAt) = try await Self.writeAhead(a, b, ahead: ahead)
            let stamp = try #require(try await a.store.syncRecord(.recipe, id: later.uuidString)?.states["name"]?.clock.stamp)
            let wall = try #require(Int64(stamp.prefix(16)))
            #expect(wall >= fixedAt - 1 && wall <= Int64(Date().timeIntervalSince1970 * 1_000) + 1,
                    "the write after the fix is stamped at the machine's time: \(stamp)")
            _ = try await syncAll([a, b])
            let held = try await b.store.syncInfo().held
            #expect(held.isEmpty, "\(held.map(\.reason))")
            #expect(try await b.store.recipe(shared).name == "Shared, edited after")
            #expect(try await b.store.recipe(shared).notes == "ahead")
            #expect(try await b.store.listRecipes(.init(limit: 20)).recipes.map(\.name).sorted()
                    == ["Made after the fix", "Made while ahead", "Shared, edited after"])
            #expect(try await b.store.listBooks().map(\.book.title) == ["Ahead"])
            #expect(try await b.store.cookLog(recipeID: nil, limit: 10).count == 1)
            try await expectSameContent(a, b)
            // No stamp anywhere is still ahead of the machine's clock.
            let limit = Int64(Date().timeIntervalSince1970 * 1_000) + 3_600_000
            for replica in [a, b] {
                for record in try await replica.store.syncChanges(since: 0, exclude: nil, limit: 1_000).records {
                    #expect(record.clocks.allSatisfy { (Int64($0.stamp.prefix(16)) ?? 0) <= limit }, "\(record.kind) \(record.id): \(record.clocks.map(\.stamp))")
                }
            }
            // And b's own edit after it merges by causality as ever.
            let current = try await b.store.recipe(shared)
            _ = try await b.store.updateRecipe(id: shared, expectedVersion: current.version, RecipeDraft(name: "Shared, then b"))
            _ = try await syncAll([a, b])
            #expect(try await a.store.recipe(shared).name == "Shared, then b")
            #expect(try await a.store.conflicts().isEmpty)
        }
    }

    @Test("a recipe made while one machine's clock was ahead and deleted on another whose clock was ahead too stays deleted when both restart before hearing of each other (seed 7179111056887966857)")
    func reDatingDoesNotBringBackADelete() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            try await a.store.setClockOffset(milliseconds: 2 * 3_600_000)
            try await b.store.setClockOffset(milliseconds: 86_400_000)
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Made ahead", notes: "n"))
            _ = try await SyncEngine.pull(from: a, to: b) // b, a day ahead, takes it, and a person there deletes it
            _ = try await b.store.deleteRecipe(id: recipe.id)
            // Both machines' clocks are set right; each writes before any sync, so each restarts its clock and re-dates
            // what it holds stamped ahead: a the recipe's fields, b the recipe's tombstone. Re-dated as new writes,
            // a's fields were present where b's delete had not seen them, and brought the recipe back.
            for replica in replicas {
                try await replica.store.setClockOffset(milliseconds: 0)
                _ = try await replica.store.createRecipe(id: UUID(), RecipeDraft(name: "After the fix on \(replica.name)"))
                #expect(try await replica.store.clockRestarts().count == 1, "\(replica.name)")
            }
            try await expectConverged([a, b])
            for replica in replicas {
                await #expect(throws: ServiceError.self, "\(replica.name)") { _ = try await replica.store.recipe(recipe.id) }
                #expect(try await replica.store.heldRecords().isEmpty, "\(replica.name)")
                #expect(try await replica.store.listRecipes(.init(limit: 10)).recipes.count == 2, "\(replica.name)")
            }
        }
    }

    @Test("an edit made on another replica having seen a version written ahead is not beaten by that version's re-dating, stamped later")
    func reDatingDoesNotBeatALaterEdit() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            for replica in replicas { try await replica.store.setClockOffset(milliseconds: 2 * 3_600_000) }
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Draft"))
            _ = try await SyncEngine.pull(from: a, to: b)
            let current = try await b.store.recipe(recipe.id)
            _ = try await b.store.updateRecipe(id: recipe.id, expectedVersion: current.version, RecipeDraft(name: "Final"))
            // Set right, b first: b re-dates its edit, then a re-dates the version b's edit replaced, with a later stamp.
            for replica in [b, a] {
                try await replica.store.setClockOffset(milliseconds: 0)
                _ = try await replica.store.createBook(id: UUID(), title: "After the fix on \(replica.name)", author: nil)
                #expect(try await replica.store.clockRestarts().count == 1, "\(replica.name)")
            }
            try await expectConverged([a, b])
            for replica in replicas {
                #expect(try await replica.store.recipe(recipe.id).name == "Final", "\(replica.name)")
                #expect(try await replica.store.conflicts().isEmpty, "\(replica.name): the edit had seen the version, so nothing conflicts")
            }
        }
    }

    @Test("a replica only read from after its machine's clock was set right (by NTP while it ran): the sync reading its feed restarts its clock, and the other replica takes its records instead of holding them")
    func feedReadRestarts() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            try await a.store.setClockOffset(milliseconds: 2 * 3_600_000)
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Made ahead"))
            try await a.store.setClockOffset(milliseconds: 0)
            let report = try await SyncEngine.pull(from: a, to: b)
            #expect(report.held == 0)
            #expect(try await b.store.heldRecords().isEmpty)
            #expect(try await b.store.recipe(recipe.id).name == "Made ahead")
            #expect(try await a.store.clockRestarts().count == 1)
            try await expectConverged([a, b])
        }
    }

    @Test("a clock restart while the storage runs is told to the service (for its log) once its write is committed, saying why; a write refused as it restarted tells nothing")
    func runtimeRestartIsTold() async throws {
        try await withReplicas(2) { replicas in
            let a = replicas[0]
            let told = Mutex<[(String, String)]>([])
            a.store.onSyncNotice { what, why in told.withLock { $0.append((what, why)) } }
            try await a.store.setClockOffset(milliseconds: 2 * 3_600_000)
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Made ahead"))
            #expect(told.withLock { $0.isEmpty }, "nothing restarted yet")
            try await a.store.setClockOffset(milliseconds: 0)
            // A write refused after the restart ran in its transaction: the restart is undone with it, and not told.
            await #expect(throws: ServiceError.self) {
                _ = try await a.store.updateRecipe(id: recipe.id, expectedVersion: 999, RecipeDraft(name: "Refused"))
            }
            #expect(told.withLock { $0.isEmpty }, "\(told.withLock { $0 })")
            _ = try await a.store.updateRecipe(id: recipe.id, expectedVersion: try await a.store.recipe(recipe.id).version, RecipeDraft(name: "After the fix"))
            let notices = told.withLock { $0 }
            #expect(notices.map(\.0) == ["replica clock restarted"])
            #expect(notices.first?.1.contains("minutes ahead of this machine's") == true, "\(notices)")
            #expect(try await a.store.clockRestarts().count == 1)
            a.store.onSyncNotice(nil)
        }
    }

    @Test("with nothing written after the fix, a restart of the storage restarts the clock; the records written ahead reach the other replica")
    func openRestarts() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rv-clock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let (folderA, folderB) = (root.appendingPathComponent("a"), root.appendingPathComponent("b"))
        var a = LocalReplica(store: try RecipeStore(folder: folderA))
        let b = LocalReplica(store: try RecipeStore(folder: folderB))
        try await a.store.setClockOffset(milliseconds: Self.year)
        let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Made while ahead"))
        try await a.store.setClockOffset(milliseconds: 0)
        try a.store.close()
        a = LocalReplica(store: try RecipeStore(folder: folderA))
        let note = try #require(a.store.clockNote)
        #expect(note.hasPrefix("this replica's clock had run 525") && note.contains("1 record stamped ahead meanwhile was stamped again"), "\(note)")
        _ = try await syncAll([a, b])
        #expect(try await b.store.recipe(recipe.id).name == "Made while ahead")
        #expect(try await b.store.syncInfo().held.isEmpty)
        try await expectSameContent(a, b)
        // Opened again, nothing is left to restart.
        try a.store.close()
        let again = try RecipeStore(folder: folderA)
        #expect(again.clockNote == nil)
        try again.close()
        try b.store.close()
    }

    @Test("a machine clock behind restarts the replica's clock once, re-dating what was stamped past it; one before this release does not restart it: writes stamp on")
    func machineClockBehindOrBefore2026() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            _ = try await b.store.createRecipe(id: UUID(), RecipeDraft(name: "From b"))
            _ = try await syncAll([a, b])
            // a's machine clock goes two hours back: the next write restarts a's clock there, once.
            try await a.store.setClockOffset(milliseconds: -2 * 3_600_000)
            let (made, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Made while behind"))
            _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Made while behind, again"))
            #expect(try await a.store.clockRestarts().count == 1)
            let stamp = try #require(try await a.store.syncRecord(.recipe, id: made.id.uuidString)?.states["name"]?.clock.stamp)
            // Back to 1970: earlier than any machine running this release can rightly show.
            try await a.store.setClockOffset(milliseconds: -Int64(Date().timeIntervalSince1970 * 1_000) + 5_000)
            let (old, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Made in 1970"))
            let oldStamp = try #require(try await a.store.syncRecord(.recipe, id: old.id.uuidString)?.states["name"]?.clock.stamp)
            #expect((Int64(oldStamp.prefix(16)) ?? 0) >= Int64(stamp.prefix(16)) ?? 0, "\(oldStamp)")
            #expect(try await a.store.clockRestarts().count == 1)
            try await a.store.setClockOffset(milliseconds: 0)
            _ = try await syncAll([a, b])
            try await expectConverged([a, b])
            #expect(try await a.store.listRecipes(.init(limit: 10)).recipes.count == 4)
        }
    }

    @Test("two replicas whose machines' clocks were ahead alike, each taking the other's changes, both restart once set right: nothing is held")
    func bothAheadAlike() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            for replica in replicas { try await replica.store.setClockOffset(milliseconds: Self.year) }
            _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "On a"))
            _ = try await b.store.createRecipe(id: UUID(), RecipeDraft(name: "On b"))
            try await syncAll([a, b])
            for replica in replicas { try await replica.store.setClockOffset(milliseconds: 0) }
            try await syncAll([a, b])
            try await expectConverged([a, b])
            for replica in replicas {
                #expect(try await replica.store.heldRecords().isEmpty, "\(replica.name)")
                #expect(try await replica.store.clockRestarts().count == 1, "\(replica.name)")
            }
        }
    }

    /// Found by the convergence property (seed 8114404585922217597): a blob sent ahead of a record that was then held
    /// for its stamp was collected as unused once the hour that keeps such blobs had passed (or the storage restarted);
    /// when the record could apply at last, its sender — restored from a backup — no longer had the blob either, and the
    /// record was held for good, waiting for a photo no replica held.
    @Test("a record held for a stamp ahead keeps the photos it names from collection, across a restart: its sender, restored from a backup without them, cannot send them again, and the re-dated record applies with its photo")
    func heldRecordKeepsItsBlobs() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Soup"))
            _ = try await syncAll([a, b])
            let backup = a.store.folder.deletingLastPathComponent().appendingPathComponent("a-backup")
            _ = try await a.store.backup(to: backup.path)
            try await a.store.setClockOffset(milliseconds: Self.year)
            let bytes = jpegBytes(seed: 41)
            _ = try await a.store.addPhoto(recipeID: recipe.id, bytes: bytes, position: nil)
            let hash = PhotoBlobs.hash(bytes)
            _ = try await SyncEngine.pull(from: a, to: b)
            #expect(try await b.store.syncInfo().held.count == 1, "b holds what a stamped a year ahead")
            #expect(try await b.missingPhotos([hash]).isEmpty, "the blob came ahead of the record")
            // b restarts (what it remembered of blobs sent ahead goes with it) and collects the blobs nothing uses.
            try b.store.close()
            let reopened = LocalReplica(store: try RecipeStore(folder: b.store.folder))
            defer { try? reopened.store.close() }
            await reopened.store.collectUnusedPhotos()
            #expect(try await reopened.missingPhotos([hash]).isEmpty, "the held record keeps its blob")
            // a is restored from its backup: the photo's write and its blob are gone there for good.
            let restored = try Self.restore(a, from: backup)
            defer { try? restored.store.close() }
            _ = try await syncAll([restored, reopened])
            for replica in [restored, reopened] {
                #expect(try await replica.store.recipe(recipe.id).photos.map(\.sha256) == [hash], "\(replica.name)")
                #expect(try await replica.store.syncInfo().held.isEmpty, "\(replica.name)")
            }
            try await expectSameContent(restored, reopened)
        }
    }

    @Test("records written while a clock was ahead and then lost to a restore from an older backup are re-dated by the replicas holding them, through a third, not held until that time comes (seeds 730286858499422610, 896739720408702217)")
    func heldFromAnEndedReplicaIsReDated() async throws {
        try await withReplicas(3) { replicas in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            let (shared, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Shared"))
            _ = try await syncAll([a, b, c])
            let backup = a.store.folder.deletingLastPathComponent().appendingPathComponent("a-backup")
            _ = try await a.store.backup(to: backup.path)
            let oldID = try await a.info().replicaID
            try await a.store.setClockOffset(milliseconds: Self.year)
            let (ahead, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Made a year ahead", ingredients: [.init(text: "1 egg")]))
            let current = try await a.store.recipe(shared.id)
            _ = try await a.store.updateRecipe(id: shared.id, expectedVersion: current.version, RecipeDraft(name: "Shared, edited a year ahead"))
            _ = try await SyncEngine.pull(from: a, to: b)
            #expect(try await b.store.syncInfo().held.count == 2, "b holds what a stamped a year ahead")
            // a is restored from its backup, which has neither write, on a machine whose clock is right: no replica will
            // ever stamp those writes again.
            let restored = try Self.restore(a, from: backup)
            defer { try? restored.store.close() }
            #expect(try await restored.info().retired == [oldID])
            // b hears of it only through c.
            _ = try await syncAll([restored, c])
            #expect(try await c.info().retired == [oldID])
            _ = try await syncAll([c, b])
            let stillHeld = try await b.store.syncInfo().held
            #expect(stillHeld.isEmpty, "\(stillHeld.map(\.reason))")
            _ = try await syncAll([restored, b, c])
            for replica in [restored, b, c] {
                #expect(try await replica.store.recipe(ahead.id).name == "Made a year ahead", "\(replica.name)")
                #expect(try await replica.store.recipe(shared.id).name == "Shared, edited a year ahead", "\(replica.name)")
                #expect(try await replica.store.syncInfo().held.isEmpty, "\(replica.name)")
                // Nothing anywhere is stamped ahead any more.
                let limit = Int64(Date().timeIntervalSince1970 * 1_000) + 3_600_000
                for record in try await replica.store.syncChanges(since: 0, exclude: nil, limit: 1_000).records {
                    #expect(record.clocks.allSatisfy { (Int64($0.stamp.prefix(16)) ?? 0) <= limit }, "\(record.kind) \(record.id): \(record.clocks.map(\.stamp))")
                }
            }
            try await expectSameContent(restored, b)
            try await expectSameContent(b, c)
            #expect(try await syncAll([restored, b, c]) == 0)
            // An edit made since, anywhere, supersedes the re-dated version as any later write would.
            let now = try await c.store.recipe(shared.id)
            _ = try await c.store.updateRecipe(id: shared.id, expectedVersion: now.version, RecipeDraft(name: "Shared, then c"))
            _ = try await syncAll([restored, b, c])
            #expect(try await b.store.recipe(shared.id).name == "Shared, then c")
            #expect(try await b.store.conflicts().isEmpty)
        }
    }

    @Test("a record held from a replica that has ended, which also carries fields a live replica stamped ahead and has since re-dated, applies: those fields are the live replica's re-dated ones (seed 112997393202565900)")
    func heldFromAnEndedReplicaWithAnotherReplicasAheadFields() async throws {
        try await withReplicas(2) { replicas in
            let (a, b) = (replicas[0], replicas[1])
            let backup = b.store.folder.deletingLastPathComponent().appendingPathComponent("b-backup")
            _ = try await b.store.backup(to: backup.path)
            // Both machines a year ahead: a makes a recipe, b takes it and deletes it.
            try await a.store.setClockOffset(milliseconds: Self.year)
            try await b.store.setClockOffset(milliseconds: Self.year)
            let (recipe, _) = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "Made a year ahead"))
            _ = try await SyncEngine.pull(from: a, to: b)
            _ = try await b.store.deleteRecipe(id: recipe.id)
            // a's clock is set right and a writes: it re-dates its recipe. Then b's delete reaches a: held (b's stamp, and
            // a's own original ones, a year ahead).
            try await a.store.setClockOffset(milliseconds: 0)
            _ = try await a.store.createRecipe(id: UUID(), RecipeDraft(name: "After the fix"))
            _ = try await SyncEngine.pull(from: b, to: a)
            #expect(try await a.store.syncInfo().held.map(\.id) == [recipe.id.uuidString])
            // b is restored from its backup (from before it all): its id has ended.
            let restored = try Self.restore(b, from: backup)
            defer { try? restored.store.close() }
            _ = try await syncAll([a, restored])
            for replica in [a, restored] {
                let held = try await replica.store.syncInfo().held
                #expect(held.isEmpty, "\(replica.name): \(held.map(\.reason))")
                #expect(try await replica.store.listRecipes(.init(limit: 10)).recipes.map(\.name) == ["After the fix"], "b's delete had seen the recipe")
            }
            try await expectSameContent(a, restored)
        }
    }

    @Test("sync.retire takes replica ids only, at most 1000, never this replica's own, and the same ids again change nothing")
    func retireChecksWhatItTakes() async throws {
        try await withReplicas(1) { replicas in
            let store = replicas[0].store
            await #expect(throws: ServiceError(.invalidArgument, "\"a b\" is not a replica id (1 to 64 letters, digits and dashes)")) {
                _ = try await store.retireReplicas(["0a1b2c3d4e5f", "a b"])
            }
            await #expect(throws: ServiceError(.invalidArgument, "the request names 1001 replica ids; at most 1000 at a time")) {
                _ = try await store.retireReplicas(Array(repeating: "0a1b2c3d4e5f", count: 1_001))
            }
            #expect(try await store.syncInfo().retired.isEmpty, "a refused request retires nothing")
            let own = try await replicas[0].info().replicaID
            _ = try await store.retireReplicas([own, "0a1b2c3d4e5f", "0a1b2c3d4e5f"])
            #expect(try await store.syncInfo().retired == ["0a1b2c3d4e5f"])
            #expect(try await store.retireReplicas(["0a1b2c3d4e5f"]) == .init(changed: 0, conflicts: 0, held: 0))
            // A write still stamps under this replica's own id.
            _ = try await store.createRecipe(id: UUID(), RecipeDraft(name: "Still mine"))
            #expect(try await replicas[0].info().replicaID == own)
        }
    }
}
