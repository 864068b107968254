import ArgumentParser
import BenchmarkSupport
import Foundation
import Logging
import Messaging
import RecipeModel
import RecipeProtocol
import RecipeStore
import StorageService

/// `storage-bench`: recipe-storage under a realistic collection, beside the
/// baselines measured in the same run — the bare ZeroMQ echo of the same reply
/// size, and the same query through GRDB in-process.
@main
struct StorageBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage-bench",
        abstract: "Measure recipe-storage (get, list, search, create) against a bare echo and in-process GRDB."
    )

    @Option(help: "Recipes in the collection.")
    var recipes = 100_000

    @Option(help: "Timed requests per measurement.")
    var requests = 2_000

    @Option(help: "Creates per client in the create-throughput runs.")
    var creates = 200

    @Option(help: "Reuse (or keep) the generated collection in this folder instead of a temporary one.")
    var data: String?

    @Flag(help: "Only the recipe.get rows (in-process, through the service, and an echo of the same size through it), for profiling.")
    var getOnly = false

    @Flag(help: "Only the recipe.create rows (in-process one at a time, then through the service with 1 and 8 clients), for profiling.")
    var createOnly = false

    @Flag(help: "Only the recipe.search rows: through the service and in-process, and in-process the first search after a change to the index.")
    var searchOnly = false

    func validate() throws {
        guard recipes >= 100 else { throw ValidationError("--recipes must be at least 100") }
        guard requests >= 100 else { throw ValidationError("--requests must be at least 100") }
        guard creates >= 10 else { throw ValidationError("--creates must be at least 10") }
    }

    func run() async throws {
        let folder = data.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("rv-storage-bench-\(getpid())")
        defer { if data == nil { try? FileManager.default.removeItem(at: folder) } }

        let ids = try await generate(in: folder, listing: !createOnly)
        print("RecipeVault storage benchmark: \(createOnly ? "\(recipes)+" : "\(ids.count)") recipes, \(requests) timed requests per row, tcp loopback")
        print("")

        // In-process GRDB baselines, on the same file (the service is not running yet).
        let store = try RecipeStore(folder: folder)
        if createOnly { return try await measureCreateOnly(store: store, folder: folder) }
        var generator = RecipeGenerator(seed: 7)
        let getIDs = (0..<requests).map { _ in generator.pick(ids) }
        // What people type: a word or two, often a prefix; drawn from the collection's own vocabulary.
        let terms = (0..<requests).map { index -> String in
            let word = generator.vocabularyWord()
            return index % 2 == 0 ? word : String(word.prefix(max(3, word.count - 2))) + " " + String(generator.pick(RecipeGenerator.foods).prefix(4))
        }
        // The worst case: the two most common words of the collection.
        let commonTerms = Array(repeating: "\(RecipeGenerator.vocabulary[0]) \(RecipeGenerator.vocabulary[1])", count: max(100, requests / 10))
        // One untimed pass over the ids first: a run right after another benchmark found the file out of the OS
        // cache and timed disk reads (371 µs in-process against 121 µs warm); the service rows after it are warm.
        for id in getIDs { _ = try await store.recipeDetail(id, servings: nil) }
        let localGet = try await time(getIDs) { _ = try await store.recipeDetail($0, servings: nil) }
        if getOnly {
            let detail = try await store.recipeDetail(getIDs[0], servings: nil)
            let reply = try WireCodec.encodeReply(id: UUID().uuidString, body: detail, using: WireJSONEncoder())
            // The reply's JSON alone: encoded as the service does, decoded as the client does.
            let (encoder, decoder) = (WireJSONEncoder(), WireJSONDecoder())
            let replyID = "0d5d8c4e-5b55-4f0e-9d7e-9d7f2b8e2a11"
            let encoding = try await time(getIDs) { _ in _ = try WireCodec.encodeReply(id: replyID, body: detail, using: encoder) }
            let decoding = try await time(getIDs) { _ in _ = try WireCodec.decodeReply(RecipeDetail.self, from: reply, using: decoder) }
            // The service's whole handling of one request (envelope, route, read, reply), without a socket.
            var routes = Routes()
            routes.addStorageOperations(store: store)
            let getFrames = try getIDs.map { try WireCodec.encodeRequest(id: RequestID.make(), op: RecipeOps.Get.name, body: RecipeOps.Get.Request(id: $0), using: encoder) }
            let logger = Logger(label: "storage-bench")
            let handling = try await time(getFrames) { _ = await routes.reply(to: $0, logger: logger) }
            try store.close()
            try await measureGetOnly(folder: folder, ids: getIDs, local: [("recipe.get in-process", localGet),
                                                                          ("reply JSON, encode", encoding), ("reply JSON, decode", decoding),
                                                                          ("request handled, no socket", handling)],
                                     reply: reply)
            return
        }
        let localList = try await time(Array(RecipeGenerator.cuisines.prefix(4).flatMap { Array(repeating: $0, count: requests / 4) })) {
            _ = try await store.listRecipes(RecipeListQuery(cuisine: $0, sort: .updatedAt, descending: true, limit: 50))
        }
        let localSearch = try await time(terms) { _ = try await store.searchRecipes($0, limit: 20) }
        let localCommon = try await time(commonTerms) { _ = try await store.searchRecipes($0, limit: 20) }
        let localCommonFirst = try await firstSearchesAfterAChange(store: store, ids: getIDs, text: commonTerms[0])
        if searchOnly {
            try store.close()
            let service = try ServiceUnderTest(folder: folder)
            defer { service.stop() }
            let client = try MessageClient(configuration: .init(endpoint: service.endpoint, serviceName: "storage"))
            let (search, common) = try await withTaskExecutorPreference(client.thread) {
                (try await time(terms) { _ = try await client.call(RecipeOps.Search.self, .init(text: $0)) },
                 try await time(commonTerms) { _ = try await client.call(RecipeOps.Search.self, .init(text: $0)) })
            }
            print(row("", "p50", "p99", "in-process p50", "in-process p99", labelWidth: 34, columnWidth: 16))
            for (label, wire, local) in [("recipe.search", search, localSearch), ("  two most common words", common, localCommon),
                                         ("  the same, first after a change", [], localCommonFirst)] {
                let stats = wire.isEmpty ? nil : Stats(wire)
                print(row(label, stats?.p50.micros ?? "—", stats?.p99.micros ?? "—", Stats(local).p50.micros, Stats(local).p99.micros,
                          labelWidth: 34, columnWidth: 16))
            }
            return
        }
        let sampleReply = try WireCodec.encodeReply(id: UUID().uuidString, body: try await store.recipeDetail(getIDs[0], servings: nil),
                                                    using: WireCodec.makeEncoder())
        try store.close()

        let service = try ServiceUnderTest(folder: folder)
        defer { service.stop() }
        let client = try MessageClient(configuration: .init(endpoint: service.endpoint, serviceName: "storage"))
        let (wireGet, wireList, wireSearch, wireCommon) = try await withTaskExecutorPreference(client.thread) {
            let get = try await time(getIDs) { _ = try await client.call(RecipeOps.Get.self, .init(id: $0)) }
            let list = try await time(Array(RecipeGenerator.cuisines.prefix(4).flatMap { Array(repeating: $0, count: requests / 4) })) {
                _ = try await client.call(RecipeOps.List.self, RecipeListQuery(cuisine: $0, sort: .updatedAt, descending: true, limit: 50))
            }
            let search = try await time(terms) { _ = try await client.call(RecipeOps.Search.self, .init(text: $0)) }
            let common = try await time(commonTerms) { _ = try await client.call(RecipeOps.Search.self, .init(text: $0)) }
            return (get, list, search, common)
        }
        let bare = try BareEcho.measure(endpoint: "tcp://127.0.0.1:*", payload: sampleReply, count: requests, warmup: requests / 10)

        // Reads before writes: the creates leave a write-ahead log for the checkpoint to copy, which would share
        // the two cores with the reads.
        let getEight = try await getThroughput(endpoint: service.endpoint, ids: ids, clients: 8)
        // The same, over the ids the p50 row reads (a sample of `requests`, read before): what the service itself
        // costs, without the page reads of recipes spread over the whole file.
        let getEightSampled = try await getThroughput(endpoint: service.endpoint, ids: getIDs, clients: 8)
        let createOne = try await createThroughput(endpoint: service.endpoint, clients: 1)
        let createEight = try await createThroughput(endpoint: service.endpoint, clients: 8)
        let bareEight = try await WrapperEcho.throughput(endpoint: "tcp://127.0.0.1:*", payload: sampleReply, clients: 8, perClient: requests / 8)
        let rss = service.peakResidentBytes
        try await removeCreated(createOne.created + createEight.created, endpoint: service.endpoint)

        let bareStats = Stats(bare)
        print(row("", "p50", "p99", "in-process p50", "bare echo p50", labelWidth: 26, columnWidth: 16))
        for (label, wire, local) in [("recipe.get", wireGet, localGet), ("recipe.list (50)", wireList, localList),
                                     ("recipe.search", wireSearch, localSearch),
                                     ("  two most common words", wireCommon, localCommon),
                                     ("  first after a change", [], localCommonFirst)] {
            let stats = wire.isEmpty ? nil : Stats(wire)
            print(row(label, stats?.p50.micros ?? "—", stats?.p99.micros ?? "—", Stats(local).p50.micros, bareStats.p50.micros,
                      labelWidth: 26, columnWidth: 16))
        }
        print("")
        print(row("throughput", "req/s", "bare echo req/s", "ratio", labelWidth: 26, columnWidth: 16))
        print(row("recipe.get, 8 clients", String(format: "%.0f", getEight), String(format: "%.0f", bareEight), ratio(getEight / bareEight),
                  labelWidth: 26, columnWidth: 16))
        print(row("  the p50 row's \(getIDs.count) ids", String(format: "%.0f", getEightSampled), String(format: "%.0f", bareEight),
                  ratio(getEightSampled / bareEight), labelWidth: 26, columnWidth: 16))
        print(row("recipe.create, 1 client", String(format: "%.0f", createOne.perSecond), "", "", labelWidth: 26, columnWidth: 16))
        print(row("recipe.create, 8 clients", String(format: "%.0f", createEight.perSecond), String(format: "%.0f", bareEight),
                  ratio(createEight.perSecond / bareEight), labelWidth: 26, columnWidth: 16))
        print("")
        print("peak RSS of recipe-storage: \(rss / 1_048_576) MiB")
        print("")
        let getRatio = Stats(wireGet).p50 / bareStats.p50
        let searchP50 = Stats(wireSearch).p50
        func verdict(_ met: Bool) -> String { met ? "met" : "NOT met" }
        print("goals:")
        print("  recipe.get p50 within 2× the bare echo: \(ratio(getRatio)) — \(verdict(getRatio <= 2))")
        print("  8 clients get at least half the bare echo throughput: \(ratio(getEight / bareEight)) — \(verdict(getEight / bareEight >= 0.5))")
        print("  1 client creates at least 1,000 a second: \(String(format: "%.0f", createOne.perSecond)) — \(verdict(createOne.perSecond >= 1_000))")
        print("  8 clients create at least 2,000 a second: \(String(format: "%.0f", createEight.perSecond)) — \(verdict(createEight.perSecond >= 2_000))")
        print("  recipe.search p50 under 5 ms at \(ids.count) recipes: \(searchP50.millis) — \(verdict(searchP50 < .milliseconds(5)))")
        let commonP50 = Stats(wireCommon).p50
        print("  the two most common words p50 under 20 ms: \(commonP50.millis) — \(verdict(commonP50 < .milliseconds(20)))")
        print("  peak RSS under 150 MB: \(rss / 1_000_000) MB — \(verdict(rss < 150_000_000))")
    }

    /// Fills `folder` with `recipes` generated recipes (keeping what is there); returns every id.
    private func generate(in folder: URL, listing: Bool) async throws -> [UUID] {
        let store = try RecipeStore(folder: folder)
        defer { try? store.close() }
        var generator = RecipeGenerator(seed: 42)
        let existing = try await store.stats().recipes
        let start = ContinuousClock.now
        var index = existing
        while index < recipes {
            let batch = (index..<min(recipes, index + 1_000)).map { (id: UUID(), draft: generator.draft($0)) }
            _ = try await store.importRecipes(batch)
            index += batch.count
        }
        if index > existing {
            print("generated \(index - existing) recipes in \((ContinuousClock.now - start).millis)")
        }
        var ids: [UUID] = []
        guard listing else { return ids }
        var query = RecipeListQuery(sort: .createdAt, limit: RecipeListQuery.maxLimit)
        while true {
            let page = try await store.listRecipes(query)
            ids += page.recipes.map(\.id)
            guard let next = page.nextCursor else { break }
            query.cursor = next
        }
        return ids
    }

    /// The create rows alone: in-process one at a time (new ids, as the CLI makes them), then through the service.
    private func measureCreateOnly(store: RecipeStore, folder: URL) async throws {
        var drafts = RecipeGenerator(seed: 99)
        let inputs = (0..<creates).map { (id: UUID.timeOrdered(), draft: drafts.draft($0)) }
        let localCreate = try await time(inputs) { _ = try await store.createRecipe(id: $0.id, $0.draft) }
        try store.close()
        let service = try ServiceUnderTest(folder: folder)
        defer { service.stop() }
        // The service's processor time per create (all its threads, user and system): steadier than the rates on a
        // shared VM, so a change to the write path shows in it when the rates only move within their noise.
        var cpuStart = service.processorTime
        let createOne = try await createThroughput(endpoint: service.endpoint, clients: 1)
        let cpuOne = (service.processorTime - cpuStart) / max(createOne.latencies.count, 1)
        cpuStart = service.processorTime
        let createEight = try await createThroughput(endpoint: service.endpoint, clients: 8)
        let cpuEight = (service.processorTime - cpuStart) / max(createEight.latencies.count, 1)
        try await removeCreated(inputs.map(\.id) + createOne.created + createEight.created, endpoint: service.endpoint)
        let local = Stats(localCreate)
        print(row("", "p50", "p99", "per s", "service CPU", labelWidth: 26, columnWidth: 16))
        print(row("recipe.create in-process", local.p50.micros, local.p99.micros, String(format: "%.0f", 1 / local.p50.seconds), "",
                  labelWidth: 26, columnWidth: 16))
        let one = Stats(createOne.latencies), eight = Stats(createEight.latencies)
        print(row("recipe.create, 1 client", one.p50.micros, one.p99.micros, String(format: "%.0f", createOne.perSecond), cpuOne.micros,
                  labelWidth: 26, columnWidth: 16))
        print(row("recipe.create, 8 clients", eight.p50.micros, eight.p99.micros, String(format: "%.0f", createEight.perSecond),
                  cpuEight.micros, labelWidth: 26, columnWidth: 16))
    }

    /// The get rows alone: in-process, through the service, an echo of a reply of the same size through the
    /// service, and the bare libzmq echo of the reply (the goal's baseline).
    private func measureGetOnly(folder: URL, ids: [UUID], local: [(String, [Duration])], reply: Data) async throws {
        let service = try ServiceUnderTest(folder: folder)
        defer { service.stop() }
        let client = try MessageClient(configuration: .init(endpoint: service.endpoint, serviceName: "storage"))
        let replyText = String(decoding: reply, as: UTF8.self)
        let (echo, get, serviceCPU, benchCPU) = try await withTaskExecutorPreference(client.thread) {
            let echo = try await time(ids) { _ in _ = try await client.call(System.Echo.self, .init(text: replyText)) }
            let (serviceBefore, benchBefore) = (service.processorTime, processorTime())
            let get = try await time(ids) { _ = try await client.call(RecipeOps.Get.self, .init(id: $0)) }
            return (echo, get, service.processorTime - serviceBefore, processorTime() - benchBefore)
        }
        let bareBefore = processorTime()
        let bare = try BareEcho.measure(endpoint: "tcp://127.0.0.1:*", payload: reply, count: ids.count, warmup: ids.count / 10)
        let bareCPU = processorTime() - bareBefore
        print("reply: \(reply.count) bytes")
        print(row("", "p50", "p99", labelWidth: 28, columnWidth: 16))
        for (label, samples) in local + [("bare libzmq echo of the reply", bare), ("system.echo, same size", echo), ("recipe.get", get)] {
            let stats = Stats(samples)
            print(row(label, stats.p50.micros, stats.p99.micros, labelWidth: 28, columnWidth: 16))
        }
        // The timed requests and their tenth of warm-up.
        let sent = Double(ids.count + ids.count / 10)
        print("processor time per request, both ends: recipe.get \(((serviceCPU + benchCPU) / sent).micros) (service \((serviceCPU / sent).micros), client \((benchCPU / sent).micros)); bare echo \((bareCPU / sent).micros)")
        print("recipe.get p50 / bare echo p50: \(ratio(Stats(get).p50 / Stats(bare).p50)) (goal: at most 2×)")
        // The rate with one client and with eight, and the service's processor time per request in each.
        for clients in [1, 8] {
            let before = service.processorTime
            let rate = try await getThroughput(endpoint: service.endpoint, ids: ids, clients: clients)
            let cpu = (service.processorTime - before) / Double(requests / clients * clients + clients)
            print("recipe.get, \(clients) client\(clients == 1 ? "" : "s"): \(String(format: "%.0f", rate)) /s (service processor time per get \(cpu.micros))")
        }
    }

    /// A search right after a change to the search index (a recipe's notes edited): what search keeps between
    /// searches (`SearchRanking`) is read again, as every search read it before.
    private func firstSearchesAfterAChange(store: RecipeStore, ids: [UUID], text: String) async throws -> [Duration] {
        var samples: [Duration] = []
        for (round, id) in ids.prefix(20).enumerated() {
            let recipe = try await store.recipe(id)
            var draft = RecipeDraft(recipe)
            draft.notes = (recipe.notes ?? "") + " again \(round)"
            _ = try await store.updateRecipe(id: id, expectedVersion: recipe.version, draft)
            let start = ContinuousClock.now
            _ = try await store.searchRecipes(text, limit: 20)
            samples.append(ContinuousClock.now - start)
        }
        return samples
    }

    private func time<T: Sendable>(_ inputs: [T], _ body: (T) async throws -> Void) async throws -> [Duration] {
        for input in inputs.prefix(inputs.count / 10) { try await body(input) } // warm-up
        var samples: [Duration] = []
        samples.reserveCapacity(inputs.count)
        for input in inputs {
            let start = ContinuousClock.now
            try await body(input)
            samples.append(ContinuousClock.now - start)
        }
        return samples
    }

    /// Creates per second with `clients` clients, each sending `creates` creates one after another. The drafts
    /// are made before the clock starts, so the figure is the service's, not the generator's.
    private func createThroughput(endpoint: String, clients: Int) async throws -> (perSecond: Double, latencies: [Duration], created: [UUID]) {
        let creates = self.creates
        let drafts = (0..<clients).map { clientIndex in
            var generator = RecipeGenerator(seed: UInt64(1_000 + clientIndex))
            return (0..<creates).map { generator.draft($0) }
        }
        let connected = try (0..<clients).map { _ in try MessageClient(configuration: .init(endpoint: endpoint, serviceName: "storage")) }
        let start = ContinuousClock.now
        let (latencies, created) = try await withThrowingTaskGroup(of: ([Duration], [UUID]).self) { group in
            for (client, mine) in zip(connected, drafts) {
                group.addTask {
                    try await withTaskExecutorPreference(client.thread) {
                        var latencies: [Duration] = [], created: [UUID] = []
                        latencies.reserveCapacity(mine.count)
                        for draft in mine {
                            let id = UUID.timeOrdered()
                            let sent = ContinuousClock.now
                            _ = try await client.call(RecipeOps.Create.self, .init(id: id, recipe: draft))
                            latencies.append(ContinuousClock.now - sent)
                            created.append(id)
                        }
                        return (latencies, created)
                    }
                }
            }
            return try await group.reduce(into: ([Duration](), [UUID]())) { $0.0 += $1.0; $0.1 += $1.1 }
        }
        return (Double(clients * creates) / (ContinuousClock.now - start).seconds, latencies, created)
    }

    /// Deletes the recipes the create rows added, so a collection kept with `--data` stays at `--recipes` and the
    /// next run's read rows measure the size they print (runs that kept them measured a collection 20-50% larger).
    private func removeCreated(_ ids: [UUID], endpoint: String) async throws {
        let client = try MessageClient(configuration: .init(endpoint: endpoint, serviceName: "storage"))
        try await withTaskExecutorPreference(client.thread) {
            for id in ids { _ = try await client.call(RecipeOps.Delete.self, .init(id: id)) }
        }
    }

    private func getThroughput(endpoint: String, ids: [UUID], clients: Int) async throws -> Double {
        let perClient = requests / clients
        // Connected, and one request answered each, before the clock starts: the rate of requests, not of connecting.
        let connected = try (0..<clients).map { _ in try MessageClient(configuration: .init(endpoint: endpoint, serviceName: "storage")) }
        for client in connected {
            try await withTaskExecutorPreference(client.thread) { _ = try await client.call(RecipeOps.Get.self, .init(id: ids[0])) }
        }
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (clientIndex, client) in connected.enumerated() {
                group.addTask {
                    var generator = RecipeGenerator(seed: UInt64(2_000 + clientIndex))
                    try await withTaskExecutorPreference(client.thread) {
                        for _ in 0..<perClient { _ = try await client.call(RecipeOps.Get.self, .init(id: generator.pick(ids))) }
                    }
                }
            }
            try await group.waitForAll()
        }
        return Double(clients * perClient) / (ContinuousClock.now - start).seconds
    }
}
