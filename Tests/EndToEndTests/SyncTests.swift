import Foundation
import Logging
import Messaging
import RecipeModel
import RecipeProtocol
import TestImages
import Testing
import Synchronization

/// A recipe-storage process on ephemeral ports with its own data folder.
func startStorage(samples: Bool = true, folder: String = temporaryDataFolder()) async throws -> (process: ServiceProcess, endpoint: String) {
    let process = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*",
                                                         "--data", folder] + (samples ? ["--seed-samples"] : []))
    return (process, try await process.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#))
}

/// Polls `condition` every 100 ms for at most `seconds`.
func eventually(within seconds: Double, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1_000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(100))
    }
    return try await condition()
}

@Suite("Replica sync end to end: storages and a worker as processes, driven by the CLI", .serialized)
struct SyncEndToEndTests {
    @Test("an edit on one storage shows on the other through the CLI; a replica that is down does not stop the rest")
    func editOnOneSeenOnOther() async throws {
        let (home, homeEndpoint) = try await startStorage()
        let (laptop, laptopEndpoint) = try await startStorage()
        let (tablet, tabletEndpoint) = try await startStorage()
        // An hour between timed syncs: what moves within seconds moved because of a change notice.
        let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", homeEndpoint,
                                                          "--replica", laptopEndpoint, "--replica", tabletEndpoint, "--sync-interval", "3600"])
        let workerEndpoint = try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)
        let cli = ["--worker", workerEndpoint]

        let added = try await recipes(["add", "--name", "Lentil Soup", "--ingredient", "200 g red lentils", "--servings", "4"], storage: homeEndpoint)
        #expect(added.status == 0, "\(added.output)")
        for endpoint in [laptopEndpoint, tabletEndpoint] {
            var listed = ""
            let arrived = try await eventually(within: 15) {
                listed = try await recipes(["list"], storage: endpoint).output
                return listed.contains("Lentil Soup")
            }
            #expect(arrived, "the new recipe did not reach \(endpoint): \(listed)\nthe worker printed:\n\(worker.printed)")
        }

        // Back the other way: a change made on the laptop reaches home.
        #expect(try await recipes(["rate", "Lentil Soup", "4"], storage: laptopEndpoint).status == 0)
        let rated = try await eventually(within: 15) { try await details("Lentil Soup", homeEndpoint).recipe.rating == 4 }
        #expect(rated, "the rating made on the laptop did not reach home")

        let now = try await recipes(["sync"] + cli, storage: homeEndpoint)
        #expect(now.status == 0 && now.output.contains("already in step"), "\(now.output)")
        // A record the laptop will not take (a third replica's, its name past the limit): in step but for it, and said so.
        let stranger = try StrangerSocket(laptopEndpoint)
        let bad = syncRecord(kind: "recipe", id: UUID().uuidString, fields: ["name": String(repeating: "n", count: 500)])
        #expect(((try await stranger.request("sync.apply", ["from": "peer1", "records": [bad], "rules": SyncRules.current]))?["body"] as? [String: Any])?["held"] as? Int == 1)
        let held = try await recipes(["sync"] + cli, storage: homeEndpoint)
        #expect(held.status == 0 && held.output.contains("⇄ \(laptopEndpoint): already in step; 1 record held back at \(laptopEndpoint) (recipes sync status says why)"),
                "\(held.output)")
        #expect(held.output.contains("⇄ \(tabletEndpoint): already in step\n"), "\(held.output)")
        let status = try await recipes(["sync", "status", "--json"] + cli, storage: homeEndpoint)
        let reply = try WireCodec.makeDecoder().decode(WorkerSyncOps.Status.Response.self, from: Data(status.output.utf8))
        #expect(reply.pairs.count == 2)
        #expect(reply.pairs.allSatisfy { $0.reachable && $0.pendingToReplica == 0 && $0.pendingToStorage == 0 && $0.lastSyncAt != nil })

        // The tablet goes away: the laptop still gets changes, and `sync` names the one it could not reach.
        _ = try await tablet.stop()
        #expect(try await recipes(["favorite", "Lentil Soup"], storage: homeEndpoint).status == 0)
        let favourite = try await eventually(within: 20) { try await details("Lentil Soup", laptopEndpoint).recipe.isFavorite }
        #expect(favourite, "with the tablet down the laptop stopped getting changes")
        let partial = try await recipes(["sync", "--sync-timeout", "120"] + cli, storage: homeEndpoint)
        #expect(partial.status == 69, "\(partial.output)")
        #expect(partial.output.contains("\(tabletEndpoint): not synced"), "\(partial.output)")
        let after = try await recipes(["sync", "status"] + cli, storage: homeEndpoint)
        #expect(after.output.contains("unreachable"), "\(after.output)")
        #expect(after.output.contains("a replica whose last sync failed is tried again within 60 s (recipes sync tries it now)"), "\(after.output)")

        _ = try await worker.stop()
        _ = try await laptop.stop()
        _ = try await home.stop()
    }

    @Test("a replica of an older release (its sync.info says no sync rules) is not synced with: recipes sync and sync status say why and which to upgrade; nothing reaches either side")
    func olderReleaseReplicaRefused() async throws {
        let (home, homeEndpoint) = try await startStorage()
        // What a recipe-storage of a release before sync rules were numbered answers: its feed, and no rules.
        let olderID = "older-release-0001"
        let asked = Mutex<[String]>([])
        var routes = Routes()
        routes.handle(SyncOps.Info.self) { _, _ in
            asked.withLock { $0.append(SyncOps.Info.name) }
            return .init(replicaID: olderID, publishEndpoint: nil, latestSeq: 7, conflictsCreated: 0, held: [], empty: false, rules: nil)
        }
        routes.handle(SyncOps.Pending.self) { _, _ in .init(count: 7) }
        routes.handle(SyncOps.Cursor.self) { request, _ in .init(peer: request.peer, seq: 0, syncedAt: nil) }
        routes.handle(SyncOps.Changes.self) { _, _ in
            asked.withLock { $0.append(SyncOps.Changes.name) }
            return .init(records: [], next: 7, more: false)
        }
        let older = try MessageServer(configuration: .init(endpoint: "tcp://127.0.0.1:*", serviceName: "recipe-storage"), routes: routes,
                                      logger: Logger(label: "older"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await older.run() }
            defer { older.stop() }
            let olderEndpoint = try await older.boundEndpoint
            let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", homeEndpoint,
                                                              "--replica", olderEndpoint, "--sync-interval", "3600"])
            let cli = ["--worker", try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)]
            let refusal = "the recipe-storage at \(olderEndpoint) syncs by sync rules 1 (an older RecipeVault release) and this recipe-worker by \(SyncRules.current)"

            let synced = try await recipes(["sync"] + cli, storage: homeEndpoint)
            #expect(synced.status != 0, "\(synced.output)")
            #expect(synced.output.contains("\(olderEndpoint): not synced") && synced.output.contains(refusal)
                    && synced.output.contains("upgrade the recipe-storage at \(olderEndpoint)"), "\(synced.output)")
            let status = try await recipes(["sync", "status"] + cli, storage: homeEndpoint)
            #expect(status.output.contains(refusal), "\(status.output)")
            // Nothing was read from it or written to home: the sync stopped at the first answer.
            #expect(!asked.withLock { $0 }.contains(SyncOps.Changes.name), "the older replica's feed was read: \(asked.withLock { $0 })")
            // Changes on home ask for the pair again, and each run fails alike: the worker's log says so once, not once a change.
            for index in 1...4 {
                #expect(try await recipes(["add", "--name", "Change \(index)", "--ingredient", "1 egg"], storage: homeEndpoint).status == 0)
            }
            #expect(try await recipes(["sync"] + cli, storage: homeEndpoint).output.contains(refusal))
            let failures = worker.printed.components(separatedBy: "replica sync failed").count - 1
            #expect(failures == 1, "the same failure logged \(failures) times:\n\(worker.printed)")
            let cursor = try await StrangerSocket(homeEndpoint).request("sync.cursor", ["peer": olderID])
            #expect((cursor?["body"] as? [String: Any])?["seq"] as? Int == 0, "\(String(describing: cursor))")
            _ = try await worker.stop()
            older.stop()
            try await group.waitForAll()
        }
        _ = try await home.stop()
    }

    @Test("a photo file removed from one storage's data folder: photo get says so, sync status names it, and the next sync brings it back")
    func lostPhotoComesBack() async throws {
        let laptopFolder = temporaryDataFolder()
        defer { try? FileManager.default.removeItem(atPath: laptopFolder) }
        let (home, homeEndpoint) = try await startStorage(samples: false)
        let (laptop, laptopEndpoint) = try await startStorage(samples: false, folder: laptopFolder)
        let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", homeEndpoint,
                                                          "--replica", laptopEndpoint, "--sync-interval", "3600"])
        let cli = ["--worker", try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)]
        let photo = URL(fileURLWithPath: laptopFolder + "-photo.jpg")
        defer { try? FileManager.default.removeItem(at: photo) }
        let jpeg = TestImages.jpegMarked(count: 30_000, step: 13)
        try jpeg.write(to: photo)
        #expect(try await recipes(["add", "--name", "Focaccia"], storage: homeEndpoint).status == 0)
        #expect(try await recipes(["photo", "add", "Focaccia", photo.path], storage: homeEndpoint).status == 0)
        #expect(try await recipes(["sync"] + cli, storage: homeEndpoint).status == 0)

        let blobs = URL(fileURLWithPath: laptopFolder).appendingPathComponent(RecipeVault.photoFolderName)
        let blob = try #require((FileManager.default.enumerator(at: blobs, includingPropertiesForKeys: nil)?.allObjects as? [URL])?
            .first { $0.lastPathComponent.count == 64 }, "the photo did not reach the laptop")
        let out = laptopFolder + "-out.jpg"
        defer { try? FileManager.default.removeItem(atPath: out) }
        // The worker may still be in the pass the sync's change notice started, which repairs the loss at once: then
        // the file is removed again (bounded), until a status taken while it is lost shows it.
        var shown = ""
        for _ in 0..<5 {
            try? FileManager.default.removeItem(at: blob)
            let missing = try await recipes(["photo", "get", "Focaccia", "1", "-o", out], storage: laptopEndpoint)
            #expect(missing.status != 0 && missing.output.contains("missing"), "\(missing.output)")
            let status = try await recipes(["sync", "status"] + cli, storage: homeEndpoint)
            if status.output.contains("Photos missing") || !FileManager.default.fileExists(atPath: blob.path) {
                shown = status.output
                break
            }
            try await Task.sleep(for: .milliseconds(300))
        }
        #expect(shown.contains("Photos missing on \(laptopEndpoint) (") && shown.contains(String(blob.lastPathComponent.prefix(12))), "\(shown)")

        #expect(try await recipes(["sync"] + cli, storage: homeEndpoint).status == 0)
        let back = try await recipes(["photo", "get", "Focaccia", "1", "-o", out], storage: laptopEndpoint)
        #expect(back.status == 0, "\(back.output)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == jpeg)
        #expect(!(try await recipes(["sync", "status"] + cli, storage: homeEndpoint).output.contains("Photos missing")))

        _ = try await worker.stop()
        _ = try await laptop.stop()
        _ = try await home.stop()
    }

    @Test("a recipe whose only photo file is gone from the one storage that had it reaches the other replica all the same, the photo missing on both; the file put back, the next sync brings it across")
    func photoGoneEverywhere() async throws {
        let homeFolder = temporaryDataFolder()
        defer { try? FileManager.default.removeItem(atPath: homeFolder) }
        let (home, homeEndpoint) = try await startStorage(samples: false, folder: homeFolder)
        let (laptop, laptopEndpoint) = try await startStorage(samples: false)
        let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", homeEndpoint,
                                                          "--replica", laptopEndpoint, "--sync-on-request"])
        let cli = ["--worker", try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)]
        let photo = URL(fileURLWithPath: homeFolder + "-photo.jpg")
        defer { try? FileManager.default.removeItem(at: photo) }
        let jpeg = TestImages.jpegMarked(count: 20_000, step: 7)
        try jpeg.write(to: photo)
        #expect(try await recipes(["add", "--name", "Fougasse"], storage: homeEndpoint).status == 0)
        #expect(try await recipes(["photo", "add", "Fougasse", photo.path, "--as-is"], storage: homeEndpoint).status == 0)
        let blobs = URL(fileURLWithPath: homeFolder).appendingPathComponent(RecipeVault.photoFolderName)
        let blob = try #require((FileManager.default.enumerator(at: blobs, includingPropertiesForKeys: nil)?.allObjects as? [URL])?
            .first { $0.lastPathComponent.count == 64 })
        try FileManager.default.removeItem(at: blob)

        let synced = try await recipes(["sync"] + cli, storage: homeEndpoint)
        #expect(synced.status == 0, "\(synced.output)")
        #expect(synced.output.contains("1 photo neither side holds (recipes came without it; recipes sync status)"), "\(synced.output)")
        let shown = try await recipes(["show", "Fougasse"], storage: laptopEndpoint)
        #expect(shown.status == 0, "the recipe reached the laptop: \(shown.output)")
        let status = try await recipes(["sync", "status"] + cli, storage: homeEndpoint)
        #expect(!status.output.contains("Held back"), "\(status.output)")
        for endpoint in [homeEndpoint, laptopEndpoint] {
            #expect(status.output.contains("Photos missing on \(endpoint) (") , "\(status.output)")
        }
        // Someone finds the file in an old copy and puts it back at home: the next sync brings it to the laptop.
        try jpeg.write(to: blob)
        let again = try await recipes(["sync"] + cli, storage: homeEndpoint)
        #expect(again.status == 0 && !again.output.contains("neither side holds"), "\(again.output)")
        let out = homeFolder + "-out.jpg"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let back = try await recipes(["photo", "get", "Fougasse", "1", "-o", out], storage: laptopEndpoint)
        #expect(back.status == 0, "\(back.output)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == jpeg)

        _ = try await worker.stop()
        _ = try await laptop.stop()
        _ = try await home.stop()
    }

    @Test("one recipes sync leaves every replica alike: recipes made on two replicas, an edit and a conflict between two reach all of them through the worker's storage, a third replica that changed nothing included")
    func oneSyncReachesEveryReplica() async throws {
        let (home, homeEndpoint) = try await startStorage(samples: false)
        let (laptop, laptopEndpoint) = try await startStorage(samples: false)
        let (tablet, tabletEndpoint) = try await startStorage(samples: false)
        let (phone, phoneEndpoint) = try await startStorage(samples: false)
        let replicas = [laptopEndpoint, tabletEndpoint, phoneEndpoint]
        let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", homeEndpoint, "--sync-on-request"]
                                                         + replicas.flatMap { ["--replica", $0] })
        let cli = ["--worker", try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)]
        // A recipe every copy has, then edited on the tablet. The phone changes nothing: its pair has nothing to bring
        // home, and ran side by side with the others, it had finished before they brought theirs.
        #expect(try await recipes(["add", "--name", "Porridge"], storage: homeEndpoint).status == 0)
        #expect(try await recipes(["sync"] + cli, storage: homeEndpoint).status == 0)
        #expect(try await recipes(["rate", "Porridge", "5"], storage: tabletEndpoint).status == 0)
        // Both change its notes: one wins everywhere, the other is kept as the same conflicted copy everywhere.
        #expect(try await recipes(["edit", "Porridge", "--notes", "oats soaked overnight"], storage: laptopEndpoint).status == 0)
        #expect(try await recipes(["edit", "Porridge", "--notes", "steel-cut oats, 30 minutes"], storage: tabletEndpoint).status == 0)
        #expect(try await recipes(["add", "--name", "Shakshuka", "--ingredient", "4 eggs"], storage: laptopEndpoint).status == 0)
        #expect(try await recipes(["add", "--name", "Tarka Dal", "--ingredient", "200 g red lentils"], storage: tabletEndpoint).status == 0)

        let synced = try await recipes(["sync"] + cli, storage: homeEndpoint)
        #expect(synced.status == 0, "\(synced.output)")
        for endpoint in [homeEndpoint] + replicas {
            let listed = try await recipes(["list"], storage: endpoint).output
            #expect(listed.contains("Shakshuka") && listed.contains("Tarka Dal"),
                    "one sync left \(endpoint) without a recipe another replica had:\n\(listed)\n\(synced.output)\n\(worker.printed)")
            #expect(try await details("Porridge", endpoint).recipe.rating == 5, "one sync left \(endpoint) without the tablet's rating")
        }
        // Every copy the same: the same recipes and the same conflict.
        var seen: [String: String] = [:]
        for endpoint in [homeEndpoint] + replicas {
            let listed = try await recipes(["list"], storage: endpoint).output
            let conflicts = try await recipes(["conflicts", "list"], storage: endpoint).output
            let notes = try await details("Porridge", endpoint).recipe.notes ?? ""
            seen[endpoint] = "\(listed)\n\(conflicts)\n\(notes)"
        }
        #expect(Set(seen.values).count == 1, "one sync left the copies apart:\n\(seen.map { "\($0.key):\n\($0.value)" }.joined(separator: "\n"))")
        #expect(seen[homeEndpoint]?.contains("(conflicted copy)") == true, "\(seen[homeEndpoint] ?? "")")
        let again = try await recipes(["sync"] + cli, storage: homeEndpoint)
        for endpoint in replicas {
            #expect(again.output.contains("⇄ \(endpoint): already in step"), "\(again.output)")
        }

        _ = try await worker.stop()
        for storage in [home, laptop, tablet, phone] { _ = try await storage.stop() }
    }

    @Test("a photo the storage lost, brought back by one replica, reaches the other replica, which took its recipe without it, in the same sync; with automatic sync, at once",
          arguments: [false, true])
    func lostPhotoReachesAWaitingReplica(automatic: Bool) async throws {
        let homeFolder = temporaryDataFolder()
        defer { try? FileManager.default.removeItem(atPath: homeFolder) }
        let (home, homeEndpoint) = try await startStorage(samples: false, folder: homeFolder)
        let (laptop, laptopEndpoint) = try await startStorage(samples: false)
        let (tablet, tabletEndpoint) = try await startStorage(samples: false)
        /// A worker for `replicas` that syncs only when asked, and the CLI's arguments to reach it.
        func worker(_ replicas: [String], automatic: Bool = false) async throws -> (ServiceProcess, [String]) {
            // Automatic: an hour between timed syncs, so what moves within seconds moved because of the run at start
            // and what it set off.
            let process = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", homeEndpoint]
                                                              + (automatic ? ["--sync-interval", "3600"] : ["--sync-on-request"])
                                                              + replicas.flatMap { ["--replica", $0] })
            return (process, ["--worker", try await process.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)])
        }
        let photo = URL(fileURLWithPath: homeFolder + "-photo.jpg")
        defer { try? FileManager.default.removeItem(at: photo) }
        let jpeg = TestImages.jpegMarked(count: 30_000, step: 7)
        try jpeg.write(to: photo)

        // Made on the tablet, synced to home alone.
        #expect(try await recipes(["add", "--name", "Focaccia"], storage: tabletEndpoint).status == 0)
        #expect(try await recipes(["photo", "add", "Focaccia", photo.path], storage: tabletEndpoint).status == 0)
        var (first, cli) = try await worker([tabletEndpoint])
        #expect(try await recipes(["sync"] + cli, storage: homeEndpoint).status == 0)
        _ = try await first.stop()

        // Home loses the photo's file, and finds out.
        let blobs = URL(fileURLWithPath: homeFolder).appendingPathComponent(RecipeVault.photoFolderName)
        let blob = try #require((FileManager.default.enumerator(at: blobs, includingPropertiesForKeys: nil)?.allObjects as? [URL])?
            .first { $0.lastPathComponent.count == 64 }, "the photo did not reach home")
        try FileManager.default.removeItem(at: blob)
        let out = homeFolder + "-out.jpg"
        defer { try? FileManager.default.removeItem(atPath: out) }
        #expect(try await recipes(["photo", "get", "Focaccia", "1", "-o", out], storage: homeEndpoint).status != 0)

        // Synced to the laptop alone: the laptop takes the recipe, its photo missing there too until it comes.
        (first, cli) = try await worker([laptopEndpoint])
        #expect(try await recipes(["sync"] + cli, storage: homeEndpoint).status == 0)
        _ = try await first.stop()
        #expect(try await recipes(["show", "Focaccia"], storage: laptopEndpoint).status == 0)
        #expect(try await recipes(["photo", "get", "Focaccia", "1", "-o", out], storage: laptopEndpoint).status != 0)

        // One sync of both pairs: the tablet brings home the photo, and the laptop gets it and the recipe. The pairs run
        // side by side, and the laptop's had finished before home had the photo again. With automatic sync, the run
        // at start does it (no change notice says a photo came: before, the laptop waited for the hour).
        let (both, bothCLI) = try await worker([laptopEndpoint, tabletEndpoint], automatic: automatic)
        var said = ""
        if automatic {
            _ = try await eventually(within: 20) {
                try await recipes(["photo", "get", "Focaccia", "1", "-o", out], storage: laptopEndpoint).status == 0
            }
        } else {
            let synced = try await recipes(["sync", "--json"] + bothCLI, storage: homeEndpoint)
            #expect(synced.status == 0, "\(synced.output)")
            said = synced.output
        }
        let got = try await recipes(["photo", "get", "Focaccia", "1", "-o", out], storage: laptopEndpoint)
        #expect(got.status == 0, "the laptop did not get the photo: \(got.output)\n\(said)\n\(both.printed)")
        #expect((try? Data(contentsOf: URL(fileURLWithPath: out))) == jpeg)
        let status = try await recipes(["sync", "status", "--json"] + bothCLI, storage: homeEndpoint)
        let pairs = try WireCodec.makeDecoder().decode(WorkerSyncOps.Status.Response.self, from: Data(status.output.utf8)).pairs
        #expect(pairs.allSatisfy { ($0.held ?? []).isEmpty }, "\(status.output)")

        _ = try await both.stop()
        for storage in [home, laptop, tablet] { _ = try await storage.stop() }
    }

    /// CI twice: a page's apply outlasted the worker's 10 s wait, the retry ran the page again after the first run had
    /// committed it, and its reply ("no change", or `storage_full` on the disk the first run filled) went out as the
    /// page's. Here the stall is made: the replica's process stopped (SIGSTOP) for longer than the worker waits, while
    /// a page's apply runs or is on its way to it.
    /// The replica stalls with an apply running or on its way; or the worker's storage stalls, a read of the next page
    /// on its way to it (a read sent again is read again).
    @Test("a storage that stalls mid-sync for longer than the worker waits (SIGSTOP for 12 s), the replica or the worker's own: the page sent again is applied once and counted once; the sync says every change it moved, and both end alike",
          arguments: [true, false])
    func stalledReplica(replicaStalls: Bool) async throws {
        let (home, homeEndpoint) = try await startStorage(samples: false)
        let (laptop, laptopEndpoint) = try await startStorage(samples: false)
        var configuration = MessageClient.Configuration(endpoint: homeEndpoint, serviceName: "storage")
        configuration.timeout = .seconds(30)
        let homeClient = try MessageClient(configuration: configuration)
        configuration.endpoint = laptopEndpoint
        let laptopClient = try MessageClient(configuration: configuration)
        // Ten pages of a sync (200 records a page), each quick to apply once the replica runs again.
        let count = 2_000
        for index in 0..<count {
            _ = try await homeClient.call(RecipeOps.Create.self, .init(id: UUID(), recipe: RecipeDraft(name: "Stalled Soup \(index)",
                                                                                                       ingredients: [.init(text: "\(index % 9 + 1) leeks")])))
        }
        // The laptop holds a recipe of its own: it is not sent a snapshot of home in one go, but home's changes page by page.
        _ = try await laptopClient.call(RecipeOps.Create.self, .init(id: UUID(), recipe: RecipeDraft(name: "The laptop's own")))
        let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", homeEndpoint,
                                                          "--replica", laptopEndpoint, "--sync-on-request"])
        let workerEndpoint = try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)

        let ended = Mutex(false)
        let sync = Task {
            defer { ended.withLock { $0 = true } }
            return try await recipes(["sync", "--worker", workerEndpoint, "--sync-timeout", "300"], storage: homeEndpoint)
        }
        // The first page is in: the next one's apply is running, or on its way.
        let begun = try await eventually(within: 120) {
            try await laptopClient.call(StorageOps.Stats.self, Empty()).recipes > 1
        }
        try #require(begun, "no page reached the laptop: \(worker.printed.suffix(4_000))")
        let stalled = replicaStalls ? laptop.pid : home.pid
        kill(stalled, SIGSTOP)
        let stoppedInside = !ended.withLock { $0 }
        try await Task.sleep(for: .seconds(12))
        kill(stalled, SIGCONT)
        let result = try await sync.value
        try #require(stoppedInside, "the sync had ended before the laptop stopped: the test did not stall it (\(result.output))")

        #expect(result.status == 0, "\(result.output)\nthe worker's log:\n\(worker.printed.suffix(6_000))")
        #expect(result.output.contains("\(homeEndpoint) ⇄ \(laptopEndpoint): \(count) changes to the replica, 1 back"),
                "every change counted once: \(result.output)\nthe worker's log:\n\(worker.printed.suffix(6_000))")
        let atLaptop = try await laptopClient.call(StorageOps.Stats.self, Empty()).recipes
        #expect(atLaptop == count + 1)
        let again = try await recipes(["sync", "--worker", workerEndpoint], storage: homeEndpoint)
        #expect(again.status == 0 && again.output.contains("already in step"), "\(again.output)")

        _ = try await worker.stop()
        _ = try await laptop.stop()
        _ = try await home.stop()
    }
}
