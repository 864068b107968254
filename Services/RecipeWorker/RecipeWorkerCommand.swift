import ArgumentParser
import Foundation
import Logging
import Messaging
import PhotoProcessing
import RecipeProtocol
import ServiceLifecycle
import ServiceOptions
import WebFetch
import WorkerService
import ZeroMQ

/// `recipe-worker`: imports recipes from the web and runs batch imports for RecipeVault.
@main
struct RecipeWorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recipe-worker",
        abstract: "Import recipes from web pages into RecipeVault and run batch imports.",
        discussion: """
            Only pages on the public internet are fetched: loopback, private, link-local and other \
            non-public addresses are refused unless allowed with --allow-host.
            """,
        version: RecipeVault.version
    )

    @Option(name: .long, help: ArgumentHelp("Endpoint to answer requests on (environment: RECIPES_WORKER_BIND; default \(RecipeVault.defaultWorkerEndpoint)).", valueName: "endpoint"))
    var bind: String?

    @Option(name: .long, help: ArgumentHelp("recipe-storage endpoint (environment: RECIPES_STORAGE; default \(RecipeVault.defaultStorageEndpoint)).", valueName: "endpoint"))
    var storage: String?

    @Option(name: .customLong("replica"), help: ArgumentHelp(
        "Another recipe-storage to keep in step with --storage (a laptop's copy: tcp://laptop:5555). Repeatable; environment: RECIPES_WORKER_REPLICAS, comma-separated.",
        valueName: "endpoint"))
    var replicas: [String] = []

    @Option(name: .long, help: ArgumentHelp(
        "CURVE secret key file of this worker (environment: RECIPES_WORKER_SECRET_KEY_FILE). The worker answers only clients in --client-keys and connects to the storages with this key.",
        valueName: "file"))
    var secretKey: String?

    @Option(name: .customLong("client-keys"), help: ArgumentHelp(
        "File of public keys allowed to connect (the CLI's): one per line. Repeatable; environment: RECIPES_WORKER_CLIENT_KEYS_FILE, comma-separated.",
        valueName: "file"))
    var clientKeys: [String] = []

    @Option(name: .long, help: ArgumentHelp("Public key file of --storage, to reach it with CURVE (environment: RECIPES_STORAGE_KEY_FILE).", valueName: "file"))
    var storageKey: String?

    @Option(name: .customLong("replica-key"), help: ArgumentHelp(
        "Public key file of a --replica, in the order the replicas are given. Repeatable; environment: RECIPES_WORKER_REPLICA_KEY_FILES, comma-separated.",
        valueName: "file"))
    var replicaKeys: [String] = []

    @Option(name: .long, help: ArgumentHelp("Seconds between syncs when no change notice arrives (5 to 86400).", valueName: "seconds"))
    var syncInterval: Double = 60

    @Flag(name: .long, help: ArgumentHelp(
        "Sync only when `recipes sync` asks: no syncs on change notices or the interval (a laptop on a metered link). Environment: RECIPES_WORKER_SYNC_ON_REQUEST=1."))
    var syncOnRequest = false

    @Option(name: .customLong("allow-host"), help: ArgumentHelp(
        "A host name, address or network the worker may fetch from although it is not public (a NAS: nas.local, 192.168.1.0/24). Repeatable; environment: RECIPES_WORKER_ALLOW_HOSTS, comma-separated.",
        valueName: "host"))
    var allowHosts: [String] = []

    @Flag(name: .long, help: ArgumentHelp(
        "Fetch only from the hosts and networks given with --allow-host; any other address is refused without being looked up (a closed network; the tests). Environment: RECIPES_WORKER_FETCH_ONLY_ALLOWED=1."))
    var fetchOnlyAllowed = false

    @Option(name: .long, help: "URLs imported at the same time, across all batch jobs (1 to 32).")
    var concurrency: Int = 4

    @Option(name: .long, help: ArgumentHelp(
        "Calls to recipe-storage in flight at once, each on a connection of its own (1 to 64; default --concurrency + 4).", valueName: "count"))
    var storageClients: Int?

    @OptionGroup var limits: ServerLimitOptions

    @Option(name: .long, help: ArgumentHelp("Largest page read, in bytes.", valueName: "bytes"))
    var maxPageBytes: Int = 10_000_000

    @Option(name: .long, help: ArgumentHelp("Seconds one fetch may take, redirects and body included.", valueName: "seconds"))
    var fetchTimeout: Double = 30

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for a connection to a web server.", valueName: "seconds"))
    var connectTimeout: Double = 10

    @Option(name: .long, help: ArgumentHelp("Seconds the worker waits for recipe-storage to answer one try of a call (it tries 3 times).", valueName: "seconds"))
    var storageTimeout: Double = 10

    @Option(name: .long, help: ArgumentHelp("Seconds a web server may stay silent while sending.", valueName: "seconds"))
    var readTimeout: Double = 15

    @Option(name: .long, help: ArgumentHelp(
        "Longest side of a stored photo, in pixels: larger photos are scaled down to it, never up (640 to 8192).", valueName: "pixels"))
    var photoLongSide: Int = 2_560

    @Option(name: .long, help: ArgumentHelp(
        "Largest photo read at all, in megapixels, checked from the file's header before decoding (1 to 1000).", valueName: "megapixels"))
    var maxPhotoMegapixels: Int = 100

    @Option(name: .long, help: ArgumentHelp(
        "Most memory one photo may take while it is read, in MiB (256 to 65536). Photos are decoded in a process of their own: one that needs more, or crashes its decoder, is refused and the worker goes on.",
        valueName: "MiB"))
    var photoMemory: Int = PhotoIntakeProcess.defaultMemoryLimit / 1_048_576

    @Option(name: .long, help: ArgumentHelp("Seconds one photo may take to be read and made to fit (1 to 600).", valueName: "seconds"))
    var photoTimeout: Double = 60

    /// The photo intake's helper: started by the worker itself, with the memory limit in bytes.
    @Option(name: .customLong("photo-intake-helper"), help: .hidden)
    var photoIntakeHelper: Int?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        if photoIntakeHelper != nil { return }
        guard (1...32).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 32; got \(concurrency)") }
        if let storageClients, !(1...64).contains(storageClients) {
            throw ValidationError("--storage-clients must be 1 to 64; got \(storageClients)")
        }
        guard (10_000...100_000_000).contains(maxPageBytes) else {
            throw ValidationError("--max-page-bytes must be 10000 to 100000000; got \(maxPageBytes)")
        }
        for (name, value) in [("--fetch-timeout", fetchTimeout), ("--connect-timeout", connectTimeout), ("--read-timeout", readTimeout),
                              ("--storage-timeout", storageTimeout)]
        where !(value > 0 && value <= 600) {
            throw ValidationError("\(name) must be more than 0 and at most 600 seconds; got \(value)")
        }
        do { _ = try AllowList(allowHostEntries) } catch { throw ValidationError(error.description) }
        guard (640...8_192).contains(photoLongSide) else { throw ValidationError("--photo-long-side must be 640 to 8192 pixels; got \(photoLongSide)") }
        guard (1...1_000).contains(maxPhotoMegapixels) else {
            throw ValidationError("--max-photo-megapixels must be 1 to 1000; got \(maxPhotoMegapixels)")
        }
        guard (256...65_536).contains(photoMemory) else { throw ValidationError("--photo-memory must be 256 to 65536 MiB; got \(photoMemory)") }
        guard photoTimeout >= 1 && photoTimeout <= 600 else { throw ValidationError("--photo-timeout must be 1 to 600 seconds; got \(photoTimeout)") }
        guard (5...86_400).contains(syncInterval) else { throw ValidationError("--sync-interval must be 5 to 86400 seconds; got \(syncInterval)") }
        let replicaSource = replicas.isEmpty ? "RECIPES_WORKER_REPLICAS" : "--replica"
        let refusals = replicaEndpoints.map { EndpointSyntax.refusal($0, named: replicaSource, for: .connect) } + [
            EndpointSyntax.refusal(option: "--storage", value: storage, variable: "RECIPES_STORAGE", for: .connect),
            EndpointSyntax.refusal(option: "--bind", value: bind, variable: "RECIPES_WORKER_BIND", for: .bind),
        ]
        if let refusal = refusals.lazy.compactMap({ $0 }).first { throw ValidationError(refusal) }
        // A replica is another storage (another data folder): the storage itself, or one replica twice, is a pair
        // that can never sync ("both call themselves replica …").
        for endpoint in [storageEndpoint] + replicaEndpoints where endpoint == bindEndpoint {
            throw ValidationError("\(endpoint) is where this recipe-worker answers (its --bind), not a recipe-storage; "
                + "give --storage and --replica the endpoints recipe-storage answers on")
        }
        var seen = [storageEndpoint]
        for replica in replicaEndpoints {
            guard !seen.contains(replica) else {
                throw ValidationError(replica == storageEndpoint
                    ? "replica \(replica) is the --storage itself; a replica is another recipe-storage, with a data folder of its own"
                    : "replica \(replica) is given twice; give each replica once")
            }
            seen.append(replica)
        }
    }

    var syncOnlyOnRequest: Bool {
        syncOnRequest || ["1", "true", "yes"].contains(ProcessInfo.processInfo.environment["RECIPES_WORKER_SYNC_ON_REQUEST"]?.lowercased() ?? "")
    }

    var replicaEndpoints: [String] {
        replicas.isEmpty ? environmentList("RECIPES_WORKER_REPLICAS") : replicas
    }

    /// The worker's CURVE settings: its own keys and clients, and the public key of every storage.
    func securitySettings() throws -> (server: CurveServerSecurity?, storageKeys: [String: String]) {
        let server = try ServerKeys.security(
            secretKeyFile: secretKey ?? ProcessEnvironment.value("RECIPES_WORKER_SECRET_KEY_FILE"),
            clientKeyFiles: clientKeys.isEmpty ? environmentList("RECIPES_WORKER_CLIENT_KEYS_FILE") : clientKeys,
            options: ("--secret-key", "--client-keys"))
        let storageKeyFile = storageKey ?? ProcessEnvironment.value("RECIPES_STORAGE_KEY_FILE")
        let replicaKeyFiles = replicaKeys.isEmpty ? environmentList("RECIPES_WORKER_REPLICA_KEY_FILES") : replicaKeys
        if server == nil && (storageKeyFile != nil || !replicaKeyFiles.isEmpty) {
            throw ValidationError("--storage-key and --replica-key need the worker's own --secret-key and --client-keys: CURVE clients connect with a key pair")
        }
        if !replicaKeyFiles.isEmpty && replicaKeyFiles.count != replicaEndpoints.count {
            throw ValidationError("\(replicaKeyFiles.count) --replica-key files for \(replicaEndpoints.count) replicas: give one public key file per --replica, in the same order")
        }
        var keys: [String: String] = [:]
        if let storageKeyFile { keys[storageEndpoint] = try KeyFiles.publicKey(file: storageKeyFile) }
        for (endpoint, file) in zip(replicaEndpoints, replicaKeyFiles) { keys[endpoint] = try KeyFiles.publicKey(file: file) }
        if server != nil {
            for endpoint in [storageEndpoint] + replicaEndpoints where keys[endpoint] == nil {
                throw ValidationError("no public key for the storage at \(endpoint): with --secret-key, give --storage-key and one --replica-key per replica")
            }
        }
        return (server, keys)
    }

    var storageEndpoint: String { storage ?? ProcessEnvironment.value("RECIPES_STORAGE") ?? RecipeVault.defaultStorageEndpoint }

    var bindEndpoint: String { bind ?? ProcessEnvironment.value("RECIPES_WORKER_BIND") ?? RecipeVault.defaultWorkerEndpoint }

    var allowHostEntries: [String] {
        allowHosts + (ProcessEnvironment.value("RECIPES_WORKER_ALLOW_HOSTS").map { [$0] } ?? [])
    }

    func run() async throws {
        if let photoIntakeHelper { PhotoIntakeProcess.serve(memoryLimit: photoIntakeHelper) }
        var configuration = WorkerConfiguration()
        configuration.bindEndpoint = bindEndpoint
        configuration.storageEndpoint = storageEndpoint
        do {
            (configuration.security, configuration.storageKeys) = try securitySettings()
        } catch let error as KeyFileError {
            throw ValidationError(error.description)
        }
        configuration.concurrency = concurrency
        if let storageClients { configuration.storageClients = storageClients }
        configuration.storageTimeout = .milliseconds(Int(storageTimeout * 1_000))
        configuration.photoLimits.maxLongSide = photoLongSide
        configuration.photoLimits.maxPixels = maxPhotoMegapixels * 1_000_000
        configuration.photoIntake = PhotoIntakeProcess.Settings(memoryLimit: photoMemory * 1_048_576,
                                                                timeout: .milliseconds(Int(photoTimeout * 1_000)))
        configuration.maxMessageBytes = limits.maxMessageBytes
        configuration.maxConnections = limits.maxConnections
        configuration.maxResidentBytes = limits.maxMemory * 1_048_576
        configuration.maxRequestsInFlight = limits.maxRequests
        configuration.maxBytesInFlight = limits.maxBytesInFlight
        configuration.replyCacheBytes = limits.replyCacheBytes
        configuration.replicaEndpoints = replicaEndpoints
        configuration.syncInterval = .milliseconds(Int(syncInterval * 1_000))
        configuration.syncAutomatically = !syncOnlyOnRequest
        configuration.fetchPolicy = FetchPolicy(
            allowList: try AllowList(allowHostEntries), maxPageBytes: maxPageBytes, connectTimeout: connectTimeout,
            readTimeout: readTimeout, overallTimeout: fetchTimeout,
            onlyAllowList: fetchOnlyAllowed || ["1", "true", "yes"].contains(ProcessEnvironment.value("RECIPES_WORKER_FETCH_ONLY_ALLOWED")?.lowercased() ?? ""))

        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardOutput(label: label)
            handler.logLevel = logLevel
            return handler
        }
        let logger = Logger(label: "recipe-worker")
        try OpenFiles.raise(logger: logger, serviceName: "recipe-worker", minimum: OpenFiles.workerMinimum)
        warnIfExposed(configuration.security, endpoints: [configuration.bindEndpoint], logger: logger)
        let service = try WorkerService(configuration: configuration, logger: logger)
        logger.info("recipe-worker ready", metadata: [
            "storage": "\(configuration.storageEndpoint)", "allowed": "\(configuration.fetchPolicy.allowList)",
            "concurrency": "\(configuration.concurrency)",
            "storage-clients": "\(configuration.storageClients)",
            "replicas": "\(configuration.replicaEndpoints.isEmpty ? "none" : configuration.replicaEndpoints.joined(separator: ","))",
            "sync": "\(configuration.replicaEndpoints.isEmpty ? "off" : syncOnlyOnRequest ? "on request" : "automatic")",
        ])
        let group = ServiceGroup(
            services: [service.server, JobWatcher(runner: service.runner), SyncWatcher(coordinator: service.sync)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        try await group.run()
        await service.storage.close()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
