import Foundation
import Logging
import Messaging
import PhotoProcessing
import RecipeProtocol
import ServiceLifecycle
import WebFetch
import ZeroMQ

/// Everything `recipe-worker` is told at start-up.
public struct WorkerConfiguration: Sendable {
    /// Where requests are answered.
    public var bindEndpoint = RecipeVault.defaultWorkerEndpoint
    /// The recipe-storage the worker imports into and keeps its jobs in.
    public var storageEndpoint = RecipeVault.defaultStorageEndpoint
    /// What may be fetched and how much.
    public var fetchPolicy = FetchPolicy()
    /// URLs imported at the same time, across all batch jobs.
    public var concurrency = 4
    /// Calls to the storage in flight at once, each on a client of its own: unless set, each import at once and four more.
    public var storageClients: Int {
        get { chosenStorageClients ?? concurrency + 4 }
        set { chosenStorageClients = newValue }
    }
    private var chosenStorageClients: Int?
    /// How long one try of a call to the storage waits for its answer (3 tries).
    public var storageTimeout: Duration = .seconds(10)
    /// The largest request, all frames together.
    public var maxMessageBytes = WireProtocol.defaultMaxMessageBytes
    /// Client connections held at once before new ones wait; `nil` in a process shared with other servers (see
    /// `MessageServer.Configuration.maxConnections`).
    public var maxConnections: Int?
    /// Resident bytes past which quiet connections are shut; `nil` in a process shared with other servers (see
    /// `MessageServer.Configuration.maxResidentBytes`).
    public var maxResidentBytes: Int?
    /// Requests handled at once before `busy`.
    public var maxRequestsInFlight = WireProtocol.defaultMaxRequestsInFlight
    /// Bytes of the requests handled at once, all together, before `busy`.
    public var maxBytesInFlight = WireProtocol.defaultMaxBytesInFlight
    /// Bytes of answered writes remembered for retries.
    public var replyCacheBytes = WireProtocol.defaultReplyCacheBytes
    /// How often unfinished jobs are looked for (a restarted worker finds its jobs at once).
    public var rescanInterval: Duration = .seconds(5)
    /// The largest frame a client may send (saved pages travel in JSON).
    public var maxFrameBytes = WireProtocol.defaultMaxFrameBytes
    /// What the photo intake makes photos fit (long side, pixels read at most, bytes taken in).
    public var photoLimits = PhotoFitter.Limits()
    /// Where photos are decoded: in a helper process under a memory limit (as `recipe-worker` runs), or, when nil,
    /// in this process (tests, benchmarks).
    public var photoIntake: PhotoIntakeProcess.Settings?
    /// Other recipe-storage replicas kept in step with `storageEndpoint`.
    public var replicaEndpoints: [String] = []
    /// How often the pairs are synced when no change notice arrives.
    public var syncInterval: Duration = .seconds(60)
    /// False: pairs sync only when `recipes sync` asks (`--sync-on-request`).
    public var syncAutomatically = true
    /// CURVE for the worker's own endpoint: its key pair and the clients (the CLI) allowed in.
    public var security: CurveServerSecurity?
    /// The public key of each storage (the worker's storage and its replicas) to connect with CURVE,
    /// by endpoint; the worker connects with its own key pair from `security`.
    public var storageKeys: [String: String] = [:]

    /// How the worker connects to the storage at `endpoint`.
    func clientSecurity(for endpoint: String) -> CurveClientSecurity? {
        guard let keys = security?.keys, let serverKey = storageKeys[endpoint] else { return nil }
        return CurveClientSecurity(keys: keys, serverKey: serverKey)
    }

    public init() {}
}

/// The worker: imports on request, runs batch jobs, keeps replicas in step, and keeps no state of its own.
public struct WorkerService: Sendable {
    public let server: MessageServer
    public let runner: JobRunner
    /// Calls to the storage: imports, jobs, photos and staged entries each take a client of their own.
    public let storage: MessageClientPool
    public let sync: SyncCoordinator
    public let photos: PhotoDesk

    public init(configuration: WorkerConfiguration, logger: Logger) throws {
        var client = MessageClient.Configuration(endpoint: configuration.storageEndpoint, serviceName: "recipe-storage")
        client.setting = "recipe-worker's --storage (RECIPES_STORAGE)"
        client.timeout = configuration.storageTimeout
        client.attempts = 3
        client.hint = "is recipe-storage running? start recipe-worker with --storage to point elsewhere"
        client.security = configuration.clientSecurity(for: configuration.storageEndpoint)
        client.securityHint = "check the worker's --secret-key and --storage-key, and the storage's --client-keys"
        // One client per URL imported at once, and a few for what arrives beside the jobs (an import
        // or a photo from the CLI, a migration's staged entries, the job scan): none waits behind another's reply.
        let storage = MessageClientPool(configuration: client, size: configuration.storageClients, logger: logger)
        self.storage = storage
        let photos = PhotoDesk(limits: configuration.photoLimits, storage: storage,
                               process: configuration.photoIntake.map { PhotoIntakeProcess(settings: $0, logger: logger) })
        self.photos = photos
        var fetchPolicy = configuration.fetchPolicy
        // A page's image is read up to what the intake takes in: it is made to fit afterwards.
        fetchPolicy.maxImageBytes = configuration.photoLimits.maxInputBytes
        let fetcher = GuardedFetcher(policy: fetchPolicy, logger: logger)
        let importer = PageImporter(fetcher: fetcher, storage: storage, photos: photos, logger: logger)
        let runner = JobRunner(importer: importer, migrator: EntryMigrator(storage: storage, photos: photos), storage: storage, concurrency: configuration.concurrency,
                               rescanInterval: configuration.rescanInterval, logger: logger)
        self.runner = runner
        let endpoints = [configuration.storageEndpoint] + configuration.replicaEndpoints
        let sync = try SyncCoordinator(
            storage: configuration.storageEndpoint, replicas: configuration.replicaEndpoints,
            security: Dictionary(endpoints.compactMap { endpoint in configuration.clientSecurity(for: endpoint).map { (endpoint, $0) } },
                                 uniquingKeysWith: { first, _ in first }),
            interval: configuration.syncInterval, automatic: configuration.syncAutomatically, logger: logger)
        self.sync = sync
        var routes = Routes()
        routes.addSystemOperations(service: "recipe-worker")
        routes.handle(WorkerSyncOps.Run.self) { _, _ in
            guard sync.isEnabled else {
                throw ServiceError(.invalidArgument, "this worker keeps no replicas; start recipe-worker with --replica ENDPOINT to sync one")
            }
            return .init(pairs: await sync.runNow())
        }
        routes.handle(WorkerSyncOps.Status.self) { _, _ in await sync.status() }
        routes.handle(ImportOps.FromURL.self) { request, _ in
            try await importer.importURL(request.url, dryRun: request.dryRun ?? false, id: request.id)
        }
        routes.handle(ImportOps.FromHTML.self) { request, _ in
            try await importer.importHTML(request.html, address: request.url, dryRun: request.dryRun ?? false, id: request.id)
        }
        routes.handle(ImportOps.Batch.self) { request, _ in
            guard request.migration == nil else { throw ServiceError(.invalidArgument, "a migration starts with migrate.start, not import.batch") }
            return try await runner.submit(request)
        }
        routes.handle(MigrateOps.Stage.self) { request, context in
            // Passed on as it is: the entry is read when the job reaches it.
            _ = try await storage.send(JobOps.Stage.self, .init(jobID: request.jobID, position: request.position),
                                       frames: [try context.frame(request.entry)])
            return Empty()
        }
        routes.handle(MigrateOps.Start.self) { request, _ in
            try await runner.submit(.init(id: request.id, urls: [], migration: request.plan))
        }
        routes.handle(PhotoOps.Add.self) { request, context in
            // Made to fit here, so only a photo within the rules travels on to storage.
            try await photos.add(try context.frame(request.photo), to: request.recipeID, position: request.position,
                                 keepMetadata: request.keepMetadata ?? false)
        }
        routes.handleWithFrames(PhotoOps.Fit.self) { request, context in
            let fitted = try await photos.fit(try context.frame(request.photo), keepMetadata: request.keepMetadata ?? false)
            return Reply(.init(fitting: fitted.fitting), frames: [fitted.bytes])
        }
        var server = MessageServer.Configuration(endpoint: configuration.bindEndpoint, serviceName: "recipe-worker")
        server.maxFrameBytes = configuration.maxFrameBytes
        server.maxMessageBytes = configuration.maxMessageBytes
        server.maxConnections = configuration.maxConnections
        server.maxResidentBytes = configuration.maxResidentBytes
        server.maxRequestsInFlight = configuration.maxRequestsInFlight
        server.maxBytesInFlight = configuration.maxBytesInFlight
        server.replyCacheBytes = configuration.replyCacheBytes
        server.security = configuration.security
        self.server = try MessageServer(configuration: server, routes: routes, logger: logger)
    }
}

/// Looks for unfinished jobs for as long as the worker runs (a service of the worker's group).
public struct JobWatcher: Service {
    let runner: JobRunner

    public init(runner: JobRunner) { self.runner = runner }

    public func run() async throws {
        // `watch` loops until its task is cancelled, which a shutdown signal does.
        await cancelWhenGracefulShutdown { await runner.watch() }
    }
}
