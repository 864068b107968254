import Foundation
import RecipeProtocol
import Testing
import TestRandom

/// The deployment the README suggests for two machines: a storage on each, and a worker beside each that keeps its
/// storage in step with the other one, syncing on every change notice, so the two pairs' syncs run at once and against
/// each other. Random changes through the CLI on either side, with kill -9 of any of the four processes at random
/// moments (mid-sync, mid-write), a storage restored from `recipes backup`, and a photo file lost or damaged in one
/// data folder; then `recipes sync` through each worker until nothing moves: both storages export the
/// same bytes and list the same conflicts.
@Suite("Replica sync with a worker beside each replica, under kill -9", .serialized)
struct MeshChaosTests {
    @Test("two storages, a worker beside each syncing on change notices, random CLI changes on both and kill -9 of any of the four: both export the same bytes")
    func mesh() async throws {
        let seed = ProcessInfo.processInfo.environment["RECIPES_MESH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0 ... .max)
        var random = ChaosRandom(seed: seed)
        let note = "seed \(seed) (RECIPES_MESH_SEED replays it)"
        let storages = try (0..<2).map { _ in try StorageNode() }
        for storage in storages { try await storage.start() }
        var workers: [ServiceProcess?] = [nil, nil]
        var workerEndpoints = ["", ""]
        func startWorker(_ index: Int) async throws {
            let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", storages[index].endpoint,
                                                              "--replica", storages[1 - index].endpoint, "--sync-interval", "5"])
            workerEndpoints[index] = try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)
            workers[index] = worker
        }
        for index in 0..<2 { try await startWorker(index) }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-mesh-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        var changes = RandomCLIChanges(scratch: scratch)
        var kills = 0
        var backup: ChaosSteps.Backup?
        var restored = false
        // A photo file removed, damaged, unreadable or replaced by a folder in one storage's data folder while it runs (the other holds the same blob).
        var lostBlob: String?
        var trace: [String] = []
        func recipes(_ arguments: [String], on index: Int) async throws -> (status: Int32, output: String) {
            let run = try await EndToEndTests.recipes(arguments, storage: storages[index].endpoint,
                                                      environment: ["RECIPES_WORKER": workerEndpoints[index]])
            trace.append("on \(index): \(arguments.prefix(3).joined(separator: " ")) -> \(run.status)")
            return run
        }
        for step in 0..<60 {
            let index = random.below(2)
            let kind = random.below(28)
            if (15..<20).contains(kind), kills < 6 {
                // kill -9 of one of the four, often while the syncs the last changes started are running; started again
                // at once or after a moment.
                let victim = random.below(4)
                try await Task.sleep(for: .milliseconds(random.below(200)))
                if victim < 2 {
                    try await storages[victim].stop(signal: SIGKILL)
                    try await Task.sleep(for: .milliseconds(random.below(500)))
                    try await storages[victim].start()
                } else {
                    _ = try await workers[victim - 2]?.stop(signal: SIGKILL)
                    try await Task.sleep(for: .milliseconds(random.below(500)))
                    try await startWorker(victim - 2)
                }
                kills += 1
                trace.append("\(step): kill -9 of \(victim < 2 ? "storage \(victim)" : "worker \(victim - 2)")")
                continue
            }
            switch kind {
            case 25 where backup == nil:
                let folder = scratch.appendingPathComponent("backup-\(step)").path
                let made = try await recipes(["backup", folder], on: index)
                #expect(made.status == 0, "\(made.output)")
                if made.status == 0 { backup = .init(storage: index, folder: folder, step: step) }
                continue
            case 26 where backup != nil && !restored:
                // Restored while the worker beside it, and the other's, may be syncing with it.
                trace.append(try await ChaosSteps.restore(backup!, of: storages, at: step, random: &random))
                restored = true
                continue
            case 27 where lostBlob == nil:
                if let lost = try ChaosSteps.loseBlob(at: index, of: storages, at: step, random: &random) {
                    lostBlob = lost.name
                    trace.append(lost.said)
                    continue
                }
            default:
                break
            }
            let made = try await changes.make(kind, step: step, storage: storages[index].endpoint, random: &random) { arguments, _ in
                try await recipes(arguments, on: index)
            }
            if !made { try await Task.sleep(for: .milliseconds(100 + random.below(400))) }
        }

        // Each worker syncs its pair until nothing moves (bounded): both pairs are the same two storages, seen from
        // either side.
        func syncUntilQuiet(through index: Int) async throws -> Bool {
            for _ in 0..<10 {
                let run = try await recipes(["sync", "--json", "--worker", workerEndpoints[index]], on: index)
                guard run.status == 0, let reply = try? WireCodec.makeDecoder().decode(WorkerSyncOps.Run.Response.self, from: Data(run.output.utf8))
                else { continue }
                if reply.pairs.allSatisfy({ $0.error == nil && $0.toReplica == 0 && $0.toStorage == 0 }) { return true }
            }
            return false
        }
        func syncBothUntilQuiet() async throws {
            var quiet = false
            for _ in 0..<3 where !quiet {
                let first = try await syncUntilQuiet(through: 0)
                let second = try await syncUntilQuiet(through: 1)
                quiet = first && second
            }
            #expect(quiet, "\(note): still moving after 30 syncs through each worker\nsteps:\n\(trace.joined(separator: "\n"))")
        }
        if lostBlob != nil {
            // Someone exports (reads every photo): a damaged blob is found then, and the syncs below bring it back.
            for index in 0..<2 { _ = try await recipes(["export", scratch.appendingPathComponent("look-\(index)").path], on: index) }
        }
        try await syncBothUntilQuiet()
        if let lostBlob, ChaosSteps.everyCopyGone(of: lostBlob, from: storages) {
            // The storage that held the other copy dropped it before passing it back: every copy is gone. The records
            // naming it reach both storages all the same (nothing waits for it, below), the photo missing on each.
            trace.append("every copy of the lost blob is gone: its recipes arrive without it")
        }
        for index in 0..<2 {
            var status = ""
            let settled = try await eventually(within: 15) {
                status = try await recipes(["sync", "status", "--json", "--worker", workerEndpoints[index]], on: index).output
                let pairs = try WireCodec.makeDecoder().decode(WorkerSyncOps.Status.Response.self, from: Data(status.utf8)).pairs
                return pairs.allSatisfy { $0.pendingToReplica == 0 && $0.pendingToStorage == 0 && ($0.held ?? []).isEmpty }
            }
            #expect(settled, "\(note): worker \(index): \(status)")
        }

        let exports = try await ReplicaExports(of: 2, into: scratch) { try await recipes($0, on: $1) }
        if !Set(changes.names).subtracting(changes.deleted).isEmpty { #expect(!exports.files[0].isEmpty, "\(note): nothing was exported") }
        print("replica mesh \(note): \(changes.names.count) recipes made, \(kills) processes killed, backup \(backup != nil), restored \(restored), "
              + "blob lost \(lostBlob != nil), \(exports.files[0].count) files exported")
        let (differing, shown) = exports.difference(at: 1)
        #expect(differing.isEmpty, "\(note): the exports differ in \(differing.prefix(6))\(shown)\nsteps:\n\(trace.joined(separator: "\n"))\ndata folders: \(storages.map(\.folder))")
        #expect(exports.conflicts[1] == exports.conflicts[0], "\(note): the storages list different conflicts")
        for worker in workers { _ = try await worker?.stop() }
        for storage in storages { try await storage.stop() }
    }
}
