import Foundation
import RecipeProtocol
import TestImages
import Testing
import TestRandom

/// Three storages and a worker as processes; random changes through the CLI on random replicas (recipes added, edited,
/// duplicated and deleted, photos added, moved and removed, cook-log entries, books, the samples, conflicts settled),
/// a replica restored from `recipes backup`, kill -9 of a storage and of the worker in the middle of
/// syncs, a photo file removed, damaged, unreadable or replaced by a folder in one storage's data folder while another holds it; then `recipes sync` until nothing moves, and every replica's `recipes export` is the same, byte for byte.
@Suite("Replica sync under restores and kill -9, through the CLI", .serialized)
struct ReplicaChaosTests {
    @Test("random CLI changes on three replicas, a restore and kill -9: every replica exports the same bytes")
    func chaos() async throws {
        try await run(seed: ProcessInfo.processInfo.environment["RECIPES_CHAOS_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0 ... .max))
    }

    /// Histories that once failed. 16843838947807175624: the storage lost a photo's file while a replica held the
    /// only other copy; one sync brought it back, but the other pair, run side by side, had already left its replica
    /// holding the recipe for want of it, and nothing ran that pair again. 4324851399791794770: a restore copied over
    /// a data folder where a folder stood in a photo file's place (the run's own copy failed; see `ChaosSteps.restore`).
    @Test("histories that once failed", arguments: [UInt64(16_843_838_947_807_175_624), 4_324_851_399_791_794_770])
    func replay(seed: UInt64) async throws {
        try await run(seed: seed)
    }

    private func run(seed: UInt64) async throws {
        var random = ChaosRandom(seed: seed)
        let note = "seed \(seed) (RECIPES_CHAOS_SEED replays it)"
        let storages = try (0..<3).map { _ in try StorageNode() }
        for storage in storages { try await storage.start() }
        func startWorker() async throws -> (ServiceProcess, String) {
            let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", storages[0].endpoint,
                                                              "--replica", storages[1].endpoint, "--replica", storages[2].endpoint,
                                                              "--sync-interval", "3600"])
            return (worker, try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#))
        }
        var (worker, workerEndpoint) = try await startWorker()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-chaos-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        var changes = RandomCLIChanges(scratch: scratch)
        var backup: ChaosSteps.Backup?
        var restored = false, killedStorage = false, killedWorker = false
        // A photo file removed, damaged, unreadable or replaced by a folder in one storage's data folder while it runs (another holds the same blob).
        var lostBlob: String?
        // What each step did, shown when the replicas differ.
        var trace: [String] = []
        for step in 0..<45 {
            let index = random.below(3)
            let storage = storages[index].endpoint
            func recipes(_ arguments: [String], storage: String) async throws -> (status: Int32, output: String) {
                let run = try await EndToEndTests.recipes(arguments, storage: storage)
                trace.append("\(step) on \(index): \(arguments.prefix(3).joined(separator: " ")) -> \(run.status)")
                return run
            }
            let kind = random.below(25)
            switch kind {
            case 15 where backup == nil:
                let folder = scratch.appendingPathComponent("backup-\(step)").path
                let made = try await recipes(["backup", folder], storage: storage)
                #expect(made.status == 0, "\(made.output)")
                backup = .init(storage: index, folder: folder, step: step)
            case 16 where backup != nil && !restored:
                // Restore: the backup in place of the data folder, stopped or after kill -9 (see ChaosSteps.restore).
                trace.append(try await ChaosSteps.restore(backup!, of: storages, at: step, random: &random))
                restored = true
            case 17 where !killedStorage, 18 where !killedWorker:
                // kill -9 in the middle of a sync, then start it again.
                let sync = try ServiceProcess("recipes", ["sync", "--worker", workerEndpoint], environment: ["RECIPES_STORAGE": storage])
                try await Task.sleep(for: .milliseconds(random.below(300)))
                if !killedStorage {
                    let victim = storages[1 + random.below(2)]
                    _ = try await victim.process?.stop(signal: SIGKILL)
                    trace.append("\(step): storage \(storages.firstIndex { $0 === victim } ?? -1) killed during a sync started on \(index)")
                    _ = try await sync.waitForExit(timeout: .seconds(60))
                    try await victim.start()
                    killedStorage = true
                } else {
                    _ = try await worker.stop(signal: SIGKILL)
                    trace.append("\(step): worker killed during a sync started on \(index)")
                    _ = try await sync.waitForExit(timeout: .seconds(60))
                    (worker, workerEndpoint) = try await startWorker()
                    killedWorker = true
                }
            case 19 where lostBlob == nil:
                guard let lost = try ChaosSteps.loseBlob(at: index, of: storages, at: step, random: &random) else { break }
                lostBlob = lost.name
                trace.append(lost.said)
            default:
                if try await !changes.make(kind, step: step, storage: storage, random: &random, recipes: { try await recipes($0, storage: $1) }) {
                    _ = try await recipes(["sync", "--worker", workerEndpoint], storage: storage)
                }
            }
        }
        if lostBlob != nil {
            // Someone exports (reads every photo): a damaged blob is found then, and the syncs below bring it back.
            for (index, storage) in storages.enumerated() {
                _ = try await recipes(["export", scratch.appendingPathComponent("look-\(index)").path], storage: storage.endpoint)
            }
        }

        // Sync until nothing moves (bounded).
        func syncUntilQuiet() async throws {
            var quiet = false
            var last = ""
            for _ in 0..<10 where !quiet {
                let run = try await recipes(["sync", "--json", "--worker", workerEndpoint], storage: storages[0].endpoint)
                last = run.output
                guard run.status == 0, let reply = try? WireCodec.makeDecoder().decode(WorkerSyncOps.Run.Response.self, from: Data(run.output.utf8)) else { continue }
                quiet = reply.pairs.allSatisfy { $0.error == nil && $0.toReplica == 0 && $0.toStorage == 0 }
            }
            #expect(quiet, "\(note): still moving after 10 syncs: \(last)")
        }
        try await syncUntilQuiet()
        if let lostBlob, ChaosSteps.everyCopyGone(of: lostBlob, from: storages) {
            // The replica that held the other copy dropped it before passing it back: every copy is gone. The records
            // naming it reach every replica all the same (nothing waits for it, below), the photo missing on each.
            trace.append("every copy of the lost blob is gone: its recipes arrive without it")
        }
        // The worker may still be finishing a sync a change notice started; give it a moment to settle.
        var status = ""
        let settled = try await eventually(within: 10) {
            status = try await recipes(["sync", "status", "--json", "--worker", workerEndpoint], storage: storages[0].endpoint).output
            let pairs = try WireCodec.makeDecoder().decode(WorkerSyncOps.Status.Response.self, from: Data(status.utf8)).pairs
            return pairs.allSatisfy { $0.pendingToReplica == 0 && $0.pendingToStorage == 0 && ($0.held ?? []).isEmpty }
        }
        #expect(settled, "\(note): \(status)")

        let exports = try await ReplicaExports(of: storages.count, into: scratch) { try await recipes($0, storage: storages[$1].endpoint) }
        // A history may delete every recipe it made (seed 18067746128122958941 does): then empty exports are right.
        if !Set(changes.names).subtracting(changes.deleted).isEmpty { #expect(!exports.files[0].isEmpty, "\(note): nothing was exported") }
        if ProcessInfo.processInfo.environment["RECIPES_CHAOS_TRACE"] != nil { print(trace.joined(separator: "\n")) }
        print("replica chaos \(note): \(changes.names.count) recipes made, backup \(backup != nil), restored \(restored), blob lost \(lostBlob != nil), storage killed \(killedStorage), "
              + "worker killed \(killedWorker), \(exports.files[0].count) files exported")
        for index in 1..<3 {
            let (differing, shown) = exports.difference(at: index)
            #expect(differing.isEmpty, "\(note): replica \(index)'s export differs from replica 0's in \(differing.prefix(6))\(shown)\nsteps:\n\(trace.joined(separator: "\n"))\ndata folders: \(storages.map(\.folder))")
            #expect(exports.conflicts[index] == exports.conflicts[0], "\(note): the replicas list different conflicts")
        }
        _ = try await worker.stop()
        for storage in storages { _ = try await storage.process?.stop() }
    }
}

/// Every file under `folder` by its relative path, with its bytes.
func treeContents(_ folder: URL) throws -> [String: Data] {
    var files: [String: Data] = [:]
    let root = folder.standardizedFileURL.path
    guard let walker = FileManager.default.enumerator(atPath: root) else { return files }
    for case let path as String in walker {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isFolder), !isFolder.boolValue {
            files[path] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + path))
        }
    }
    return files
}

/// Bytes that start like a JPEG, from a seed.
func chaosJPEG(seed: UInt64) -> Data {
    // A real JPEG (photos from the CLI go through the worker's photo intake, which decodes them), the same
    // for the same seed; its size comes from the seed, so almost every seed of a large pool gives other bytes.
    TestImages.picture(width: 32 + Int(seed % 97), height: 24 + Int(seed / 97 % 89), grain: 0, as: .jpeg(quality: 80))
}

/// The chaos runs' generator: a failing run replays from its seed.
typealias ChaosRandom = SplitMix
