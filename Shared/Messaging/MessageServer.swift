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
        /// Requests handled at once; beyond it a request is answered `busy` (the client retries).
        public var maxRequestsInFlight: Int = WireProtocol.defaultMaxRequestsInFlight
        /// How many answered writes are remembered for retries.
        public var replyCacheCapacity: Int = 10_000
        /// The most bytes of remembered replies; the oldest are forgotten first.
        public var replyCacheBytes: Int = WireProtocol.defaultReplyCacheBytes
        /// How long an answered write is remembered.
        public var replyCacheLifetime: Duration = .seconds(600)
        /// How long graceful shutdown waits for running requests.
        public var drainTimeout: Duration = .seconds(10)
        /// CURVE keys and the clients allowed in; `nil` serves anyone who can connect, in the clear.
        public var security: CurveServerSecurity?

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
                let (configuration, routes, logger, mailbox, context) = (configuration, routes, logger, mailbox, context)
                Thread.start(named: "zmq \(Thread.shortName(ofService: configuration.serviceName))") {
                    do {
                        let loop = ServerLoop(configuration: configuration, routes: routes, logger: logger, mailbox: mailbox, context: context)
                        try loop.run()
                        continuation.resume()
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        } onCancelOrGracefulShutdown: {
            self.stop()
        }
    }

    /// Asks the server to stop taking requests, finish the running ones and close.
    public func stop() {
        mailbox.requestStop()
    }
}

/// What the handler tasks and the `MessageServer` hand to the I/O thread.
final class ServerMailbox: Sendable {
    struct Outgoing {
        var peer: ReplyCache.Peer
        var requestID: String
        var isWrite: Bool
        var frames: [Data]
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

    func requestStop() {
        state.withLock { $0.stopRequested = true }
        wakeup.signal()
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
