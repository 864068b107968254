import ArgumentParser
import Logging
import Messaging
import RecipeProtocol
import ServiceLifecycle
import ServiceOptions
import StorageService
import Foundation
import ZeroMQ

/// `recipe-storage`: the RecipeVault process that owns the recipe data and answers requests over ZeroMQ.
@main
struct RecipeStorageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recipe-storage",
        abstract: "Serve RecipeVault data over ZeroMQ.",
        version: RecipeVault.version
    )

    @Option(name: .long, help: ArgumentHelp("Endpoint to answer requests on (environment: RECIPES_STORAGE_BIND).", valueName: "endpoint"))
    var bind: String?

    @Option(name: .long, help: ArgumentHelp("Endpoint to publish change notices on (environment: RECIPES_STORAGE_PUBLISH).", valueName: "endpoint"))
    var publish: String?

    @Option(name: .long, help: ArgumentHelp("Data folder for Recipes.sqlite and photos (environment: RECIPES_DATA; default ./data).", valueName: "folder"))
    var data: String?

    @Option(name: .long, help: ArgumentHelp(
        "CURVE secret key file of this storage, from `recipes keys generate` (environment: RECIPES_STORAGE_SECRET_KEY_FILE). With --client-keys, every client must connect with CURVE and an allowed key.",
        valueName: "file"))
    var secretKey: String?

    @Option(name: .customLong("client-keys"), help: ArgumentHelp(
        "File of public keys allowed to connect (the worker's, the CLI's): one per line. Repeatable; environment: RECIPES_STORAGE_CLIENT_KEYS_FILE, comma-separated.",
        valueName: "file"))
    var clientKeys: [String] = []

    @Option(name: .customLong("peer-keys"), help: ArgumentHelp(
        "File of replication peers' public keys (the worker's): they may also call sync.*, which --client-keys may not. Repeatable; environment: RECIPES_STORAGE_PEER_KEYS_FILE, comma-separated.",
        valueName: "file"))
    var peerKeys: [String] = []

    @Option(name: .long, help: ArgumentHelp(
        "The only folder backups (recipes backup) are written into, made if missing; a backup may then be named by its folder's name alone. Without it, any absolute folder outside the data folder (environment: RECIPES_BACKUP_FOLDER).",
        valueName: "folder"))
    var backupFolder: String?

    @Flag(name: .long, help: "Load the sample books and starter recipes when the database is empty.")
    var seedSamples = false

    @Option(name: .long, help: ArgumentHelp("Largest frame a client may send, in bytes; larger ones drop the client.", valueName: "bytes"))
    var maxFrameBytes: Int = WireProtocol.defaultMaxFrameBytes

    @OptionGroup var limits: ServerLimitOptions

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        guard maxFrameBytes >= 4 * 1_024 * 1_024 else {
            throw ValidationError("--max-frame-bytes must be at least 4194304 (4 MiB) so 2 MB photos fit; got \(maxFrameBytes)")
        }
        for (option, variable, value) in [("--bind", "RECIPES_STORAGE_BIND", bind), ("--publish", "RECIPES_STORAGE_PUBLISH", publish)] {
            if let refusal = EndpointSyntax.refusal(option: option, value: value, variable: variable, for: .bind) { throw ValidationError(refusal) }
        }
    }

    func run() async throws {
        var configuration = StorageConfiguration()
        configuration.bindEndpoint = bind ?? ProcessEnvironment.value("RECIPES_STORAGE_BIND") ?? RecipeVault.defaultStorageEndpoint
        configuration.maxFrameBytes = maxFrameBytes
        configuration.maxMessageBytes = limits.maxMessageBytes
        configuration.maxConnections = limits.maxConnections
        configuration.maxResidentBytes = limits.maxMemory * 1_048_576
        configuration.maxRequestsInFlight = limits.maxRequests
        configuration.maxBytesInFlight = limits.maxBytesInFlight
        configuration.replyCacheBytes = limits.replyCacheBytes
        configuration.dataFolder = URL(fileURLWithPath: data ?? ProcessEnvironment.value("RECIPES_DATA") ?? RecipeVault.defaultDataFolder)
        configuration.seedSamples = seedSamples
        configuration.backupFolder = (backupFolder ?? ProcessEnvironment.value("RECIPES_BACKUP_FOLDER")).map { URL(fileURLWithPath: $0, isDirectory: true) }
        configuration.publishEndpoint = publish ?? ProcessEnvironment.value("RECIPES_STORAGE_PUBLISH") ?? RecipeVault.defaultStoragePublishEndpoint
        do {
            configuration.security = try ServerKeys.security(
                secretKeyFile: secretKey ?? ProcessEnvironment.value("RECIPES_STORAGE_SECRET_KEY_FILE"),
                clientKeyFiles: clientKeys.isEmpty ? environmentList("RECIPES_STORAGE_CLIENT_KEYS_FILE") : clientKeys,
                peerKeyFiles: peerKeys.isEmpty ? environmentList("RECIPES_STORAGE_PEER_KEYS_FILE") : peerKeys,
                options: ("--secret-key", "--client-keys"))
        } catch {
            throw ValidationError("\(error)")
        }

        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardOutput(label: label)
            handler.logLevel = logLevel
            return handler
        }
        let logger = Logger(label: "recipe-storage")
        try OpenFiles.raise(logger: logger, serviceName: "recipe-storage", minimum: OpenFiles.serviceMinimum)
        warnIfExposed(configuration.security, endpoints: [configuration.bindEndpoint, configuration.publishEndpoint], logger: logger)

        let service: StorageService
        do {
            service = try await StorageService(configuration: configuration, logger: logger)
        } catch let refused as BackupFolderRefused {
            throw ValidationError("--backup-folder (or RECIPES_BACKUP_FOLDER): \(refused.reason)")
        }
        var services = [ServiceGroupConfiguration.ServiceConfiguration(service: service.server)]
        if let watch = service.roomWatch {
            // Room found: the group stops as on SIGTERM (the requests running finish), and the storage starts again.
            services.append(.init(service: watch, successTerminationBehavior: .gracefullyShutdownGroup))
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        await service.publisher.close()
        try service.store.close()
        logger.info("database closed")
        if service.roomWatch?.foundRoom == true {
            // The same executable and arguments, in this process (its id, its supervisor's view of it and its output
            // stay): every file it opened closes on exec, the data folder's lock with them.
            var arguments = CommandLine.arguments.map { strdup($0) }
            arguments.append(nil)
            fflush(nil) // every stream: what was logged reaches the output before the image goes
            execv("/proc/self/exe", arguments)
            throw RestartFailed(reason: String(cString: strerror(errno)))
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// The storage found room on its disk and stopped to start itself again in full, and could not (exit 1, not a usage
/// error: its options were taken once already).
struct RestartFailed: Error, CustomStringConvertible {
    let reason: String
    var description: String {
        "recipe-storage stopped to start again in full once its disk had room, and could not start itself (\(reason)): start it again"
    }
}


