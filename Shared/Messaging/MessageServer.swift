import Foundation
import Logging
import RecipeProtocol
import ServiceLifecycle
import Synchronization
import ZeroMQ

/// A ROUTER server for the RecipeVault protocol: decodes requests, dispatches
/// them to their handlers, replies, and turns every malformed input into an
/// error reply (docs/PROTOCOL.md).
///
/// The socket lives on a dedicated I/O thread; handlers run as tasks and their
/// replies travel back to that thread. Run it in a `ServiceGroup`: graceful
/// shutdown stops taking requests, waits for the running ones (up to
/// `drainTimeout`) and closes.
public final class MessageServer: Service, Sendable {
    /// How the server listens and what it allows.
    public struct Configuration: Sendable {
        /// The endpoint to bind, such as `tcp://127.0.0.1:5555` or `tcp://127.0.0.1:*`.
        public var endpoint: String
        /// The executable name used in logs and health replies, such as `recipe-storage`.
        public var serviceName: String
        /// A peer that sends a frame larger than this is disconnected.
        public var maxFrameBytes: Int = WireProtocol.defaultMaxFrameBytes
        /// The most bytes of one request, all frames together; a larger one is answered `message_too_large` unread.
        public var maxMessageBytes: Int = WireProtocol.defaultMaxMessageBytes
        /// The most frames of one request (JSON and binary); more is answered `message_too_large`.
        public var maxFrames: Int = WireProtocol.maxFrames
        /// Client connections held at once, about (counted as the files the process opened since the server began to
        /// listen): past it new connections are held back until some close, as when they near the open-file limit.
        /// `nil`: the open-file limit alone — for a server that shares its process with others (tests), whose files
        /// are not its connections; a service's executable sets it (`--max-connections`).
        public var maxConnections: Int?
        /// The most memory the process may hold (resident bytes) before it shuts the connections that brought no whole
        /// request in the last `ServerLoop.quietBeforeShed`: a connection part-way through a frame holds what it sent
        /// of it, up to `maxFrameBytes` each, for as long as it likes. `nil`: no such bound — for a server that shares
        /// its process with others (tests); a service's executable sets it (`--max-memory`).
        public var maxResidentBytes: Int?
        /// Requests handled at once; beyond it a request is answered `busy` (the client retries).
        public var maxRequestsInFlight: Int = WireProtocol.defaultMaxRequestsInFlight
        /// Bytes of the requests being handled, all together; beyond it a request is answered `busy`. One request is
        /// always taken when none is being handled, whatever its size (up to `maxMessageBytes`).
        public var maxBytesInFlight: Int = WireProtocol.defaultMaxBytesInFlight
        /// How many answered writes are remembered for retries.
        public var replyCacheCapacity: Int = 10_000
        /// The most bytes of remembered replies; the oldest are forgotten first.
        public var replyCacheBytes: Int = WireProtocol.defaultReplyCacheBytes
        /// How long an answered write is remembered.
        public var replyCacheLifetime: Duration = .seconds(600)
        /// How long graceful shutdown waits for running requests.
        public var drainTimeout: Duration = .seconds(10)
        /// How much longer than `drainTimeout` a stop waits for the I/O thread itself to come back. A request that holds
        /// that thread (one that blocks instead of awaiting) would otherwise keep the process from ever exiting on
        /// SIGTERM; past this, `run()` throws `ServerStuckError` and leaves the thread behind.
        public var stuckGrace: Duration = .seconds(5)
        /// CURVE keys and the clients allowed in; `nil` serves anyone who can connect, in the clear.
        public var security: CurveServerSecurity?
        /// Other endpoints of this process whose connections are held back and shut with this one's when connections
        /// hold nearly every file the process may open (the storage's change-notice endpoint).
        public var heldBackWith: [String] = []

        /// A configuration for `serviceName` listening on `endpoint`.
        public init(endpoint: String, serviceName: String) {
            self.endpoint = endpoint
            self.serviceName = serviceName
        }
    }

    let configuration: Configuration
    let routes: Routes
    let logger: Logger
    let mailbox: ServerMailbox
    let context: Context
    /// How `run()` ends: the I/O thread's own return, or the watchdog's verdict that it is stuck, whichever comes first.
    private let ending = Mutex<RunEnding>(.notStarted)

    private enum RunEnding {
        case notStarted
        case running(CheckedContinuation<Void, any Error>)
        case ended
    }

    /// A server answering `routes`; nothing is bound until `run()`.
    /// Pass the `context` of the clients to serve them over `inproc://`.
    public init(configuration: Configuration, routes: Routes, logger: Logger, context: Context? = nil) throws {
        self.configuration = configuration
        self.routes = routes
        self.logger = logger
        self.mailbox = try ServerMailbox()
        self.context = try context ?? Context()
    }

    /// The endpoint actually bound (with the real port for `*`), once `run()` has bound it.
    /// Throws the bind error if binding failed.
    public var boundEndpoint: String {
        get async throws { try await mailbox.boundEndpoint() }
    }

    /// Serves until graceful shutdown or cancellation, then drains and closes.
    public func run() async throws {
        try await withTaskCancellationOrGracefulShutdownHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                ending.withLock { ending in
                    precondition({ if case .notStarted = ending { true } else { false } }(), "a MessageServer runs once")
                    ending = .running(continuation)
                }
                let (configuration, routes, logger, mailbox, context) = (configuration, routes, logger, mailbox, context)
                Thread.start(named: "zmq \(Thread.shortName(ofService: configuration.serviceName))") { [self] in
                    do {
                        let loop = ServerLoop(configuration: configuration, routes: routes, logger: logger, mailbox: mailbox, context: context)
                        try loop.run()
                        end(.success(()))
                    } catch {
                        end(.failure(error))
                    }
                }
            }
        } onCancelOrGracefulShutdown: {
            self.stop()
        }
    }

    /// Asks the server to stop taking requests, finish the running ones and close. Should the I/O thread not come
    /// back within `drainTimeout` + `stuckGrace` (a request holds it), `run()` throws `ServerStuckError` then.
    public func stop() {
        let first = mailbox.requestStop()
        guard first else { return }
        let waited = configuration.drainTimeout + configuration.stuckGrace
        Task.detached { [self] in
            try? await Task.sleep(for: waited)
            let stuck = ServerStuckError(serviceName: configuration.serviceName, waited: waited)
            if end(.failure(stuck)) {
                logger.critical("stopping without the request thread", metadata: ["error": "\(stuck)"])
            }
        }
    }

    /// Resumes `run()` with `result` unless it has already ended; `true` when this call ended it.
    @discardableResult
    private func end(_ result: Result<Void, any Error>) -> Bool {
        let continuation = ending.withLock { ending -> CheckedContinuation<Void, any Error>? in
            guard case .running(let continuation) = ending else { return nil }
            ending = .ended
            return continuation
        }
        continuation?.resume(with: result)
        return continuation != nil
    }
}

/// The server's I/O thread did not come back after a stop: a request holds it. `run()` gave up waiting for it, so
/// the process can exit; what that request was doing is left unfinished (an acknowledged write is already committed).
public struct ServerStuckError: Error, CustomStringConvertible {
    /// The service, such as `recipe-storage`.
    public let serviceName: String
    /// How long after the stop it waited.
    public let waited: Duration

    public var description: String {
        "\(serviceName) stopped without its request thread: a request still held it \(waited.spokenText) after the stop "
            + "began (a request that blocks instead of waiting); nothing acknowledged is lost"
    }
}

/// What the handler tasks and the `MessageServer` hand to the I/O thread.
final class ServerMailbox: Sendable {
    struct Outgoing {
        var peer: ReplyCache.Peer
        var requestID: String
        /// Answers a request run once per id (`Routes.Route.runsOnce`): the reply goes to every repeat waiting for it.
        var runsOnce: Bool
        /// The bytes of the request this answers, counted against `maxBytesInFlight` until it is delivered.
        var requestBytes: Int
        var frames: [Data]
        /// Such a reply is remembered for its retries, unless it says `busy` (the write did nothing: a retry runs it).
        var remember = true
    }

    private struct State {
        var outbox: [Outgoing] = []
        var stopRequested = false
        var bound: Result<String, any Error>?
        var waiters: [CheckedContinuation<String, any Error>] = []
    }

    let wakeup: Wakeup
    private let state = Mutex(State())

    init() throws {
        wakeup = try Wakeup()
    }

    /// Queues a reply for the I/O thread and wakes it if the queue was empty.
    func post(_ outgoing: Outgoing) {
        let wasEmpty = state.withLock { state in
            state.outbox.append(outgoing)
            return state.outbox.count == 1
        }
        if wasEmpty { wakeup.signal() }
    }

    /// Everything queued so far. Call after `wakeup.drain()`, never before.
    func takeOutbox() -> [Outgoing] {
        state.withLock { state in
            defer { state.outbox.removeAll(keepingCapacity: true) }
            return state.outbox
        }
    }

    var stopRequested: Bool { state.withLock { $0.stopRequested } }

    /// Asks the loop to stop; `true` the first time.
    @discardableResult
    func requestStop() -> Bool {
        let first = state.withLock { state in
            defer { state.stopRequested = true }
            return !state.stopRequested
        }
        wakeup.signal()
        return first
    }

    func reportBound(_ result: Result<String, any Error>) {
        let waiters = state.withLock { state in
            state.bound = result
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    func boundEndpoint() async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<String, any Error>? = state.withLock { state in
                if let bound = state.bound { return bound }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
