import Foundation
import Messaging
import RecipeModel
import RecipeProtocol
import TestHTTPServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("recipe-worker: batch import jobs", .serialized)
struct BatchJobTests {
    /// Waits (bounded) until `condition` holds for the job.
    static func waitForJob(_ id: UUID, storage: MessageClient, timeout: Duration = .seconds(60),
                           until condition: (ImportJob) -> Bool) async throws -> ImportJob {
        let deadline = ContinuousClock.now + timeout
        // Looked at after every wait, the one that passed the deadline too (a sleep can end late on a busy machine).
        while true {
            let job = try await storage.call(JobOps.Get.self, ByID(id: id))
            if condition(job) { return job }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ProcessTestError("job \(id) did not get there within \(timeout)")
    }

    /// How many stored recipes came from each address.
    static func recipesPerWebsite(_ storage: MessageClient) async throws -> [String: Int] {
        let page = try await storage.call(RecipeOps.List.self, RecipeListQuery(limit: 200))
        var counts: [String: Int] = [:]
        for summary in page.recipes {
            let recipe = try await storage.call(RecipeOps.Get.self, .init(id: summary.id)).recipe
            counts[recipe.website ?? "", default: 0] += 1
        }
        return counts
    }

    @Test("a job survives the worker being killed mid-job: it completes with each URL imported once")
    func killAndResume() async throws {
        let server = try await TestHTTPServer()
        let services = try await Services()
        let storage = try services.client(services.storageEndpoint)
        var urls: [String] = []
        // The first three answered at once, the rest held until the worker is killed: the job cannot finish before
        // the kill however fast or loaded the machine is (delays left margins that a busy or quick run ate).
        let held = Gate()
        for index in 1...12 {
            let path = "/slow/recipe-\(index)"
            let page = TestHTTPServer.Response.html(recipePage(name: "Batch Recipe \(index)", ingredients: ["\(index) eggs"], image: nil))
            server.route(path, index <= 3 ? page : .held(held, page))
            urls.append(server.baseURL + path)
        }
        urls.insert("\(server.baseURL)/missing-page", at: 5)
        urls.insert("not a web address", at: 9)

        // The held pages are waited for as long as a fetch may take (600 s), so they outlast whatever keeps this test
        // from its kill (a busy run); a fetch timed out first would be that URL's failure, and the case would prove nothing.
        let (first, endpoint) = try await services.startWorker(extra: ["--concurrency", "2", "--fetch-timeout", "600", "--read-timeout", "600"])
        let started = try await recipes(["import", "--no-wait", "--json"] + urls, storage: services.storageEndpoint,
                                        environment: ["RECIPES_WORKER": endpoint])
        #expect(started.status == 0, "\(started.output)")
        let job = try WireCodec.makeDecoder().decode(ImportJob.self, from: Data(started.output.utf8))
        #expect(job.total == 14 && job.state == .queued)

        _ = try await Self.waitForJob(job.id, storage: storage) { $0.imported + $0.failed >= 3 }
        kill(first.pid, SIGKILL)
        _ = try await first.waitForExit()
        let midway = try await storage.call(JobOps.Get.self, ByID(id: job.id))
        #expect(midway.state == .running && midway.pending > 0, "the job finished before the worker was killed; it must be cut short")
        held.open()

        let (second, _) = try await services.startWorker(extra: ["--concurrency", "2"])
        let done = try await Self.waitForJob(job.id, storage: storage) { $0.state == .done }
        #expect(done.imported == 12 && done.failed == 2)
        let items = try #require(done.items)
        #expect(items[5].state == .failed && items[5].error?.code == .fetchFailed)
        #expect(items[9].state == .failed && items[9].error?.code == .unsupportedURL)
        #expect(items.filter { $0.state == .imported }.allSatisfy { $0.recipeID != nil && $0.recipeName?.hasPrefix("Batch Recipe") == true })

        let perWebsite = try await Self.recipesPerWebsite(storage)
        for url in urls where url.contains("/slow/") { #expect(perWebsite[url] == 1, "\(url) stored \(perWebsite[url] ?? 0) times") }
        #expect(perWebsite.values.reduce(0, +) == 12)
        #expect(second.printed.contains("resuming import job"))
        _ = try await second.stop()
        await services.stop()
        await server.shutdown()
    }

    @Test("a job whose storage is killed mid-job pauses in one line, not one per URL, and completes once the storage is back")
    func storageAwayPausesTheJob() async throws {
        let server = try await TestHTTPServer()
        var urls: [String] = []
        // The first two answered at once, the rest held until the storage is killed: the job is mid-way at the kill
        // however fast or loaded the machine is.
        let held = Gate()
        for index in 1...30 {
            let path = "/paced/recipe-\(index)"
            let page = TestHTTPServer.Response.html(recipePage(name: "Paced Recipe \(index)", ingredients: ["\(index) eggs"], image: nil))
            server.route(path, index <= 2 ? page : .held(held, page))
            urls.append(server.baseURL + path)
        }
        let folder = temporaryDataFolder()
        let first = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", folder])
        let storageEndpoint = try await first.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        let worker = try ServiceProcess("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", storageEndpoint, "--allow-host", "127.0.0.1",
                                                          // The held pages outlast whatever keeps the test from its kill.
                                                          "--concurrency", "2", "--connect-timeout", "2", "--fetch-timeout", "600",
                                                          "--read-timeout", "600", "--storage-timeout", "2"],
                                        environment: ["RECIPES_WORKER_FETCH_ONLY_ALLOWED": "1"])
        let workerEndpoint = try await worker.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations=import"#)
        var configuration = MessageClient.Configuration(endpoint: storageEndpoint, serviceName: "storage")
        configuration.timeout = .seconds(30)
        configuration.attempts = 1
        let started = try await recipes(["import", "--no-wait", "--json"] + urls, storage: storageEndpoint,
                                        environment: ["RECIPES_WORKER": workerEndpoint])
        #expect(started.status == 0, "\(started.output)")
        let job = try WireCodec.makeDecoder().decode(ImportJob.self, from: Data(started.output.utf8))
        _ = try await Self.waitForJob(job.id, storage: try MessageClient(configuration: configuration)) { $0.imported >= 2 }

        // A crash, not a stop: the worker's calls get no answer at all.
        kill(first.pid, SIGKILL)
        _ = try await first.waitForExit()
        held.open()
        _ = try await worker.waitForOutput("the import job pauses", timeout: .seconds(90))
        let second = try ServiceProcess("recipe-storage", ["--bind", storageEndpoint, "--publish", "tcp://127.0.0.1:*", "--data", folder])
        _ = try await second.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        let done = try await Self.waitForJob(job.id, storage: try MessageClient(configuration: configuration), timeout: .seconds(120)) { $0.state == .done }
        #expect(done.imported == 30 && done.failed == 0)
        let perWebsite = try await Self.recipesPerWebsite(try MessageClient(configuration: configuration))
        for url in urls { #expect(perWebsite[url] == 1, "\(url) stored \(perWebsite[url] ?? 0) times") }

        let log = worker.printed
        let perURLLines = log.components(separatedBy: "could not mark a URL as begun").count - 1
            + log.components(separatedBy: "the URL stays pending").count - 1
        #expect(perURLLines == 0, "no line per URL while the storage was away:\n\(log.suffix(3_000))")
        #expect(log.components(separatedBy: "could not record a URL's result").count - 1 <= 2, "at most the two URLs in flight")
        _ = try await worker.stop()
        _ = try await second.stop()
        await server.shutdown()
    }

    @Test("recipes import --file waits with progress; recipes jobs lists jobs and shows each URL's result")
    func fileAndJobs() async throws {
        let server = try await TestHTTPServer()
        let services = try await Services()
        let (worker, endpoint) = try await services.startWorker()
        let env = ["RECIPES_WORKER": endpoint]
        server.route("/a", .html(recipePage(name: "Apple Crumble", ingredients: ["4 apples"], image: nil)))
        server.route("/b", .html(recipePage(name: "Banana Bread", ingredients: ["3 bananas"], image: nil)))
        server.route("/blog", .html("<html><body>No recipe here.</body></html>"))
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("rv-urls-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: list) }
        try Data("""
            # weekend baking
            \(server.baseURL)/a
            \(server.baseURL)/b   # from the newsletter

            \(server.baseURL)/blog
            \(server.baseURL)/a
            """.utf8).write(to: list)

        let waited = try await recipes(["import", "--file", list.path], storage: services.storageEndpoint, environment: env)
        #expect(waited.status == 0, "\(waited.output)")
        #expect(waited.output.contains("✓ Apple Crumble") && waited.output.contains("✓ Banana Bread"), "\(waited.output)")
        #expect(waited.output.contains("✗ \(server.baseURL)/blog: no recipe found"), "\(waited.output)")
        #expect(waited.output.contains("done: 2 imported, 1 failed, of 3"), "\(waited.output)")

        let jobs = try await recipes(["jobs"], storage: services.storageEndpoint)
        #expect(jobs.status == 0 && jobs.output.contains("done") && jobs.output.contains("3/3"), "\(jobs.output)")
        let id = try #require(jobs.output.split(separator: "\n").dropFirst().first?.split(separator: " ").first.map(String.init))
        let shown = try await recipes(["jobs", id], storage: services.storageEndpoint)
        #expect(shown.output.contains("Apple Crumble") && shown.output.contains("no_recipe_found"), "\(shown.output)")
        let missing = try await recipes(["jobs", "ffffffff"], storage: services.storageEndpoint)
        #expect(missing.status == 66)

        // A list with a binary line (a file given by mistake) is refused by that line's number; no job starts.
        try (Data("\(server.baseURL)/a\r\n# next\r\n".utf8) + Data([0xFF, 0xFE, 0x00, 0x41, 0x0A])).write(to: list)
        let binary = try await recipes(["import", "--file", list.path], storage: services.storageEndpoint, environment: env)
        #expect(binary.status == 65 && binary.output.contains("\(list.path) line 3 is not a web address: it holds a control character"),
                "\(binary.output)")
        let after = try await recipes(["jobs", "--json"], storage: services.storageEndpoint)
        #expect(after.output.components(separatedBy: "\"id\"").count == 2, "still one job: \(after.output)")
        _ = try await worker.stop()
        await services.stop()
        await server.shutdown()
    }
}
