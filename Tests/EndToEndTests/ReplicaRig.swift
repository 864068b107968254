import Foundation
import Logging
import RecipeModel
import RecipeProtocol
import ReplicaSync
import Testing

/// A recipe-storage process on fixed loopback ports with its own data folder, so it can stop and
/// come back where the worker expects it (a restart, a restore, a kill -9).
final class StorageNode {
    var folder: String
    private(set) var port: Int
    private(set) var publishPort: Int
    var process: ServiceProcess?
    /// Whether it has run: from then on its endpoint is fixed (the worker knows it).
    private var started = false
    var endpoint: String { "tcp://127.0.0.1:\(port)" }

    init(folder: String = temporaryDataFolder()) throws {
        self.folder = folder
        (port, publishPort) = try Self.drawPorts()
    }

    static func drawPorts() throws -> (Int, Int) {
        let port = try freeLoopbackPort()
        let publish = try freeLoopbackPort()
        return (port, publish)
    }

    /// Starts the storage. A port another process took since it was drawn (tests run side by side) is drawn again on the
    /// first start, and waited for on a restart (the endpoint is fixed then; the old process may still be letting it go).
    func start() async throws {
        for attempt in 1...5 {
            let process = try ServiceProcess("recipe-storage", ["--bind", endpoint, "--publish", "tcp://127.0.0.1:\(publishPort)", "--data", folder])
            do {
                _ = try await process.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
                self.process = process
                started = true
                return
            } catch {
                _ = try? await process.stop()
                guard process.printed.contains("Address already in use"), attempt < 5 else { throw error }
                if started { try await Task.sleep(for: .milliseconds(500)) } else { (port, publishPort) = try Self.drawPorts() }
            }
        }
    }

    func stop(signal: Int32 = SIGTERM) async throws {
        _ = try await process?.stop(signal: signal)
        process = nil
    }
}

/// Storages as processes and a worker that syncs the first with the others only when asked
/// (`--sync-on-request`), so a scenario decides exactly what each replica has seen; everything
/// else goes through the `recipes` CLI as a user would type it.
final class ReplicaRig {
    var nodes: [StorageNode]
    private(set) var worker: ServiceProcess?
    private(set) var workerEndpoint = ""
    let scratch: URL

    init(_ count: Int) async throws {
        nodes = try (0..<count).map { _ in try StorageNode() }
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rv-rig-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        for node in nodes { try await node.start() }
        try await startWorker()
    }

    /// (Re)starts the worker with node 0 as its storage and `replicas` (all other nodes when nil) as its replicas.
    func startWorker(replicas: [Int]? = nil) async throws {
        _ = try await worker?.stop()
        let others = (replicas ?? Array(nodes.indices.dropFirst())).flatMap { ["--replica", nodes[$0].endpoint] }
        let process = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", nodes[0].endpoint, "--sync-on-request"] + others)
        workerEndpoint = try await process.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)
        worker = process
    }

    /// Runs `recipes ARGS` against node `index` (and the worker) and returns what it printed; a failure is recorded.
    @discardableResult
    func cli(_ index: Int, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let run = try await recipes(arguments + ["--worker", workerEndpoint], storage: nodes[index].endpoint)
        #expect(run.status == 0, "recipes \(arguments.joined(separator: " ")) on node \(index): \(run.output)", sourceLocation: sourceLocation)
        return run.output
    }

    /// `recipes ARGS --json` against node `index`, decoded.
    func json<T: Decodable>(_ type: T.Type, _ index: Int, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> T {
        let output = try await cli(index, arguments + ["--json"], sourceLocation: sourceLocation)
        do {
            return try WireCodec.makeDecoder().decode(T.self, from: Data(output.utf8))
        } catch {
            throw ProcessTestError("recipes \(arguments.joined(separator: " ")) --json printed no \(T.self): \(output)")
        }
    }

    /// A photo file from a seed (distinct seeds give distinct blobs).
    func photoFile(seed: UInt64) throws -> String {
        let file = scratch.appendingPathComponent("photo-\(seed).jpg")
        try chaosJPEG(seed: seed).write(to: file)
        return file.path
    }

    /// `recipes sync` until a run moves nothing and no pair fails (bounded); returns the last reply.
    @discardableResult
    func syncUntilQuiet(sourceLocation: SourceLocation = #_sourceLocation) async throws -> WorkerSyncOps.Run.Response {
        var last: WorkerSyncOps.Run.Response?
        for _ in 0..<6 {
            let run = try await recipes(["sync", "--json", "--worker", workerEndpoint], storage: nodes[0].endpoint)
            let reply = try? WireCodec.makeDecoder().decode(WorkerSyncOps.Run.Response.self, from: Data(run.output.utf8))
            last = reply
            if let reply, reply.pairs.allSatisfy({ $0.error == nil && $0.toReplica == 0 && $0.toStorage == 0 }) { return reply }
        }
        Issue.record("the replicas were still moving, or a pair failed, after 6 syncs: \(String(describing: last))", sourceLocation: sourceLocation)
        return try #require(last)
    }

    /// Every node's `recipes export`, file by file; records an issue naming the first file that differs.
    func expectSameExports(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        var exports: [[String: Data]] = []
        for index in nodes.indices {
            let folder = scratch.appendingPathComponent("export-\(UUID().uuidString)")
            try await cli(index, ["export", folder.path], sourceLocation: sourceLocation)
            exports.append(try treeContents(folder))
        }
        for index in exports.indices.dropFirst() {
            let differing = Set(exports[0].keys).symmetricDifference(exports[index].keys)
                .union(exports[0].keys.filter { exports[index][$0] != nil && exports[index][$0] != exports[0][$0] }).sorted()
            #expect(differing.isEmpty, "node \(index)'s export differs from node 0's in \(differing.prefix(6))", sourceLocation: sourceLocation)
        }
    }

    /// Node `index` reached the way the worker reaches it, for what no CLI command does (half a sync, a hostile peer).
    func remote(_ index: Int) throws -> RemoteReplica {
        try RemoteReplica(endpoint: nodes[index].endpoint, logger: Logger(label: "test"))
    }

    func shutdown() async {
        _ = try? await worker?.stop()
        for node in nodes { try? await node.stop() }
        try? FileManager.default.removeItem(at: scratch)
    }
}

@Suite("The replica rig itself")
struct ReplicaRigTests {
    @Test("a storage whose drawn port was taken before it started draws another and starts")
    func takenPortIsDrawnAgain() async throws {
        let node = try StorageNode()
        // Another process takes the port between the draw and the start.
        let taker = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(taker) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(node.port).bigEndian
        let taken = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(taker, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        } && listen(taker, 1) == 0
        try #require(taken)
        let drawn = node.port
        try await node.start()
        #expect(node.port != drawn && node.process != nil)
        #expect(try await recipes(["list"], storage: node.endpoint).status == 0)
        try await node.stop()
        try? FileManager.default.removeItem(atPath: node.folder)
    }
}
