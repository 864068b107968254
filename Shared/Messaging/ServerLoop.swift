import Foundation
import Logging
import RecipeProtocol
import ZeroMQ

/// The part of `MessageServer` that runs on its I/O thread and owns the ROUTER socket.
final class ServerLoop {
    private let configuration: MessageServer.Configuration
    private let routes: Routes
    private let logger: Logger
    private let mailbox: ServerMailbox
    private let context: Context
    private let encoder = WireCodec.makeEncoder()
    private let decoder = WireCodec.makeDecoder()
    private var cache: ReplyCache
    private var running = 0
    private let executor: LoopExecutor

    init(configuration: MessageServer.Configuration, routes: Routes, logger: Logger, mailbox: ServerMailbox, context: Context) {
        self.context = context
        self.configuration = configuration
        self.routes = routes
        self.logger = logger
        self.mailbox = mailbox
        self.cache = ReplyCache(capacity: configuration.replyCacheCapacity, lifetime: configuration.replyCacheLifetime)
        self.executor = LoopExecutor(wakeup: mailbox.wakeup)
    }

    /// Binds, serves until asked to stop, drains, closes.
    func run() throws {
        let socket: Socket
        // The authenticator must serve the context before the socket binds (see ZAPAuthenticator).
        var authenticator: ZAPAuthenticator?
        defer { authenticator?.stop() }
        do {
            socket = try Socket(context, .router)
            try socket.setMaxMessageSize(configuration.maxFrameBytes)
            if configuration.endpoint.contains("[") { try socket.setIPv6(true) }
            if let security = configuration.security {
                authenticator = try ZAPAuthenticator(serving: security, in: context, logger: logger)
                try socket.apply(security, domain: ZAPAuthenticator.recipeVaultDomain)
            }
            let endpoint = try socket.bind(configuration.endpoint)
            mailbox.reportBound(.success(endpoint))
            logger.info("listening", metadata: ["endpoint": "\(endpoint)", "operations": "\(routes.operations.joined(separator: " "))"])
        } catch {
            let failure = ServerStartError(endpoint: configuration.endpoint, underlying: error)
            mailbox.reportBound(.failure(failure))
            throw failure
        }
        defer { socket.close() }
        mailbox.wakeup.claim()

        let poller = Poller()
        let socketItem = try poller.add(socket)
        let wakeItem = poller.add(fileDescriptor: mailbox.wakeup.readDescriptor)
        var drainDeadline: ContinuousClock.Instant?

        while true {
            let timeout: Duration? = drainDeadline.map { min(.milliseconds(50), max(.zero, $0 - .now)) }
            try poller.poll(timeout: timeout)
            if poller.events(at: wakeItem).contains(.readable) {
                mailbox.wakeup.drain()
            }
            try runHandlers(on: socket)
            if drainDeadline == nil && mailbox.stopRequested {
                drainDeadline = .now + configuration.drainTimeout
                logger.info("stopping", metadata: ["running": "\(running)"])
            }
            if poller.events(at: socketItem).contains(.readable) {
                // Take what is waiting, but bounded, so replies keep flowing under load.
                for _ in 0..<256 {
                    guard let message = try socket.receive(dontWait: true) else { break }
                    try handle(message, on: socket, stopping: drainDeadline != nil)
                }
                try runHandlers(on: socket)
            }
            if let deadline = drainDeadline, running == 0 || ContinuousClock.now >= deadline {
                if running > 0 { logger.warning("stopped with requests still running", metadata: ["running": "\(running)"]) }
                // Give the last replies a moment to leave before the socket goes.
                try? socket.setLinger(.seconds(1))
                return
            }
        }
    }

    /// Runs the handler work that is ready and sends the replies it produced.
    private func runHandlers(on socket: Socket) throws {
        executor.runPending()
        for outgoing in mailbox.takeOutbox() { try deliver(outgoing, on: socket) }
    }

    private func handle(_ message: Message, on socket: Socket, stopping: Bool) throws {
        let frames = message.frames
        // [identity, (empty delimiter from REQ-style clients), JSON, binary…]
        guard frames.count >= 2 else { return }
        let delimited = frames[1].isEmpty && frames.count >= 3
        let payloadIndex = delimited ? 2 : 1
        let peer = ReplyCache.Peer(identity: frames[0], delimited: delimited)

        let header: RequestHeader
        do {
            header = try WireCodec.decodeRequestHeader(frames[payloadIndex], using: decoder)
        } catch {
            try send([WireCodec.encodeError(id: error.id, error: error.error, using: encoder)], to: peer, on: socket)
            return
        }
        if stopping {
            let error = ServiceError(.shuttingDown, "\(configuration.serviceName) is shutting down; retry once it is back")
            try send([WireCodec.encodeError(id: header.id, error: error, using: encoder)], to: peer, on: socket)
            return
        }
        guard let route = routes.table[header.op] else {
            let error = ServiceError(.unknownOp,
                "unknown operation \"\(header.op)\"; \(configuration.serviceName) answers: \(routes.operations.joined(separator: ", "))")
            try send([WireCodec.encodeError(id: header.id, error: error, using: encoder)], to: peer, on: socket)
            return
        }
        if route.isWrite {
            switch cache.begin(id: header.id, op: header.op, peer: peer, now: .now) {
            case .new:
                break
            case .running:
                return
            case .answered(let reply):
                try send(reply, to: peer, on: socket)
                return
            case .reused(let previousOp):
                let error = ServiceError(.invalidEnvelope,
                    "request id \(header.id) was already used for \(previousOp); every new request needs a new id")
                try send([WireCodec.encodeError(id: header.id, error: error, using: encoder)], to: peer, on: socket)
                return
            }
        }

        running += 1
        var requestLogger = logger
        requestLogger[metadataKey: "request"] = "\(header.id)"
        requestLogger[metadataKey: "op"] = "\(header.op)"
        let context = RequestContext(
            requestID: header.id, op: header.op,
            frames: Array(frames[(payloadIndex + 1)...]), logger: requestLogger)
        let payload = frames[payloadIndex]
        let mailbox = self.mailbox
        let isWrite = route.isWrite
        Task(executorPreference: executor) {
            let reply = await route.run(payload, context)
            mailbox.post(.init(peer: peer, requestID: context.requestID, isWrite: isWrite, frames: reply))
        }
    }

    private func deliver(_ outgoing: ServerMailbox.Outgoing, on socket: Socket) throws {
        running -= 1
        var peer = outgoing.peer
        if outgoing.isWrite, let newest = cache.finish(id: outgoing.requestID, reply: outgoing.frames, now: .now) {
            peer = newest
        }
        try send(outgoing.frames, to: peer, on: socket)
    }

    private func send(_ reply: [Data], to peer: ReplyCache.Peer, on socket: Socket) throws {
        var frames = [peer.identity]
        if peer.delimited { frames.append(Data()) }
        frames.append(contentsOf: reply)
        // A ROUTER drops replies to peers that are gone or full rather than blocking.
        try socket.send(Message(frames), dontWait: true)
    }
}

/// The server could not start listening.
public struct ServerStartError: Error, CustomStringConvertible {
    /// The endpoint it tried.
    public let endpoint: String
    /// Why it failed.
    public let underlying: any Error

    /// An error for `endpoint`, failed because of `underlying`.
    public init(endpoint: String, underlying: any Error) {
        self.endpoint = endpoint
        self.underlying = underlying
    }

    public var description: String { "cannot listen on \(endpoint): \(underlying)" }
}
