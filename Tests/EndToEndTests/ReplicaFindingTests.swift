import Foundation
import GRDB
import Messaging
import RecipeModel
import RecipeProtocol
import ReplicaSync
import TestScratch
import Testing

/// Each way replicas were once seen to stall, diverge or resurrect, replayed with storages and a worker
/// as processes and every change typed through the CLI (docs/SYNC.md, "Invariants"). The worker syncs
/// only on `recipes sync`, so each scenario decides what every replica has seen.
@Suite("Replica sync findings, through storage and worker processes", .serialized)
struct ReplicaFindingTests {
    func withRig(_ count: Int, _ body: (ReplicaRig) async throws -> Void) async throws {
        let rig = try await ReplicaRig(count)
        do {
            try await body(rig)
        } catch {
            await rig.shutdown()
            throw error
        }
        await rig.shutdown()
    }

    func recipe(_ rig: ReplicaRig, _ node: Int, _ name: String) async throws -> Recipe {
        try await rig.json(RecipeDetail.self, node, ["show", name]).recipe
    }

    func names(_ rig: ReplicaRig, _ node: Int) async throws -> [String] {
        try await rig.json(RecipePage.self, node, ["list", "--limit", "200"]).recipes.map(\.name).sorted()
    }

    func conflicts(_ rig: ReplicaRig, _ node: Int) async throws -> [SyncConflict] {
        try await rig.json(ConflictOps.List.Response.self, node, ["conflicts"]).conflicts
    }

    // MARK: 1. A deleted photo never stops a feed

    @Test("a recipe given a photo and deleted before any sync: the feed moves on, later edits leave, and a new replica joins")
    func deletedPhotoNeverStalls() async throws {
        try await withRig(2) { rig in
            try await rig.cli(0, ["add", "--name", "Gone soon", "--ingredient", "1 egg"])
            try await rig.cli(0, ["photo", "add", "Gone soon", try rig.photoFile(seed: 1)])
            try await rig.cli(0, ["delete", "Gone soon", "--yes"])
            try await rig.syncUntilQuiet()
            try await rig.cli(0, ["add", "--name", "Later", "--ingredient", "2 eggs"])
            // The rig's worker runs with --sync-on-request: a change notice alone moves nothing.
            try await Task.sleep(for: .milliseconds(1_500))
            #expect(try await names(rig, 1).isEmpty)
            #expect(try await rig.cli(0, ["sync", "status"]).contains("Synced only when asked"))
            try await rig.syncUntilQuiet()
            #expect(try await names(rig, 1) == ["Later"])
            // A replica that was never there joins and gets everything.
            rig.nodes.append(try StorageNode())
            try await rig.nodes[2].start()
            try await rig.startWorker()
            try await rig.syncUntilQuiet()
            #expect(try await names(rig, 2) == ["Later"])
            let status = try await rig.json(WorkerSyncOps.Status.Response.self, 0, ["sync", "status"])
            #expect(status.pairs.allSatisfy { ($0.held ?? []).isEmpty && $0.pendingToReplica == 0 && $0.pendingToStorage == 0 }, "\(status)")
            try await rig.expectSameExports()
        }
    }

    @Test("an empty replica joins by a snapshot over the wire: the same recipes and photo, its own id, then edits flow both ways")
    func snapshotOverTheWire() async throws {
        try await withRig(2) { rig in
            try await rig.cli(0, ["add", "--name", "Soup", "--ingredient", "1 l water"])
            try await rig.cli(0, ["photo", "add", "Soup", try rig.photoFile(seed: 7)])
            try await rig.cli(0, ["add", "--name", "Bread", "--ingredient", "500 g flour"])
            let before = try await rig.remote(1).info()
            #expect(before.empty == true)
            let report = try await SyncEngine.pull(from: try rig.remote(0), to: try rig.remote(1), snapshotAbove: 0)
            let after = try await rig.remote(1).info()
            #expect(report.photos == 1 && after.replicaID == before.replicaID && after.empty == false, "\(report) \(after)")
            #expect(try await names(rig, 1) == ["Bread", "Soup"])
            try await rig.cli(1, ["edit", "Bread", "--notes", "from the new one"])
            try await rig.cli(0, ["edit", "Soup", "--notes", "from the first"])
            try await rig.syncUntilQuiet()
            #expect(try await recipe(rig, 0, "Bread").notes == "from the new one")
            #expect(try await recipe(rig, 1, "Soup").notes == "from the first")
            try await rig.expectSameExports()
        }
    }

    @Test("a replica that edited a recipe while another gave it a photo and deleted it brings it back without that photo")
    func resurrectionNamesNoCollectedBlob() async throws {
        try await withRig(2) { rig in
            try await rig.cli(0, ["add", "--name", "Shared", "--ingredient", "1 egg"])
            try await rig.cli(0, ["photo", "add", "Shared", try rig.photoFile(seed: 2)])
            try await rig.syncUntilQuiet()
            try await rig.cli(0, ["photo", "add", "Shared", try rig.photoFile(seed: 3)])
            try await rig.cli(0, ["delete", "Shared", "--yes"])
            try await rig.cli(1, ["edit", "Shared", "--notes", "edited offline"])
            try await rig.syncUntilQuiet()
            let back = try await recipe(rig, 0, "Shared")
            #expect(back.notes == "edited offline")
            #expect(back.photos.isEmpty, "the delete removed the photos; only the notes edit was unseen by it")
            try await rig.expectSameExports()
        }
    }

    // MARK: 2. Only a user's delete deletes, only a user's edit resurrects

    @Test("a book and a recipe in it deleted on two replicas, a recipe and its cook-log entry too: nothing comes back, links survive an edit")
    func racingDeletesStayDeleted() async throws {
        try await withRig(2) { rig in
            try await rig.cli(0, ["books", "add", "Book"])
            try await rig.cli(0, ["add", "--name", "In the book", "--ingredient", "1 egg", "--book", "Book"])
            try await rig.cli(0, ["add", "--name", "Cooked", "--ingredient", "1 egg"])
            try await rig.cli(0, ["cooked", "Cooked", "--rating", "4"])
            try await rig.cli(0, ["add", "--name", "Loved", "--ingredient", "1 egg"])
            try await rig.cli(0, ["cooked", "Loved", "--rating", "5"])
            try await rig.cli(0, ["edit", "Cooked", "--book", "book"])
            #expect(try await recipe(rig, 0, "Cooked").bookID == recipe(rig, 0, "In the book").bookID)
            try await rig.cli(0, ["edit", "Cooked", "--book", ""])
            #expect(try await recipe(rig, 0, "Cooked").bookID == nil)
            try await rig.syncUntilQuiet()
            #expect(try await recipe(rig, 1, "In the book").bookID != nil)

            try await rig.cli(0, ["books", "delete", "Book"])
            try await rig.cli(1, ["delete", "In the book", "--yes"])
            let cookedID = try await recipe(rig, 1, "Cooked").id
            try await rig.cli(0, ["delete", "Cooked", "--yes"])
            let entry = try #require(try await rig.json(CookLogOps.List.Response.self, 1, ["log"]).entries.first { $0.recipeID == cookedID })
            try await rig.cli(1, ["log", "--delete", entry.id.uuidString])
            let loved = try await recipe(rig, 0, "Loved").id
            try await rig.cli(0, ["delete", "Loved", "--yes"])
            try await rig.cli(1, ["edit", "Loved", "--name", "Loved still"])
            try await rig.syncUntilQuiet()

            for node in 0..<2 {
                #expect(try await names(rig, node) == ["Loved still"], "node \(node)")
                let log = try await rig.json(CookLogOps.List.Response.self, node, ["log"]).entries
                #expect(log.map(\.recipeID) == [loved], "node \(node): the deleted entry stays deleted, the edited recipe keeps its entry")
            }
            #expect(try await conflicts(rig, 0).isEmpty)
            try await rig.expectSameExports()
        }
    }

    // MARK: 3. Restores, copies and one id on two storages

    @Test("a replica restored from recipes backup converges, keeps what its peers had and what it wrote after the restore")
    func restoreFromBackup() async throws {
        try await withRig(2) { rig in
            try await rig.cli(0, ["add", "--name", "Before the backup", "--ingredient", "1 egg"])
            try await rig.cli(0, ["photo", "add", "Before the backup", try rig.photoFile(seed: 4)])
            let backup = rig.scratch.appendingPathComponent("backup").path
            let made = try await rig.cli(0, ["backup", backup])
            #expect(made.contains("1 recipe") || made.contains("recipes"), "\(made)")
            try await rig.cli(0, ["add", "--name", "After the backup", "--ingredient", "1 egg"])
            try await rig.cli(0, ["edit", "Before the backup", "--notes", "edited after the backup"])
            try await rig.syncUntilQuiet()

            let node = rig.nodes[0]
            try await node.stop()
            try FileManager.default.removeItem(atPath: node.folder)
            try FileManager.default.copyItem(atPath: backup, toPath: node.folder)
            try await node.start()
            #expect(node.process?.printed.contains("new replica incarnation") == true, "\(node.process?.printed ?? "")")
            try await rig.cli(0, ["add", "--name", "After the restore", "--ingredient", "1 egg"])
            try await rig.syncUntilQuiet()
            for index in 0..<2 {
                #expect(try await names(rig, index) == ["After the backup", "After the restore", "Before the backup"], "node \(index)")
                #expect(try await recipe(rig, index, "Before the backup").notes == "edited after the backup", "node \(index)")
                #expect(try await recipe(rig, index, "Before the backup").photos.count == 1, "node \(index)")
            }
            try await rig.expectSameExports()
        }
    }

    /// `node` stopped, its folder put back as `older` the way a snapshot rolled back would be (file identity and write
    /// mark kept), and started again: its start does not notice.
    func rolledBack(_ node: StorageNode, to older: String) async throws -> StorageNode {
        try await node.stop()
        try FileManager.default.removeItem(atPath: node.folder)
        try FileManager.default.copyItem(atPath: older, toPath: node.folder)
        try await Self.keepFileIdentity(node.folder)
        try await node.start()
        #expect(node.process?.printed.contains("new replica incarnation") == false, "\(node.process?.printed ?? "")")
        return node
    }

    /// "Before the copy" added on node `index` and synced; the stopped node's data folder copied aside (returned);
    /// then "After the copy" added there (or on node `writer`) and synced. The node runs.
    func copiedAsideThenAdvanced(_ rig: ReplicaRig, _ index: Int, by writer: Int? = nil) async throws -> String {
        try await rig.cli(index, ["add", "--name", "Before the copy", "--ingredient", "1 egg"])
        try await rig.syncUntilQuiet()
        let node = rig.nodes[index]
        try await node.stop()
        // A stopped storage's database is the one file: no log beside it.
        #expect(!FileManager.default.fileExists(atPath: node.folder + "/Recipes.sqlite-wal"))
        let copy = rig.scratch.appendingPathComponent("copy").path
        try FileManager.default.copyItem(atPath: node.folder, toPath: copy)
        try await node.start()
        try await rig.cli(writer ?? index, ["add", "--name", "After the copy", "--ingredient", "1 egg"])
        try await rig.syncUntilQuiet()
        return copy
    }

    @Test("a replica put back from an older copy of its data folder, then edited before any sync, converges")
    func restoreFromOlderFolderCopy() async throws {
        try await withRig(2) { rig in
            let copy = try await copiedAsideThenAdvanced(rig, 1)
            let node = rig.nodes[1]
            try await node.stop()
            try FileManager.default.removeItem(atPath: node.folder)
            try FileManager.default.moveItem(atPath: copy, toPath: node.folder)
            try await node.start()
            try await rig.cli(1, ["edit", "Before the copy", "--notes", "edited after the restore"])
            try await rig.syncUntilQuiet()
            for index in 0..<2 {
                #expect(try await names(rig, index) == ["After the copy", "Before the copy"], "node \(index)")
                #expect(try await recipe(rig, index, "Before the copy").notes == "edited after the restore", "node \(index)")
            }
            try await rig.expectSameExports()
        }
    }

    /// Makes the database copied into `folder` look like the file it was copied from, as a file system or machine
    /// snapshot rolled back would (the file's identity, and the write mark's time of it): its open cannot tell.
    static func keepFileIdentity(_ folder: String) async throws {
        let database = folder + "/Recipes.sqlite"
        var info = stat()
        #expect(stat(database, &info) == 0)
        let identity = "\(info.st_dev):\(info.st_ino)"
        let queue = try DatabaseQueue(path: database)
        try await queue.write { db in
            try db.execute(sql: "UPDATE sync_state SET value = ? WHERE key = 'file'", arguments: [identity])
        }
        try queue.close()
        // The write mark beside it holds the file's time as it is now, as it would after a machine's snapshot.
        let mark = folder + "/Recipes.sqlite-lastwrite"
        let parts = try String(contentsOfFile: mark, encoding: .utf8).split(whereSeparator: \.isWhitespace)
        #expect(parts.count == 3 && stat(database, &info) == 0)
        let time = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        try Data("\(parts[0]) \(parts[1]) \(time)\n".utf8).write(to: URL(fileURLWithPath: mark))
    }

    @Test("a storage restored from an older copy that kept the file's identity, whose lost write the other replica edited: the sync finds it out, and the running storage says so in its log")
    func restoreFoundWhileRunningIsLogged() async throws {
        try await withRig(2) { rig in
            let older = try await copiedAsideThenAdvanced(rig, 0)
            let node = rig.nodes[0]
            try await rig.cli(1, ["edit", "After the copy", "--notes", "edited on the other replica"])
            // The older copy goes back in place, looking like the file it replaced: the open cannot tell.
            _ = try await rolledBack(node, to: older)
            // The peer's edit names a write of this replica that the copy lacks: the sync finds it out while the storage runs.
            try await rig.syncUntilQuiet()
            let printed = node.process?.printed ?? ""
            // Told by the peer's newest write of it (`SyncSeen`), or by the edit's version, whichever the sync meets first.
            #expect(printed.contains("new replica incarnation")
                    && (printed.contains("rolled back with its data folder") || printed.contains("restored from an older copy")), "\(printed)")
            for index in 0..<2 {
                #expect(try await names(rig, index) == ["After the copy", "Before the copy"], "node \(index)")
            }
            try await rig.expectSameExports()
        }
    }

    /// What goes back over a stopped storage's data folder in place.
    enum InPlaceCopy: String, CaseIterable, Sendable {
        /// Its database file alone (`cp copy/Recipes.sqlite data/`).
        case databaseFile
        /// Every file of a copy of the whole folder (`cp -a copy/. data/`), the write mark with it.
        case wholeFolder
    }

    @Test("a stopped storage's database file, or its whole data folder, copied aside and later copied back over it in place (cp keeps each file): the storage says at start it was put back, and after a write and a sync both replicas hold every recipe",
          arguments: InPlaceCopy.allCases)
    func olderCopyBackInPlace(_ copy: InPlaceCopy) async throws {
        try await withRig(2) { rig in
            let older = try await copiedAsideThenAdvanced(rig, 0)
            let node = rig.nodes[0]
            try await node.stop()
            let files = copy == .databaseFile ? ["Recipes.sqlite"]
                : try FileManager.default.contentsOfDirectory(atPath: older).filter { !$0.hasPrefix("photos") }
            for name in files {
                guard let handle = FileHandle(forWritingAtPath: node.folder + "/" + name) else { continue }
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: try Data(contentsOf: URL(fileURLWithPath: older + "/" + name)))
                try handle.close()
            }
            try await node.start()
            let printed = node.process?.printed ?? ""
            #expect(printed.contains("new replica incarnation"), "\(printed)")
            #expect(printed.contains(copy == .databaseFile ? "put back from an older copy" : "changed while the storage was stopped"), "\(printed)")
            // A write before any sync: under the old id it would reuse the number of the lost one the other replica holds.
            try await rig.cli(0, ["add", "--name", "After the restore", "--ingredient", "1 egg"])
            try await rig.syncUntilQuiet()
            for index in 0..<2 {
                #expect(try await names(rig, index) == ["After the copy", "After the restore", "Before the copy"], "node \(index)")
            }
            try await rig.expectSameExports()
        }
    }

    @Test("a storage rolled back with its whole folder as a snapshot would (its start cannot tell), no other replica having written on its lost write, which writes before it syncs: the sync finds it out from its peer's newest write of it, and both end alike")
    func snapshotRollbackConverges() async throws {
        try await withRig(2) { rig in
            let older = try await copiedAsideThenAdvanced(rig, 0)
            let node = try await rolledBack(rig.nodes[0], to: older)
            // Two writes where it lost one: the first reuses the lost write's number, the second goes past it.
            try await rig.cli(0, ["add", "--name", "After the restore", "--ingredient", "1 egg"])
            try await rig.cli(0, ["add", "--name", "After the restore, again", "--ingredient", "1 egg"])
            try await rig.syncUntilQuiet()
            let printed = node.process?.printed ?? ""
            #expect(printed.contains("new replica incarnation") && printed.contains("rolled back with its data folder"), "\(printed)")
            let worker = rig.worker?.printed ?? ""
            #expect(worker.contains("replica sync started again"), "the worker's log says why a pull started again: \(worker)")
            for index in 0..<2 {
                #expect(try await names(rig, index) == ["After the copy", "After the restore", "After the restore, again", "Before the copy"], "node \(index)")
            }
            try await rig.expectSameExports()
        }
    }

    @Test("a storage rolled back with its whole folder as a snapshot would, after it took its peer's change and its peer read its feed past that (no write of its own lost): its next change takes that feed position again, and the worker's next read tells it by what the peer kept with its cursor; it takes a new incarnation and both replicas end with every recipe")
    func snapshotRollbackFeedPositionsConverge() async throws {
        try await withRig(2) { rig in
            let older = try await copiedAsideThenAdvanced(rig, 0, by: 1)
            let node = try await rolledBack(rig.nodes[0], to: older)
            try await rig.cli(0, ["add", "--name", "After the restore", "--ingredient", "1 egg"])
            try await rig.syncUntilQuiet()
            let printed = node.process?.printed ?? ""
            #expect(printed.contains("new replica incarnation") && printed.contains("its feed positions were given twice"), "\(printed)")
            // The worker's pull started again for it, and its log says why.
            let worker = rig.worker?.printed ?? ""
            #expect(worker.contains("replica sync started again") && worker.contains("took a new incarnation"), "\(worker)")
            for index in 0..<2 {
                #expect(try await names(rig, index) == ["After the copy", "After the restore", "Before the copy"], "node \(index)")
            }
            try await rig.expectSameExports()
        }
    }

    @Test("two storages on copies of one database that did not notice the copy: the worker refuses both pairs and names them")
    func oneReplicaIDTwice() async throws {
        try await withRig(2) { rig in
            try await rig.cli(1, ["add", "--name", "Twin", "--ingredient", "1 egg"])
            let original = rig.nodes[1]
            try await original.stop()
            let twin = try StorageNode()
            try FileManager.default.copyItem(atPath: original.folder, toPath: twin.folder)
            try await Self.keepFileIdentity(twin.folder)
            try await original.start()
            try await twin.start()
            #expect(twin.process?.printed.contains("new replica incarnation") == false)
            rig.nodes.append(twin)
            try await rig.startWorker()
            let run = try await recipes(["sync", "--worker", rig.workerEndpoint], storage: rig.nodes[0].endpoint)
            #expect(run.status != 0, "\(run.output)")
            #expect(run.output.contains("both call themselves replica"), "\(run.output)")
            #expect(run.output.contains(original.endpoint) && run.output.contains(twin.endpoint), "\(run.output)")
            // Once the twin is restarted from a copy made while it was stopped, it is a replica of its own and everything syncs.
            try await twin.stop()
            let fresh = Scratch.path("rv-data")
            try FileManager.default.copyItem(atPath: twin.folder, toPath: fresh)
            twin.folder = fresh
            try await twin.start()
            #expect(twin.process?.printed.contains("new replica incarnation") == true)
            try await rig.syncUntilQuiet()
            try await rig.expectSameExports()
        }
    }

    // MARK: 4. Conflicts everyone can see

    @Test("a book renamed on two replicas: both list the same conflict, resolve takes the kept title everywhere")
    func visibleBookConflict() async throws {
        try await withRig(2) { rig in
            try await rig.cli(0, ["books", "add", "Bread"])
            try await rig.syncUntilQuiet()
            try await rig.cli(0, ["books", "rename", "Bread", "Breads"])
            try await rig.cli(1, ["books", "rename", "Bread", "Loaves"])
            try await rig.syncUntilQuiet()
            let listed = try await conflicts(rig, 0)
            #expect(listed.count == 1 && listed.first?.kind == .book, "\(listed)")
            #expect(try await conflicts(rig, 1) == listed)
            let conflict = try #require(listed.first)
            let kept = try #require(conflict.lostValues?["title"]?.string)
            // The table shows the short id, as for recipes and books, and resolve takes it.
            let short = try #require(UUID(uuidString: conflict.id)).shortText
            let table = try await rig.cli(1, ["conflicts"])
            #expect(table.contains(short) && !table.contains(conflict.id) && table.contains(kept), "\(table)")
            let resolved = try await rig.cli(1, ["conflicts", "resolve", short])
            #expect(resolved.contains("Resolved: title of book") && resolved.contains("now holds the kept values"), "\(resolved)")
            try await rig.syncUntilQuiet()
            for node in 0..<2 {
                #expect(try await conflicts(rig, node).isEmpty, "node \(node)")
                #expect(try await rig.cli(node, ["books"]).contains(kept), "node \(node)")
            }
            try await rig.expectSameExports()
        }
    }

    @Test("a recipe's notes changed on two replicas: one conflicted copy listed everywhere, dismiss removes it everywhere")
    func visibleRecipeConflict() async throws {
        try await withRig(2) { rig in
            try await rig.cli(0, ["add", "--name", "Soup", "--ingredient", "1 l water"])
            try await rig.syncUntilQuiet()
            try await rig.cli(0, ["edit", "Soup", "--notes", "less salt"])
            try await rig.cli(1, ["edit", "Soup", "--notes", "more salt"])
            try await rig.syncUntilQuiet()
            let listed = try await conflicts(rig, 0)
            #expect(listed.count == 1 && listed.first?.fields == ["notes"] && listed.first?.copyID != nil, "\(listed)")
            #expect(try await conflicts(rig, 1) == listed)
            let conflict = try #require(listed.first)
            let dismissed = try await rig.cli(0, ["conflicts", "dismiss", conflict.id])
            #expect(dismissed.contains("Dismissed"), "\(dismissed)")
            // Dismissing again is a clear error, not a crash.
            let again = try await recipes(["conflicts", "dismiss", conflict.id], storage: rig.nodes[0].endpoint)
            #expect(again.status != 0 && again.output.contains(conflict.id), "\(again.output)")
            try await rig.syncUntilQuiet()
            for node in 0..<2 {
                #expect(try await conflicts(rig, node).isEmpty, "node \(node)")
                #expect(try await names(rig, node) == ["Soup"], "node \(node)")
            }
            try await rig.expectSameExports()
        }
    }

    // MARK: 5. No copy of a value its own replica replaced

    @Test("same-field edits, half a sync, then a re-edit: one conflicted copy, never the re-editor's own replaced value")
    func noCopyOfOwnReplacedValue() async throws {
        try await withRig(2) { rig in
            try await rig.cli(0, ["add", "--name", "Soup", "--ingredient", "1 l water", "--notes", "base"])
            try await rig.syncUntilQuiet()
            try await rig.cli(1, ["edit", "Soup", "--notes", "first"])
            try await rig.cli(0, ["edit", "Soup", "--notes", "second"])
            // Half a sync: node 1's edit reaches node 0 (which merges and keeps a copy), nothing goes back.
            _ = try await SyncEngine.pull(from: try rig.remote(1), to: try rig.remote(0))
            try await rig.cli(1, ["edit", "Soup", "--notes", "b again"])
            try await rig.syncUntilQuiet()
            let listed = try await conflicts(rig, 0)
            #expect(listed.count == 1, "\(listed)")
            for conflict in listed {
                let copy = try await rig.json(RecipeDetail.self, 0, ["show", try #require(conflict.copyID)]).recipe
                #expect(copy.notes != "first", "node 1's own replaced value is kept nowhere")
            }
            #expect(try await conflicts(rig, 1) == listed)
            try await rig.expectSameExports()
        }
    }

    // MARK: 6. Clocks

    @Test("a record stamped in 2100 is held and named in sync status until its sender's next version, its page still applies, the receiver's clock stays put")
    func futureStampIsHeld() async throws {
        try await withRig(2) { rig in
            try await rig.cli(0, ["add", "--name", "From the future", "--ingredient", "1 egg"])
            try await rig.cli(0, ["add", "--name", "From now", "--ingredient", "1 egg"])
            let future = try await recipe(rig, 0, "From the future").id.uuidString
            let (source, target) = (try rig.remote(0), try rig.remote(1))
            let sourceID = try await source.info().replicaID
            var page = try await source.changes(since: 0, exclude: nil, limit: 100)
            for index in page.records.indices where page.records[index].id == future {
                page.records[index].clocks = page.records[index].clocks.map { SyncClock(vv: $0.vv, stamp: "4102444800000.000000000.\(sourceID)") }
            }
            let applied = try await target.apply(from: sourceID, records: page.records, cursor: page.next)
            #expect(applied.held == 1)
            #expect(try await names(rig, 1) == ["From now"])

            let status = try await rig.cli(0, ["sync", "status"])
            #expect(status.contains("Held back") && status.contains(future) && status.contains("ahead"), "\(status)")
            let held = try await rig.json(WorkerSyncOps.Status.Response.self, 0, ["sync", "status"]).pairs.flatMap { $0.held ?? [] }
            #expect(held.map(\.id) == [future])

            try await rig.cli(1, ["add", "--name", "Mine", "--ingredient", "1 egg"])
            let mine = try await recipe(rig, 1, "Mine").id.uuidString
            let stamp = try #require(try await target.changes(since: 0, exclude: nil, limit: 100).records.first { $0.id == mine }?.clocks.first?.stamp)
            #expect(StampOrder.precedes(stamp, "2000000000000.0.x"), "the receiver's clock was moved: \(stamp)")
            // Syncing does not adopt it: it stays held (its time has not come) and named.
            try await rig.syncUntilQuiet()
            #expect(try await rig.json(WorkerSyncOps.Status.Response.self, 0, ["sync", "status"]).pairs.flatMap { $0.held ?? [] }.map(\.id) == [future])
            // The sender's next version of it (its clock put right) replaces the held one: nothing stays held, both converge.
            try await rig.cli(0, ["edit", "From the future", "--notes", "clock fixed"])
            try await rig.syncUntilQuiet()
            #expect(try await rig.json(WorkerSyncOps.Status.Response.self, 0, ["sync", "status"]).pairs.allSatisfy { ($0.held ?? []).isEmpty })
            #expect(try await recipe(rig, 1, "From the future").notes == "clock fixed")
            try await rig.expectSameExports()
        }
    }

    @Test("a storage whose machine clock runs a year ahead, then is set right while it runs: what it wrote meanwhile is held elsewhere until its next write, which restarts its clock; then every replica has everything and nothing is held")
    func clockSetRightWhileRunning() async throws {
        try await withRig(2) { rig in
            try await rig.cli(0, ["add", "--name", "Shared", "--ingredient", "1 egg"])
            try await rig.syncUntilQuiet()
            // The machine's clock, as the storage reads it (the same file, from beside it: a running storage reads it at each write).
            func setClock(aheadBy milliseconds: Int64) throws {
                let database = try DatabaseQueue(path: rig.nodes[0].folder + "/Recipes.sqlite", configuration: {
                    var configuration = Configuration()
                    configuration.busyMode = .timeout(10)
                    return configuration
                }())
                try database.write { db in
                    try db.execute(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('clockOffset', ?)", arguments: [String(milliseconds)])
                }
                try database.close()
            }
            try setClock(aheadBy: 365 * 86_400_000)
            try await rig.cli(0, ["add", "--name", "Made while ahead", "--ingredient", "2 eggs"])
            try await rig.cli(0, ["edit", "Shared", "--notes", "edited while ahead"])
            _ = try await recipes(["sync", "--json", "--worker", rig.workerEndpoint], storage: rig.nodes[0].endpoint)
            let held = try await rig.json(WorkerSyncOps.Status.Response.self, 0, ["sync", "status"]).pairs.flatMap { $0.held ?? [] }
            #expect(held.count == 2 && held.allSatisfy { $0.reason.contains("minutes ahead of this replica's clock") }, "\(held)")
            #expect(try await names(rig, 1) == ["Shared"])

            try setClock(aheadBy: 0)
            try await rig.cli(0, ["add", "--name", "Made after the fix", "--ingredient", "3 eggs"])
            try await rig.syncUntilQuiet()
            #expect(try await names(rig, 1) == ["Made after the fix", "Made while ahead", "Shared"])
            #expect(try await recipe(rig, 1, "Shared").notes == "edited while ahead")
            #expect(try await rig.json(WorkerSyncOps.Status.Response.self, 0, ["sync", "status"]).pairs.allSatisfy { ($0.held ?? []).isEmpty })
            try await rig.expectSameExports()
        }
    }

    // MARK: 7. Sets

    @Test("a photo and a keyword added on each replica at once: the recipe has both of each and no conflicted copy; a removal holds over an add it never saw")
    func photoAndKeywordSets() async throws {
        try await withRig(2) { rig in
            try await rig.cli(0, ["add", "--name", "Pictured", "--ingredient", "1 egg", "--keyword", "easy"])
            try await rig.syncUntilQuiet()
            try await rig.cli(0, ["photo", "add", "Pictured", try rig.photoFile(seed: 20)])
            try await rig.cli(1, ["photo", "add", "Pictured", try rig.photoFile(seed: 21)])
            try await rig.cli(0, ["edit", "Pictured", "--keyword", "easy", "--keyword", "weeknight"])
            try await rig.cli(1, ["edit", "Pictured", "--keyword", "easy", "--keyword", "party"])
            try await rig.syncUntilQuiet()
            let merged = try await recipe(rig, 0, "Pictured")
            #expect(merged.photos.count == 2)
            #expect(Set(merged.keywords) == ["easy", "weeknight", "party"])
            #expect(try await conflicts(rig, 0).isEmpty)

            try await rig.cli(0, ["photo", "remove", "Pictured", "1"])
            try await rig.cli(1, ["photo", "add", "Pictured", try rig.photoFile(seed: 22)])
            try await rig.syncUntilQuiet()
            let after = try await recipe(rig, 1, "Pictured").photos.map(\.sha256)
            #expect(after.count == 2 && !after.contains(merged.photos[0].sha256), "\(after)")
            try await rig.expectSameExports()
        }
    }
}
