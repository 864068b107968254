import Foundation
import FuzzChecks
import Testing
import TestThreads

/// Every committed fuzz input — the seeds and each input that once found a bug —
/// replayed through the checks the fuzz targets run, on every test run.
@Suite("Fuzz corpus replay: every saved input still handled as promised", .serialized)
struct CorpusReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus")

    static func inputs(_ target: String) throws -> [Data] {
        try named(target).map(\.data)
    }

    static func named(_ target: String) throws -> [(name: String, data: Data)] {
        let folder = corpus.appendingPathComponent(target)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
        return try names.map { ($0, try Data(contentsOf: folder.appendingPathComponent($0))) }
    }

    /// Runs `check` on every input, on a thread of its own: the checks wait for their async work with a semaphore
    /// (libFuzzer calls them synchronously), and a test waiting that way on the cooperative pool would hold one of
    /// its threads for the whole replay, stalling every other test's continuations.
    static func replay(_ inputs: [Data], through check: @escaping @Sendable (Data) -> Void) async {
        // Beside the other suites a reply can wait its turn for a while: a hang is still caught, at two minutes.
        FuzzChecks.patientReplies()
        await onOwnThread(named: "corpus replay") {
            for input in inputs { check(input) }
        }
    }

    @Test("storage requests", arguments: ["storage-request"])
    func storageRequests(target: String) async throws {
        let inputs = try Self.inputs(target)
        #expect(inputs.count >= 20, "the seed corpus holds a request for every operation")
        await Self.replay(inputs, through: FuzzChecks.storageRequest)
    }

    @Test("the storage requests' seeds name every operation recipe-storage answers: one never named is left to chance")
    func everyStorageOperationSeeded() throws {
        struct Envelope: Decodable { var op: String }
        let named = Set(try Self.inputs("storage-request").compactMap { try? JSONDecoder().decode(Envelope.self, from: $0).op })
        let operations = FuzzChecks.Reach.storageOperations
        #expect(operations.count >= 50)
        #expect(Set(operations).subtracting(named).isEmpty, "no seed sends \(Set(operations).subtracting(named).sorted())")
    }

    /// Operations no single request can be answered `ok` for in the fuzzing store, and why.
    static let unreachedAlone: [String: String] = [
        "sync.install": "a snapshot's id is made at random by sync.snapshot (the snapshot-install target fuzzes installing)",
        "sync.snapshotPhotos": "as sync.install", "sync.snapshotRead": "as sync.install",
        "sync.snapshotWrite": "a storage that holds anything takes no snapshot",
        "conflicts.resolve": "no fixture conflict yet: a conflict's id is derived from two replicas' writes",
        "conflicts.dismiss": "as conflicts.resolve",
    ]

    @Test("every operation recipe-storage answers has a seed answered ok against the fuzzing store and its fixtures (but those that cannot be alone): a seed refused as not_found or malformed leaves what is behind the refusal to chance")
    func everyStorageOperationReachedPastItsLookup() async throws {
        struct Envelope: Decodable { var op: String }
        let seeds = try Self.named("storage-request")
        FuzzChecks.patientReplies()
        let answered = await onOwnThread(named: "seeds answered") { () -> [String: [String]] in
            var answered: [String: [String]] = [:]
            for seed in seeds {
                guard let op = try? JSONDecoder().decode(Envelope.self, from: seed.data).op else { continue }
                answered[op, default: []].append("\(seed.name): \(FuzzChecks.Reach.storageReply(seed.data).map { $0?.rawValue ?? "ok" } ?? "no reply")")
            }
            return answered
        }
        // An entry staged once is refused as a conflict after its job and position were found (the first run of the
        // seeds stages it): that answer is past the lookup too.
        let alsoReached = ["job.stage": ": conflict"]
        for op in FuzzChecks.Reach.storageOperations where Self.unreachedAlone[op] == nil {
            #expect(answered[op]?.contains { $0.hasSuffix(": ok") || alsoReached[op].map($0.hasSuffix) == true } == true,
                    "no seed of \(op) is answered ok: \(answered[op] ?? [])")
        }
        for op in Self.unreachedAlone.keys {
            #expect(answered[op]?.contains { $0.hasSuffix(": ok") } != true, "\(op) is answered ok now: take it off unreachedAlone")
        }
    }

    @Test("the seeds of the sync operations that read or merge records get past the refusals before them (the sync rules), so the fuzzer starts from what they guard")
    func syncSeedsReachTheirWork() throws {
        struct Envelope: Decodable { var op: String }
        var answered: [String: [String]] = [:]
        for input in try Self.inputs("storage-request") {
            guard let op = try? JSONDecoder().decode(Envelope.self, from: input).op, ["sync.changes", "sync.apply"].contains(op),
                  let code = FuzzChecks.Reach.storageReply(input) else { continue }
            answered[op, default: []].append(code?.rawValue ?? "ok")
        }
        #expect(answered["sync.changes"]?.contains("ok") == true, "sync.changes seeds answered \(answered["sync.changes"] ?? [])")
        #expect(answered["sync.apply"]?.contains("ok") == true, "sync.apply seeds answered \(answered["sync.apply"] ?? [])")
        #expect(answered.values.joined().contains("unsupported_version"), "a seed says other sync rules: the refusal is fuzzed too")
    }

    @Test("the sync-apply seeds with the clock ahead reach the clock's restart: its code is fuzzed from there")
    func clockSeedsReachTheRestart() async throws {
        let inputs = try Self.named("sync-apply").filter { $0.name.hasPrefix("clock-ahead") }
        #expect(inputs.count == 2)
        FuzzChecks.patientReplies()
        let restarts = await onOwnThread(named: "clock seeds") { () -> [String: Int] in
            var restarts: [String: Int] = [:]
            for input in inputs {
                let before = FuzzChecks.Reach.clockRestarts()
                FuzzChecks.syncApply(input.data)
                restarts[input.name] = FuzzChecks.Reach.clockRestarts() - before
            }
            return restarts
        }
        #expect(restarts == ["clock-ahead-two-hours.json": 1, "clock-ahead-ten-years.json": 1], "\(restarts)")
    }

    @Test("the snapshot seeds, made at an earlier schema, are brought to this one: the store of the samples installs, so the fuzzer starts past the schema comparison")
    func snapshotSeedsInstall() async throws {
        let seeds = try Self.named("snapshot-install")
        let installed = await onOwnThread(named: "snapshot seeds") { seeds.filter { FuzzChecks.Reach.snapshotInstalled($0.data) }.map(\.name) }
        #expect(installed.contains("samples.sqlite"), "installed: \(installed)")
    }

    @Test("messages to a storage server's socket: the saved conversations, and every saved request sent as a message")
    func storageSocket() async throws {
        let inputs = try Self.inputs("storage-socket")
        #expect(inputs.count >= 8, "the seed corpus holds delimited and plain requests, frame references, retried writes, too many frames")
        await Self.replay(inputs + (try Self.inputs("storage-request")), through: FuzzChecks.storageSocket)
    }

    @Test("messages to a worker's socket: imports of saved pages, photos, migration entries, batch jobs, sync requests")
    func workerSocket() async throws {
        let inputs = try Self.inputs("worker-socket")
        #expect(inputs.count >= 8, "the seed corpus holds a request of every worker operation")
        await Self.replay(inputs, through: FuzzChecks.workerSocket)
    }

    @Test("a replica that answers anything: the worker's sync against the saved replies, with a real storage on the other side")
    func syncPeer() async throws {
        let inputs = try Self.inputs("sync-peer")
        #expect(inputs.count >= 6, "the seed corpus holds pulls both ways, a snapshot, frame references and counts out of range, errors")
        await Self.replay(inputs, through: FuzzChecks.syncPeer)
    }

    @Test("the sync-peer seeds get past the stranger's first answer: most syncs run on (its sync rules are this release's); one seed says none, and is refused")
    func syncPeerSeedsReachTheSync() async throws {
        var refusedForRules = 0, past = 0
        FuzzChecks.patientReplies()
        let inputs = try Self.inputs("sync-peer")
        let endings = await onOwnThread(named: "sync-peer seeds") { inputs.compactMap { FuzzChecks.Reach.syncPeer($0) } }
        for ended in endings {
            if ended == "unsupported_version" { refusedForRules += 1 } else { past += 1 }
        }
        #expect(refusedForRules == 1, "seeds refused for their sync rules: \(refusedForRules)")
        #expect(past >= 8, "seeds whose sync got past sync.info: \(past)")
    }

    @Test("a storage that answers anything: the worker's batch-job scan and passes against the saved replies")
    func workerJobs() async throws {
        let inputs = try Self.inputs("worker-jobs")
        #expect(inputs.count >= 4, "the seed corpus holds a scan, a URL job, a migration job and counts out of range")
        await Self.replay(inputs, through: FuzzChecks.workerJobs)
    }

    @Test("web pages")
    func pages() async throws {
        let inputs = try Self.inputs("page")
        #expect(!inputs.isEmpty)
        await Self.replay(inputs, through: FuzzChecks.page)
    }

    @Test("durations and ingredient lines")
    func parsers() async throws {
        let inputs = try Self.inputs("parsers")
        #expect(!inputs.isEmpty)
        await Self.replay(inputs, through: FuzzChecks.parsers)
    }

    @Test("photos for the photo intake")
    func photoIntake() async throws {
        let inputs = try Self.inputs("photo-intake")
        #expect(inputs.count >= 5, "the seed corpus holds a small JPEG, PNG, WebP, HEIC and AVIF")
        await Self.replay(inputs, through: FuzzChecks.photoIntake)
    }

    @Test("entries of other apps' exports")
    func migration() async throws {
        let inputs = try Self.inputs("migration")
        #expect(inputs.count >= 6, "the seed corpus holds an entry of each format")
        await Self.replay(inputs, through: FuzzChecks.migration)
        // Each seed (but those named for a crash or a refusal) gets to its recipe: one refused at its first check (a
        // Tandoor entry whose zip was never opened) leaves that format's reader unfuzzed.
        var reached: Set<String> = []
        for (name, data) in try Self.named("migration") where !name.contains("crash") && !name.contains("refused") {
            guard let (format, refusal) = FuzzChecks.Reach.migration(data) else { continue }
            #expect(refusal == nil, "the seed \(name) (\(format)) gives no recipe: \(refusal ?? "")")
            if refusal == nil { reached.insert(format) }
        }
        #expect(reached.count == 7, "seeds read as a recipe in: \(reached.sorted())")
    }

    @Test("sync.apply records")
    func syncApply() async throws {
        let inputs = try Self.inputs("sync-apply")
        #expect(!inputs.isEmpty)
        await Self.replay(inputs, through: FuzzChecks.syncApply)
    }

    @Test("database snapshots from a peer")
    func snapshotInstall() async throws {
        let inputs = try Self.inputs("snapshot-install")
        #expect(!inputs.isEmpty, "the seed corpus holds a real snapshot")
        await Self.replay(inputs, through: FuzzChecks.snapshotInstall)
    }
}
