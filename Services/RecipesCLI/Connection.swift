import ArgumentParser
import Foundation
import Messaging
import RecipeProtocol
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// The options every command shares: where the services are, how long to wait, how to print.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("recipe-storage endpoint (environment: RECIPES_STORAGE; default \(RecipeVault.defaultStorageEndpoint)).", valueName: "endpoint"))
    var storage: String?

    @Option(help: ArgumentHelp("recipe-worker endpoint (environment: RECIPES_WORKER; default \(RecipeVault.defaultWorkerEndpoint)).", valueName: "endpoint"))
    var worker: String?

    @Option(help: ArgumentHelp("This client's CURVE secret key file, from `recipes keys generate` (environment: RECIPES_KEY_FILE).", valueName: "file"))
    var key: String?

    @Option(help: ArgumentHelp("recipe-storage's public key file, to reach it with CURVE (environment: RECIPES_STORAGE_KEY_FILE).", valueName: "file"))
    var storageKey: String?

    @Option(help: ArgumentHelp("recipe-worker's public key file, to reach it with CURVE (environment: RECIPES_WORKER_KEY_FILE).", valueName: "file"))
    var workerKey: String?

    @Option(help: ArgumentHelp("Seconds to wait for a service before giving up (over 3 tries).", valueName: "seconds"))
    var timeout: Double = 6

    @Flag(help: "Print machine-readable JSON (the reply body, as docs/PROTOCOL.md describes it) and nothing else.")
    var json = false

    func validate() throws {
        try NumberOptions.seconds(timeout, option: "--timeout", most: 600)
        for (option, endpoint) in [("--storage", storage), ("--worker", worker)] {
            if let endpoint, let refusal = EndpointSyntax.refusal(endpoint, named: option, for: .connect) { throw ValidationError(refusal) }
        }
    }

    var storageEndpoint: String { storage ?? environment("RECIPES_STORAGE") ?? RecipeVault.defaultStorageEndpoint }
    var workerEndpoint: String { worker ?? environment("RECIPES_WORKER") ?? RecipeVault.defaultWorkerEndpoint }

    /// CURVE for a service whose public key file is `serverKeyFile` (`nil`: connect without CURVE).
    private func security(serverKeyFile: String?, service: String, option: String) throws -> CurveClientSecurity? {
        guard let serverKeyFile else { return nil }
        guard let keyFile = key ?? environment("RECIPES_KEY_FILE") else {
            throw CLIError("\(option) is set, so \(service) is reached with CURVE, but this client has no key: give --key or set RECIPES_KEY_FILE (make one with `recipes keys generate`)",
                           status: ExitStatus.usage)
        }
        do {
            return CurveClientSecurity(keys: try KeyFiles.keyPair(secretKeyFile: keyFile),
                                       serverKey: try KeyFiles.publicKey(file: serverKeyFile))
        } catch {
            throw CLIError(error.description, status: ExitStatus.usage)
        }
    }

    /// A client for recipe-storage, with the hint a user needs when it is not reachable.
    func storageClient() throws -> MessageClient {
        try client(endpoint: storageEndpoint, service: "recipe-storage", variable: "RECIPES_STORAGE", option: "--storage",
                   security: try security(serverKeyFile: storageKey ?? environment("RECIPES_STORAGE_KEY_FILE"),
                                          service: "recipe-storage", option: "the storage key"))
    }

    /// A client for a storage request that may take long (a backup): one attempt, `seconds` to answer.
    func patientStorageClient(seconds: Double) throws -> MessageClient {
        try client(endpoint: storageEndpoint, service: "recipe-storage", variable: "RECIPES_STORAGE", option: "--storage",
                   security: try security(serverKeyFile: storageKey ?? environment("RECIPES_STORAGE_KEY_FILE"),
                                          service: "recipe-storage", option: "the storage key"),
                   attempts: 1, seconds: max(seconds, timeout))
    }

    /// A client for the worker; `attempts` and `seconds` as for `client`.
    func workerClient(attempts: Int = 3, seconds: Double? = nil) throws -> MessageClient {
        try client(endpoint: workerEndpoint, service: "recipe-worker", variable: "RECIPES_WORKER", option: "--worker",
                   security: try workerSecurity(), attempts: attempts, seconds: seconds)
    }

    private func workerSecurity() throws -> CurveClientSecurity? {
        try security(serverKeyFile: workerKey ?? environment("RECIPES_WORKER_KEY_FILE"), service: "recipe-worker", option: "the worker key")
    }

    /// A client for a worker request that may take as long as fetching a slow page:
    /// the worker is asked whether it is up first (so a stopped worker is reported
    /// within --timeout), then given `seconds` for the answer, without a retry.
    func patientWorkerClient(seconds: Double) async throws -> MessageClient {
        _ = try await workerClient().call(System.Health.self, Empty())
        return try workerClient(attempts: 1, seconds: max(seconds, timeout))
    }

    private func client(endpoint: String, service: String, variable: String, option: String,
                        security: CurveClientSecurity?, attempts: Int = 3, seconds: Double? = nil) throws -> MessageClient {
        // An option was checked with the arguments, so what is refused here came from the environment, when it is used.
        if let refusal = EndpointSyntax.refusal(endpoint, named: variable, for: .connect) { throw CLIError(refusal, status: ExitStatus.usage) }
        var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: service)
        configuration.attempts = attempts
        configuration.timeout = .milliseconds(Int((seconds ?? timeout) * 1_000 / Double(attempts)))
        configuration.hint = "is \(service) running? set \(variable) or \(option) to point elsewhere"
        configuration.setting = "\(variable) or \(option)"
        configuration.security = security
        configuration.securityHint = "set RECIPES_KEY_FILE to this client's secret key and \(variable)_KEY_FILE to \(service)'s public key, "
            + "and put this client's public key in \(service)'s client keys"
        return try MessageClient(configuration: configuration)
    }
}

func environment(_ name: String) -> String? { ProcessEnvironment.value(name) }

/// Exit codes (README, "Exit codes"), after sysexits.h.
enum ExitStatus {
    static let usage: Int32 = 64 // bad arguments or settings
    static let refused: Int32 = 65 // the service refused the data
    static let notFound: Int32 = 66
    static let unavailable: Int32 = 69 // a service is not reachable or shutting down
    static let internalFailure: Int32 = 70
    static let cannotWrite: Int32 = 73 // a file could not be created
    static let ioError: Int32 = 74 // the storage's disk is full, or its database damaged
    static let conflict: Int32 = 75 // changed meanwhile; try again
    static let readOnly: Int32 = 77 // starter recipe
    static let refusedKeys: Int32 = 78 // a service refused this client's CURVE keys (or their absence)

    static func of(_ code: ErrorCode) -> Int32 {
        switch code {
        case .notFound: notFound
        case .conflict, .syncRestart: conflict
        case .starterReadOnly: readOnly
        case .shuttingDown, .busy, .storageLocked: unavailable
        case .storageFull, .storageDamaged: ioError
        case .forbidden: refusedKeys
        case .messageTooLarge, .requestIDReused: refused
        case .missingPhoto, .photoDamaged: internalFailure
        case .internalError, .malformedJSON, .nestingTooDeep, .invalidEnvelope, .unsupportedVersion, .unknownOp: internalFailure
        case .invalidBody, .invalidArgument, .photoTooLarge, .tooManyPhotos, .unsupportedImage, .unreadableImage, .unreadableEntry: refused
        case .unsupportedURL, .blockedAddress, .noRecipeFound, .pageTooLarge, .tooManyRedirects: refused
        case .blockedBySite, .fetchTimeout, .fetchFailed: unavailable
        }
    }
}

extension ConnectionOptions {
    /// What most commands do: get a reply, then show it — as JSON with `--json`, else as `text` prints it —
    /// with any failure ended as `reportingFailures` ends it (a sentence and the exit status of its kind).
    func show<Reply: Encodable>(_ reply: () async throws -> Reply, text: (Reply) throws -> Void) async throws {
        try await reportingFailures {
            let value = try await reply()
            if json { try Output.json(value) } else { try text(value) }
        }
    }
}

/// Runs a command body and turns every failure into one plain line on standard
/// error and a documented exit code — never a stack trace.
func reportingFailures(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ServiceError {
        fail(sentence(for: error), status: ExitStatus.of(error.code))
    } catch let error as MessageClientError {
        switch error {
        case .unreachable, .connectionLost: fail(error.description, status: ExitStatus.unavailable)
        case .refused: fail(error.description, status: ExitStatus.refusedKeys)
        case .frameTooLarge, .unencodable: fail(error.description, status: ExitStatus.refused)
        case .invalidReply, .closed: fail(error.description, status: ExitStatus.internalFailure)
        }
    } catch let error as CLIError {
        fail(error.message, status: error.status)
    } catch let error as ExitCode {
        throw error // a command's own exit status
    } catch let error as ValidationError {
        throw error // ArgumentParser words it, with the usage
    } catch let error as CleanExit {
        throw error
    } catch {
        // Anything else still gets one line, never a dump: a file the CLI could not write (a full disk, a name taken by
        // a folder), or what no command expected.
        if let problem = FileProblem(error) { fail(problem.sentence, status: problem.status) }
        fail("stopped by an unexpected error: \(error)", status: ExitStatus.internalFailure)
    }
}

/// The plain sentence for a service error (its message already says what and why).
func sentence(for error: ServiceError) -> String {
    switch error.code {
    case .conflict: "\(error.message). Nothing was changed."
    case .starterReadOnly: error.message + "."
    default: error.message
    }
}

/// A line on standard error that does not stop the command.
func printNote(_ message: String) {
    FileHandle.standardError.write(Data("recipes: note: \(TerminalText.safe(message))\n".utf8))
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("recipes: \(TerminalText.safe(message))\n".utf8))
    exit(status)
}

/// A failure the CLI itself finds (an ambiguous name, an unreadable file).
struct CLIError: Error {
    let message: String
    let status: Int32
    init(_ message: String, status: Int32 = ExitStatus.refused) {
        self.message = message
        self.status = status
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
