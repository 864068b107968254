import ArgumentParser
import Foundation
import Messaging
import RecipeModel
import RecipeProtocol

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Are the services reachable? Versions and counts.",
        discussion: "Exits 69 when recipe-storage (or the --only service) is not reachable, or another service answers at its endpoint, and 78 when it refuses this client's keys: a container health check.")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Check only this service: storage or worker.")
    var only: Only?

    enum Only: String, ExpressibleByArgument, CaseIterable { case storage, worker }

    struct Report: Encodable {
        struct Service: Encodable {
            var endpoint: String
            var reachable: Bool
            var health: System.Health.Response?
            var error: String?
            /// Set when the service refused this client's CURVE keys.
            var refused: Bool?
            /// Set when something answered at the endpoint that is not the service (the other service, another
            /// program): `error` says what.
            var misdirected: Bool?
        }
        var storage: Service?
        var worker: Service?
        var stats: StorageStats?
        /// What is wrong with the storage although it answers (its database damaged, its counts unreadable).
        var problem: String?
    }

    func run() async throws {
        try await reportingFailures {
            async let storage = only == .worker ? nil
                : probe(try connection.storageClient(), connection.storageEndpoint, expecting: "recipe-storage", setting: "RECIPES_STORAGE or --storage")
            async let worker = only == .storage ? nil
                : probe(try connection.workerClient(), connection.workerEndpoint, expecting: "recipe-worker", setting: "RECIPES_WORKER or --worker")
            var report = Report(storage: try await storage, worker: try await worker)
            // Counts the storage cannot read (its database damaged where they are) are a problem to report, as is one
            // it reports itself: either fails the check below.
            var problem: (text: String, status: Int32)?
            if report.storage?.reachable == true {
                do {
                    report.stats = try await connection.storageClient().call(StorageOps.Stats.self, Empty())
                    if let text = report.stats?.problem { problem = (text, ExitStatus.ioError) }
                } catch let error as ServiceError {
                    problem = ("its counts could not be read: \(error.message)", ExitStatus.of(error.code))
                } catch {
                    problem = ("its counts could not be read: \(error)", ExitStatus.internalFailure)
                }
            }
            report.problem = problem?.text
            if connection.json {
                try Output.json(report)
            } else {
                for (name, service) in [("recipe-storage", report.storage), ("recipe-worker", report.worker)] {
                    guard let service else { continue }
                    if let health = service.health, service.reachable {
                        print("\(name): up at \(service.endpoint), version \(health.version), protocol \(health.protocolVersion), sync rules \(health.syncRules ?? 1), up \(Output.minutes(Int(health.uptimeSeconds / 60)))")
                    } else if service.refused == true || service.misdirected == true, let error = service.error {
                        print("\(name): \(error)")
                    } else {
                        print("\(name): not reachable at \(service.endpoint)")
                    }
                }
                if let problem { print("recipe-storage: \(TerminalText.safe(problem.text))") }
                if let stats = report.stats {
                    print("\(Output.count(stats.recipes, "recipe")) (\(Output.count(stats.starters, "starter")), \(Output.count(stats.favorites, "favourite"))), \(Output.count(stats.books, "book")), \(Output.count(stats.ingredients, "ingredient")), \(stats.cookLogEntries) cooked, \(Output.count(stats.photos, "photo")) (\(ImageKind.formatBytes(stats.photoBytes)))")
                }
            }
            // The storage is required (the worker is optional: imports need it, nothing else does), unless --only says otherwise.
            let (name, required) = only == .worker ? ("recipe-worker", report.worker) : ("recipe-storage", report.storage)
            if let required, !required.reachable {
                if required.refused == true { throw CLIError("\(name) refused this client's keys", status: ExitStatus.refusedKeys) }
                if required.misdirected == true, let error = required.error { throw CLIError(error, status: ExitStatus.unavailable) }
                let variable = only == .worker ? "RECIPES_WORKER or --worker" : "RECIPES_STORAGE or --storage"
                throw CLIError("\(name) is not reachable at \(required.endpoint); set \(variable)", status: ExitStatus.unavailable)
            }
            if only != .worker, let problem { throw CLIError("recipe-storage is up, with a problem (above)", status: problem.status) }
        }
    }

    private func probe(_ client: MessageClient, _ endpoint: String, expecting service: String, setting: String) async -> Report.Service {
        do {
            let health = try await client.call(System.Health.self, Empty())
            // Another service at the endpoint (RECIPES_STORAGE set to the worker's) is not this one up.
            guard health.service == service else {
                return Report.Service(endpoint: endpoint, reachable: false, health: health,
                                      error: "\(endpoint) is \(TerminalText.safe(health.service)), not \(service); set \(setting) to \(service)'s endpoint",
                                      misdirected: true)
            }
            return Report.Service(endpoint: endpoint, reachable: true, health: health)
        } catch let error as MessageClientError {
            if case .refused = error { return Report.Service(endpoint: endpoint, reachable: false, error: "\(error)", refused: true) }
            return Report.Service(endpoint: endpoint, reachable: false, error: "\(error)")
        } catch {
            return Report.Service(endpoint: endpoint, reachable: false, error: "\(error)")
        }
    }
}

struct Samples: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "samples", abstract: "Load the sample books, starter recipes and catalogue (once).")
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await connection.show {
            return try await connection.storageClient().call(StorageOps.LoadSamples.self, Empty())
        } text: { result in
            print(result.loaded ? "Loaded \(Output.count(result.recipes, "starter recipe")), \(Output.count(result.books, "book")) and \(Output.count(result.ingredients, "ingredient"))."
                : "The samples are already loaded.")
        }
    }
}

/// `recipes check`: reads the storage's whole database and every photo file, and says what is damaged or missing.
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Read the whole database and every photo file: is anything damaged or missing?",
        discussion: """
            Damage is otherwise found only when a request meets it. The storage runs SQLite's quick check (--full: \
            its integrity check, indexes too) and reads each photo a recipe names against its SHA-256; a damaged \
            photo file is moved aside, and missing or damaged photos come back with the next sync with a replica \
            that holds them. Exits 0 when all is whole and 74 when anything is not (for cron or a health check).
            """)
    @OptionGroup var connection: ConnectionOptions
    @Flag(name: .customLong("no-photos"), help: "Check the database only, not the photo files.") var noPhotos = false
    @Flag(help: "SQLite's full integrity check (slower: every index against its table).") var full = false
    @Option(help: ArgumentHelp("Seconds the check may take (a large collection's photos take a while to read).", valueName: "seconds"))
    var wait: Double = 600

    func validate() throws {
        try NumberOptions.seconds(wait, option: "--wait", most: 86_400)
    }

    func run() async throws {
        try await reportingFailures {
            // A storage that is not there is said within --timeout, not after the long wait.
            _ = try await connection.storageClient().call(System.Health.self, Empty())
            let check = try await connection.patientStorageClient(seconds: wait)
                .call(StorageOps.Check.self, .init(photos: !noPhotos, full: full))
            if connection.json {
                try Output.json(check)
            } else {
                let database = check.database == ["ok"] ? "whole" : "damaged"
                print("\(RecipeVault.databaseFileName): \(database) (SQLite's \(check.databaseCheck.replacingOccurrences(of: "_", with: " ")))")
                for finding in check.database where check.database != ["ok"] { print("  \(TerminalText.safe(finding))") }
                if let problem = check.problem { print("\(RecipeVault.databaseFileName): \(TerminalText.safe(problem))") }
                if let checked = check.photosChecked {
                    var state = "all whole"
                    let unreadable = check.unreadablePhotos ?? []
                    if !check.missingPhotos.isEmpty || !check.damagedPhotos.isEmpty || !unreadable.isEmpty {
                        state = [check.missingPhotos.isEmpty ? nil : "\(check.missingPhotos.count) missing",
                                 check.damagedPhotos.isEmpty ? nil : "\(check.damagedPhotos.count) damaged (moved aside)",
                                 unreadable.isEmpty ? nil : "\(unreadable.count) unreadable"]
                            .compactMap { $0 }.joined(separator: ", ")
                    }
                    print("Photos: \(Output.count(checked, "photo")) checked, \(state)")
                    for hash in check.missingPhotos.prefix(5) { print("  missing: \(TerminalText.safe(hash))") }
                    for hash in check.damagedPhotos.prefix(5) { print("  damaged: \(TerminalText.safe(hash))") }
                    for photo in unreadable.prefix(5) { print("  unreadable: \(TerminalText.safe(photo.sha256)) (\(TerminalText.safe(photo.reason)))") }
                }
                if let advice = check.advice { print(TerminalText.safe(advice) + ".") }
            }
            guard check.whole else { throw CLIError("recipe-storage's data is not whole (above)", status: ExitStatus.ioError) }
        }
    }
}
