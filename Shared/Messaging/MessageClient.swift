import Foundation
import Logging
import RecipeProtocol
import ZeroMQ

/// A client for one RecipeVault service, with a per-request timeout and bounded
/// retries (the zguide's Lazy Pirate pattern): when no reply comes in time, the
/// socket is closed and reopened and the request — same id, so a write takes
/// effect once — is sent again; after the last try it gives up with
/// `MessageClientError.unreachable` instead of hanging.
///
/// A try also ends, before its timeout, when the connection its request went over closes: the service stopped
/// (a kill, a crash, a restart) or its host went silent (heartbeats), and the reply cannot come any more. A
/// request given a long wait (a database snapshot's, 15 minutes) would otherwise wait all of it for a service that
/// was restarted in seconds. After the last such try it gives up with `MessageClientError.connectionLost`.
///
/// The socket lives on the client's own thread, so waiting never blocks Swift's
/// cooperative pool. Requests from several tasks are sent one after another.
public actor MessageClient {
    /// Where the service is and how long to wait for it.
    public struct Configuration: Sendable {
        /// The service's endpoint, such as `tcp://127.0.0.1:5555`.
        public var endpoint: String
        /// What to call the service in errors: `storage`, `worker`.
        public var serviceName: String
        /// How long one try waits for its reply.
        public var timeout: Duration = .seconds(5)
        /// How many tries before giving up (at least 1).
        public var attempts: Int = 3
        /// Frames larger than this are refused before sending (the server would disconnect).
        public var maxFrameBytes: Int = WireProtocol.defaultMaxFrameBytes
        /// Added to the "not reachable" error: how the user points the client elsewhere.
        public var hint: String?
        /// Where the endpoint is set ("RECIPES_STORAGE or --storage"), named when another service answers at it.
        public var setting: String?
        /// This client's CURVE keys and the service's public key; `nil` talks in the clear.
        public var security: CurveClientSecurity?
        /// Added to the "refused" error: where the user sets this client's keys.
        public var securityHint: String?
        /// ZMTP heartbeats on the connection: a ping every `interval`, and a service silent for `timeout` (its machine
        /// lost power, the network between went quiet) is taken as gone: the try ends as for a closed connection.
        public var heartbeat: (interval: Duration, timeout: Duration) = (.seconds(5), .seconds(30))

        /// A configuration for `serviceName` at `endpoint`.
        public init(endpoint: String, serviceName: String) {
            self.endpoint = endpoint
            self.serviceName = serviceName
        }
    }

    /// How often a `busy` answer is retried (with a growing pause, about 10 s in all) before it is reported.
    static let busyRetries = 24
    /// How long a wait for a reply goes before the connection's events (a security refusal, a connection closed)
    /// are looked at.
    static let refusalSlice = Duration.milliseconds(50)
    /// How often the connection's events are read while no request is out. libzmq queues them until read, and a
    /// peer that keeps dropping the connection makes a few each reconnect (ten a second): read now and then, an idle
    /// client holds a few dozen, not a day's worth.
    static let idleEventReading = Duration.seconds(5)

    /// The configuration this client was made with.
    public nonisolated let configuration: Configuration
    private let executor: ThreadExecutor
    private let context: Context
    private let logger: Logger
    private let encoder = WireJSONEncoder()
    private let decoder = WireJSONDecoder()
    private var connection: Connection?
    /// Security handshakes that failed in a row (see `refusal(on:)`).
    private var handshakeFailures = 0
    /// Whether a connection was made, and whether any handshake succeeded, during the current exchange: connected and
    /// never handshaken, the peer is no RecipeVault service answering (another program, or one stopped or hung).
    private var connectedSeen = false
    private var handshakeSeen = false
    /// Whether the connection has finished its handshake and not closed since (requests flow over it), and whether
    /// such a connection closed since the request was sent: the request is lost with it.
    private var live = false
    private var lost = false
    private var closed = false
    /// Reads the connection's events while the client is idle (see `idleEventReading`); runs while there is a connection.
    private var eventReader: Task<Void, Never>?
    /// Bytes of every request frame sent and every reply frame received (for figures: what a sync moved).
    public private(set) var bytesSent = 0
    public private(set) var bytesReceived = 0

    private struct Connection {
        let socket: Socket
        /// Reports failed security handshakes, so a refusal is told at once instead of as silence.
        let events: Socket
    }

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The client's own thread, as a task executor. Code that makes requests one
    /// after another can run there (`withTaskExecutorPreference(client.thread)`)
    /// and save the two thread hand-offs each request otherwise costs.
    public nonisolated var thread: any TaskExecutor { executor }

    /// A client for `configuration`; nothing is sent until the first request.
    /// Pass the server's `context` to reach it over `inproc://`; otherwise the process's shared context serves it.
    public init(configuration: Configuration, logger: Logger = Logger(label: "recipevault.client"), context: Context? = nil) throws {
        precondition(configuration.attempts >= 1, "attempts must be at least 1")
        self.configuration = configuration
        self.logger = logger
        self.context = try context ?? Context.shared()
        self.executor = ThreadExecutor(name: "\(configuration.serviceName) client")
    }

    deinit {
        // The socket closes itself when released; the thread only needs telling to finish.
        executor.shutdown()
    }

    /// Closes the socket; later requests fail with `MessageClientError.closed`.
    public func close() {
        connection?.socket.close()
        connection?.events.close()
        connection = nil
        eventReader?.cancel()
        eventReader = nil
        closed = true
    }

    /// Reads the events that came while no request was out (a request reads its own as it waits): a refusal or a lost
    /// connection then is no request's, and only the state they leave matters (whether the connection is up).
    /// `false` once there is no connection (the reader stops; the next connection starts another).
    private func readIdleEvents() -> Bool {
        guard let connection else {
            eventReader = nil
            return false
        }
        _ = try? refusal(on: connection)
        return true
    }

    /// Sends `Op` with `body` (and `frames` as frames 1…n) and returns the reply
    /// body with its frames. A failed request throws the service's `ServiceError`. `timeout` replaces the
    /// configured wait for this request (one the service needs long for: a database snapshot).
    public func send<Op: WireOperation>(
        _: Op.Type, _ body: Op.Request, frames: [Data] = [], requestID: String = RequestID.make(), timeout: Duration? = nil
    ) throws -> Reply<Op.Response> {
        guard !closed else { throw MessageClientError.closed }
        for (index, frame) in frames.enumerated() where frame.count > configuration.maxFrameBytes {
            throw MessageClientError.frameTooLarge(frame: index + 1, bytes: frame.count, limit: configuration.maxFrameBytes)
        }
        let json: Data
        do {
            json = try WireCodec.encodeRequest(id: requestID, op: Op.name, body: body, using: encoder)
        } catch let error as EncodingError {
            throw MessageClientError.unencodable(op: Op.name, reason: Self.reason(error))
        }
        guard json.count <= configuration.maxFrameBytes else {
            throw MessageClientError.frameTooLarge(frame: 0, bytes: json.count, limit: configuration.maxFrameBytes)
        }
        return try exchange(Message([Data(), json] + frames), requestID: requestID, op: Op.name, as: Op.Response.self,
                            timeout: timeout ?? configuration.timeout)
    }

    /// Sends `Op` with `body` and returns the reply body (for replies without frames).
    public func call<Op: WireOperation>(_ op: Op.Type, _ body: Op.Request, requestID: String = RequestID.make(),
                                        timeout: Duration? = nil) throws -> Op.Response {
        try send(op, body, requestID: requestID, timeout: timeout).body
    }

    /// Lazy Pirate: send, wait up to `timeout`, and on silence reopen and resend.
    private func exchange<Body: Decodable & Sendable>(_ request: Message, requestID: String, op: String, as _: Body.Type,
                                                      timeout: Duration) throws -> Reply<Body> {
        handshakeFailures = 0
        connectedSeen = false
        handshakeSeen = false
        var busyAnswers = 0
        var lostTries = 0
        for attempt in 1...configuration.attempts {
            let connection = try connect()
            // What happened to the connection before this request is not this request's: a close then is of a
            // connection the request never went over (ZeroMQ has connected again, or will, before sending it).
            if let refusal = try refusal(on: connection) {
                disconnect()
                throw refusal
            }
            lost = false
            var deadline = ContinuousClock.now + timeout
            if try connection.socket.send(request) {
                bytesSent += request.frames.reduce(0) { $0 + $1.count }
                while case let remaining = deadline - .now, remaining > .zero {
                    // Wait on the socket alone (a blocking receive makes one system call where polling the
                    // socket and its security events made about seven); the events are read when a slice
                    // passes without a reply, so a refused handshake or a closed connection is told within one slice.
                    try connection.socket.setReceiveTimeout(min(remaining, Self.refusalSlice))
                    guard let message = try connection.socket.receive() else {
                        if let refusal = try refusal(on: connection) {
                            disconnect()
                            throw refusal
                        }
                        if lost { break }
                        continue
                    }
                    bytesReceived += message.frames.reduce(0) { $0 + $1.count }
                    do {
                        if let reply = try parse(message, expecting: requestID, op: op, as: Body.self) { return reply }
                    } catch let error as ServiceError where error.code == .busy && busyAnswers < Self.busyRetries {
                        // The service is full, not gone: wait a little longer each time and ask again.
                        busyAnswers += 1
                        Thread.sleep(forTimeInterval: min(0.5, 0.01 * Double(1 << min(busyAnswers, 6))))
                        guard try connection.socket.send(request) else { break }
                        deadline = ContinuousClock.now + timeout
                    }
                }
            }
            if lost { lostTries += 1 }
            logger.debug(lost ? "connection closed before the reply" : "no reply in time", metadata: [
                "endpoint": "\(configuration.endpoint)", "attempt": "\(attempt)", "request": "\(requestID)",
            ])
            // The socket may hold a half-sent request or a late reply: start over with a new one.
            disconnect()
        }
        if lost {
            throw MessageClientError.connectionLost(service: configuration.serviceName, endpoint: configuration.endpoint, op: op,
                                                    attempts: configuration.attempts, closed: lostTries)
        }
        var hint = configuration.hint
        if connectedSeen && !handshakeSeen {
            // "Is it running?" would send the person to start what answers the port already.
            let fix = configuration.setting.map { "; check \($0)" } ?? ""
            hint = "something accepts connections there but never answered the ZeroMQ handshake: another program listens on that port, "
                + "or \(configuration.serviceName) is stopped or hung\(fix)"
        } else if configuration.security != nil {
            // A service with another key pair than the one this client was told about stays silent too.
            hint = [hint, "if it is running, check that the public key this client has for it is the service's"]
                .compactMap { $0 }.joined(separator: "; ")
        }
        throw MessageClientError.unreachable(
            service: configuration.serviceName, endpoint: configuration.endpoint,
            attempts: configuration.attempts, timeout: timeout, hint: hint)
    }

    /// What of a request JSON cannot carry (a `Double` that is nan or infinite is the one case our requests reach):
    /// the field by its path in the body and the value.
    static func reason(_ error: EncodingError) -> String {
        guard case let .invalidValue(value, context) = error else { return "\(error)" }
        // The envelope's own keys (`body`) are not the caller's; array places are said as numbers from 1.
        let keys = context.codingPath.first?.stringValue == "body" ? context.codingPath.dropFirst() : context.codingPath[...]
        let path = keys
            .map { $0.intValue.map { "\($0 + 1)" } ?? $0.stringValue }
            .joined(separator: ".")
        let field = path.isEmpty ? "a value" : path
        return value is Double || value is Float ? "\(field) is \(value), not a number JSON can carry" : "\(field) cannot be written as JSON"
    }

    /// The refusal the service's security handshake reported, if any: it will not change by retrying.
    /// A refused key or a mechanism mismatch is told at once; a handshake the service cut short
    /// (as it does when the client has the wrong public key for it, or keys it does not use) is
    /// told once it has happened three times in a row, so a service restarting is not taken for one.
    /// A connection that had finished its handshake and closes sets `lost` (see `live`).
    private func refusal(on connection: Connection) throws -> MessageClientError? {
        while let event = try connection.events.readEvent() {
            let reason: String
            if event.kind == .connected {
                connectedSeen = true
                continue
            } else if event.kind == .disconnected {
                if live { lost = true }
                live = false
                continue
            } else if event.kind == .handshakeSucceeded {
                handshakeFailures = 0
                handshakeSeen = true
                live = true
                continue
            } else if event.kind == .handshakeFailedAuth {
                reason = configuration.security.map {
                    "it does not allow this client's public key \($0.keys.publicKey)"
                } ?? "it requires a client key"
            } else if event.kind == .handshakeFailedProtocol && event.value == SocketEvent.mechanismMismatch {
                reason = Self.mismatch(hasKeys: configuration.security != nil)
            } else {
                handshakeFailures += 1
                guard handshakeFailures >= 3 else { continue }
                // Without keys, a service that wants them mostly says so (a mechanism mismatch, above), but may hang up
                // before the client reads it; another program on the port (a web server) hangs up the same way.
                reason = configuration.security == nil
                    ? Self.mismatch(hasKeys: false) + ", or what answers there is not a RecipeVault service at all (another program on that port, such as a web server)"
                    : "the secure handshake failed: the public key this client has for the service is not its key, or the service does not use CURVE"
            }
            return .refused(service: configuration.serviceName, endpoint: configuration.endpoint,
                            reason: reason, hint: configuration.securityHint)
        }
        return nil
    }

    private static func mismatch(hasKeys: Bool) -> String {
        hasKeys ? "it does not use CURVE security but this client was given keys for it"
            : "it requires CURVE security and this client has no keys"
    }

    /// The reply in `message` if it answers `requestID`; `nil` for a late reply to an earlier try.
    /// A failed request throws the service's `ServiceError`.
    private func parse<Body: Decodable & Sendable>(_ message: Message, expecting requestID: String, op: String, as _: Body.Type) throws -> Reply<Body>? {
        var frames = message.frames[...]
        if frames.first?.isEmpty == true { frames = frames.dropFirst() }
        guard let json = frames.first else { return nil }
        let header: ReplyHeader
        let body: Body?
        do {
            (header, body) = try WireCodec.decodeReply(Body.self, from: json, using: decoder)
        } catch {
            // Not this body's shape: read the header alone to tell a late reply or an error from a bad reply.
            guard let bare = try? WireCodec.decodeReplyHeader(json, using: decoder) else {
                throw MessageClientError.invalidReply("\(configuration.serviceName) at \(configuration.endpoint) sent a reply that is not RecipeVault JSON")
            }
            (header, body) = (bare, nil)
        }
        // A reply with no id answers a request the service could not read: ours, as only one is out.
        guard header.id == requestID || header.id == nil else { return nil }
        if let error = header.error { throw wrongService(error, op: op) ?? error }
        guard let body else {
            throw MessageClientError.invalidReply("the \(configuration.serviceName) reply to \(op) could not be read")
        }
        return Reply(body, frames: Array(frames.dropFirst()))
    }

    /// An endpoint given for one service and answered by the other (RECIPES_STORAGE set to the worker's) was said
    /// only as "unknown operation "recipe.list"; recipe-worker answers: …". Said as the mistake it is.
    private func wrongService(_ error: ServiceError, op: String) -> ServiceError? {
        guard error.code == .unknownOp,
              let answering = Self.answeringService(error.message),
              RecipeVault.serviceNames.contains(answering), RecipeVault.serviceNames.contains(configuration.serviceName),
              answering != configuration.serviceName else { return nil }
        let fix = configuration.setting.map { "set \($0) to \(configuration.serviceName)'s endpoint" } ?? "give \(configuration.serviceName)'s endpoint"
        return ServiceError(.unknownOp, "\(configuration.endpoint) is \(answering), not \(configuration.serviceName) (it does not answer \(op)); \(fix)")
    }

    /// The service an `unknown_op` reply names ("unknown operation "x"; recipe-worker answers: …").
    static func answeringService(_ message: String) -> String? {
        guard let end = message.range(of: " answers: ", options: .backwards),
              let start = message[..<end.lowerBound].range(of: "; ", options: .backwards) else { return nil }
        return String(message[start.upperBound..<end.lowerBound])
    }

    private func connect() throws -> Connection {
        if let connection { return connection }
        let socket = try Socket(context, .dealer)
        try socket.setMaxMessageSize(max(configuration.maxFrameBytes * 4, WireProtocol.maxReplyFrameBytes))
        try socket.setSendTimeout(configuration.timeout)
        if configuration.endpoint.contains("[") { try socket.setIPv6(true) }
        if let security = configuration.security { try socket.apply(security) }
        try socket.setHeartbeat(interval: configuration.heartbeat.interval, timeout: configuration.heartbeat.timeout)
        let events = try socket.monitor([.connected, .disconnected, .handshakeFailedAuth, .handshakeFailedProtocol, .handshakeFailed,
                                         .handshakeSucceeded])
        try socket.connect(configuration.endpoint)
        let connection = Connection(socket: socket, events: events)
        self.connection = connection
        if eventReader == nil {
            eventReader = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.idleEventReading)
                    guard let self, await self.readIdleEvents() else { return }
                }
            }
        }
        return connection
    }

    private func disconnect() {
        connection?.socket.close()
        connection?.events.close()
        connection = nil
        live = false
    }
}

/// Why a request got no usable reply.
public enum MessageClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No reply after every try.
    case unreachable(service: String, endpoint: String, attempts: Int, timeout: Duration, hint: String?)
    /// The connection closed before the reply on the last try (`closed` of the `attempts` tries ended so): the service
    /// stopped or restarted while the request was out, or its host went silent. Whether it did the request before
    /// is not known.
    case connectionLost(service: String, endpoint: String, op: String, attempts: Int, closed: Int)
    /// A frame is over the size cap; the service would drop the connection.
    case frameTooLarge(frame: Int, bytes: Int, limit: Int)
    /// The service's security refused this client (wrong or missing keys); retrying will not help.
    case refused(service: String, endpoint: String, reason: String, hint: String?)
    /// The service answered with something that is not a reply of this protocol.
    case invalidReply(String)
    /// The client was closed.
    case closed
    /// The request holds a value JSON cannot carry (nan, an infinity); nothing was sent.
    case unencodable(op: String, reason: String)

    public var description: String {
        switch self {
        case let .unreachable(service, endpoint, attempts, timeout, hint):
            let tries = attempts == 1 ? "1 try" : "\(attempts) tries"
            var text = "\(service) not reachable at \(endpoint): no reply after \(tries) of \(timeout.spokenText) each"
            if let hint { text += " (\(hint))" }
            return text
        case let .connectionLost(service, endpoint, op, attempts, closed):
            let tries = attempts == 1 ? "its only try" : closed == attempts ? "each of \(attempts) tries" : "the last of \(attempts) tries"
            return "\(service) at \(endpoint) closed the connection before it answered \(op), on \(tries): it stopped or restarted "
                + "while the request was out (or its machine stopped answering), so whether it was done is not known; "
                + "once \(service) runs again, ask again"
        case let .frameTooLarge(frame, bytes, limit):
            return "frame \(frame) is \(bytes) bytes; the most one frame may carry is \(limit) bytes"
        case let .refused(service, endpoint, reason, hint):
            return "\(service) at \(endpoint) refused this client: \(reason)" + (hint.map { " (\($0))" } ?? "")
        case let .invalidReply(reason):
            return reason
        case .closed:
            return "the connection was closed"
        case let .unencodable(op, reason):
            return "\(op) was not sent: \(reason)"
        }
    }
}
