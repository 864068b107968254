import Foundation
import RecipeProtocol
import Testing
import Synchronization
import TestHTTPServer

#if canImport(Glibc)
import Glibc
#endif

/// The project folder (the README's commands run from here).
let projectFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

private let handedOutPorts = Mutex<Set<Int>>([])

/// A TCP port on 127.0.0.1 that was free a moment ago, for a process that must come back on the same
/// endpoint. It is drawn below the system's ephemeral range (32768 and up on Linux), where ports bound to
/// `*` by tests running alongside, and outgoing connections, never land between this check and the bind.
/// No port is handed out twice in one test run, so two endpoints of one test, or of two tests starting at once,
/// never draw the same free port before either binds it.
func freeLoopbackPort() throws -> Int {
    for _ in 0..<500 {
        let port = Int.random(in: 20_000..<32_768)
        guard handedOutPorts.withLock({ $0.insert(port).inserted }) else { continue }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { break }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        if bound { return port }
    }
    throw ProcessTestError("cannot find a free port between 20000 and 32767")
}

/// `deploy/local` as the README runs it, with the test's data folder and ports, and the executables
/// this test run built (RECIPES_BIN: the script's release build is left out, as it would take minutes).
struct LocalRun {
    let home: URL
    let storage: String
    let worker: String
    let environment: [String: String]

    init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("rv-local-\(UUID().uuidString.prefix(8))")
        let ports = try (0..<3).map { _ in try freeLoopbackPort() }
        storage = "tcp://127.0.0.1:\(ports[0])"
        worker = "tcp://127.0.0.1:\(ports[1])"
        let binaries = URL(fileURLWithPath: try ServiceProcess.executable("recipe-storage")).deletingLastPathComponent().path
        environment = [
            "RECIPES_HOME": home.path, "RECIPES_BIN": binaries,
            "RECIPES_STORAGE_BIND": storage, "RECIPES_WORKER_BIND": worker,
            "RECIPES_STORAGE_PUBLISH": "tcp://127.0.0.1:\(ports[2])",
            // The fixture pages are served on loopback, which the worker refuses unless allowed.
            "RECIPES_WORKER_ALLOW_HOSTS": "127.0.0.1",
            "RECIPES_STORAGE": "", "RECIPES_WORKER": "", "NO_COLOR": "1",
        ]
    }

    /// Runs `deploy/local <command>` and returns its exit status and output.
    func callAsFunction(_ command: String) async throws -> (status: Int32, output: String) {
        let script = projectFolder.appendingPathComponent("deploy/local").path
        let process = try ServiceProcess(path: "/bin/bash", [script, command], environment: environment)
        guard let status = try await process.waitForExit(timeout: .seconds(120)) else {
            _ = try? await process.stop(signal: SIGKILL)
            throw ProcessTestError("deploy/local \(command) did not finish; printed:\n\(process.printed)")
        }
        return (status, process.printed)
    }

    func pid(_ name: String) -> pid_t? {
        guard let text = try? String(contentsOf: home.appendingPathComponent("run/\(name).pid"), encoding: .utf8) else { return nil }
        return pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func log(_ name: String) -> String {
        (try? String(contentsOf: home.appendingPathComponent("logs/\(name).log"), encoding: .utf8)) ?? ""
    }
}

@Suite("deploy/local: the README's first command, end to end")
struct LocalRunTests {
    @Test("start loads the samples and prints how to use the CLI; status and an import work; stop ends both; a second start keeps the data")
    func startImportStopRestart() async throws {
        let local = try LocalRun()
        defer { try? FileManager.default.removeItem(at: local.home) }
        let server = try await TestHTTPServer(pagesFolder: savedPagesFolder)
        var started = false
        do {
            let start = try await local("start")
            started = true
            #expect(start.status == 0, "\(start.output)")
            #expect(start.output.contains("First start: the sample recipes are loaded"), "\(start.output)")
            #expect(start.output.contains("recipes list") && start.output.contains("deploy/local stop"), "usage is printed: \(start.output)")
            #expect(start.output.contains("CURVE is off"), "the run says security is off: \(start.output)")
            let storagePID = try #require(local.pid("recipe-storage"))
            let workerPID = try #require(local.pid("recipe-worker"))

            let cli = ["RECIPES_WORKER": local.worker]
            let status = try await recipes(["status"], storage: local.storage, environment: cli)
            #expect(status.status == 0, "\(status.output)")
            #expect(status.output.contains("recipe-worker: up at \(local.worker)"), "\(status.output)")
            #expect(status.output.contains("protocol 1, sync rules \(SyncRules.current), up"), "\(status.output)")
            #expect(status.output.contains("8 recipes (8 starters"), "\(status.output)")

            let page = "\(server.baseURL)/pages/allsavoryrecipes.com/allsavoryrecipes_1.html"
            let imported = try await recipes(["import", page], storage: local.storage, environment: cli)
            #expect(imported.status == 0 && imported.output.contains("Chicken Bacon Ranch Pasta"), "\(imported.output)")

            let stop = try await local("stop")
            started = false
            #expect(stop.status == 0 && stop.output.contains("recipe-worker stopped.") && stop.output.contains("recipe-storage stopped."),
                    "\(stop.output)")
            #expect(kill(storagePID, 0) != 0 && kill(workerPID, 0) != 0, "both processes have exited")
            #expect(local.log("recipe-storage").contains("database closed"), "the storage shut down cleanly")
            #expect(local.log("recipe-worker").contains("stopping"), "the worker shut down cleanly")

            // Again: the same data, no second helping of samples.
            let again = try await local("start")
            started = true
            #expect(again.status == 0 && again.output.contains("Using the recipes in"), "\(again.output)")
            let list = try await recipes(["list"], storage: local.storage)
            #expect(list.output.contains("Chicken Bacon Ranch Pasta"), "\(list.output)")
            let after = try await recipes(["status"], storage: local.storage, environment: cli)
            #expect(after.output.contains("9 recipes (8 starters"), "\(after.output)")
            #expect(try await local("stop").status == 0)
            started = false
        } catch {
            if started { _ = try? await local("stop") }
            throw error
        }
        await server.shutdown()
    }

    @Test("an unknown command says what the script does")
    func unknownCommand() async throws {
        let result = try await LocalRun()("restart-everything")
        #expect(result.status != 0 && result.output.contains("use start, run, stop or status"), "\(result.output)")
    }
}
