import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import RecipeProtocol
import Synchronization
import ZeroMQ

/// Publish/subscribe of change notices, both ends in one place: `ChangePublisher` (the storage) and
/// `ChangeSubscriber` (the worker) share the topic and the notice's shape.
///
/// Announces every committed change on a PUB socket, so a syncing worker can act
/// at once instead of polling: frames `["storage.changed", {"v":1,"seq":…,"op":…,"at":…}]`.
public actor ChangePublisher {
    /// The topic frame of every notice.
    public static let topic = "storage.changed"
    /// The largest frame either end of a change-notice connection takes: a subscription, or a notice (a topic and a
    /// small JSON object). A peer that sends a larger one is disconnected before it is held: without it, a stranger's
    /// one connection to the change-notice endpoint sending a frame of a gigabyte made the storage hold all of it.
    public static let maxFrameBytes = 4_096
    /// The most bytes one connection to the change-notice endpoint may send in all. A subscriber sends its greeting,
    /// its handshake (about 600 bytes with CURVE) and one subscription: under 1 KiB; with ZeroMQ heartbeats, a few
    /// bytes a ping more. ZeroMQ keeps every distinct subscription a connection sends for as long as it stays, at
    /// about 25 bytes of memory a byte sent: one connection sending distinct subscriptions while the storage wrote
    /// took it to 10 GB in 90 seconds. A connection past this is shut (`shutOverfull`); a subscriber connects again
    /// by itself.
    public static let maxSubscriberBytes: UInt64 = 4_096
    /// How often, at most, the connections are looked at: before a notice goes out, which is when ZeroMQ takes in
    /// what subscribers sent.
    static let lookInterval = Duration.milliseconds(100)
    /// Messages of one connection ZeroMQ reads ahead of the publisher (a subscriber sends one): what a connection
    /// sent past them waits in its system buffers until the publisher takes them, so a notice takes in little of a
    /// flood before the look that shuts it.
    static let receiveQueue: Int32 = 2

    private let executor = ThreadExecutor(name: "publish notices")
    private let context: Context
    private let socket: Socket
    /// Lets in only the allowed subscribers when the storage runs with CURVE.
    private let authenticator: ZAPAuthenticator?
    private let encoder = WireJSONEncoder()
    private let logger: Logger
    private var sequence = 0
    /// The endpoint actually bound.
    public nonisolated let endpoint: String
    /// Its TCP port (nil for IPC: a local endpoint, its peers those the folder lets in).
    private let port: UInt16?
    private var nextLook = ContinuousClock.now
    /// The line of connections shut for sending too much: a stranger reconnecting could have one written every look.
    private var shutLog = LogThrottle()

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Binds the PUB socket at `endpoint` (`tcp://127.0.0.1:*` picks a port), with the
    /// storage's CURVE `security` when given (subscribers need an allowed key, as requests do).
    public init(endpoint: String, security: CurveServerSecurity? = nil, logger: Logger) throws {
        context = try Context()
        socket = try Socket(context, .publish)
        self.logger = logger
        try socket.setMaxMessageSize(Self.maxFrameBytes)
        try socket.setReceiveHighWaterMark(Self.receiveQueue)
        if endpoint.contains("[") { try socket.setIPv6(true) }
        if let security {
            authenticator = try ZAPAuthenticator(serving: security, in: context, logger: logger)
            try socket.apply(security, domain: ZAPAuthenticator.recipeVaultDomain)
        } else {
            authenticator = nil
        }
        do {
            self.endpoint = try socket.bind(endpoint)
        } catch {
            throw ServerStartError(endpoint: endpoint, underlying: error)
        }
        port = ConnectionGate.tcpPort(of: self.endpoint)
    }

    deinit { executor.shutdown() }

    /// Queues a notice for `op`; never blocks the caller (a slow subscriber loses notices, not the service).
    /// The task starts on the publisher's own thread, not Swift's shared pool: with the pool's threads held by work
    /// that blocks, a notice waited for one to come free (a loaded test run saw none go out in 30 s).
    public nonisolated func announce(_ op: String) {
        Task(executorPreference: executor) { await self.publish(op) }
    }

    private func publish(_ op: String) {
        shutOverfull()
        sequence += 1
        let notice = ChangeNotice(v: WireProtocol.version, seq: sequence, op: op, at: Date())
        guard let json = try? encoder.encode(notice) else { return }
        _ = try? socket.send(Message([Data(Self.topic.utf8), json]), dontWait: true)
    }

    public func close() {
        socket.close()
        authenticator?.stop()
    }

    /// Shuts the connections to the endpoint that sent more than a subscriber does (`maxSubscriberBytes`), at most
    /// every `lookInterval`. They are found among the process's open files, by port, so none is missed.
    private func shutOverfull() {
        guard let port else { return }
        let now = ContinuousClock.now
        guard now >= nextLook else { return }
        nextLook = now + Self.lookInterval
        var shut = 0, most: UInt64 = 0
        for descriptor in OpenFiles.descriptors() ?? [] where ConnectionGate.localPort(descriptor) == port {
            guard let received = ConnectionTable.bytesReceived(descriptor), received > Self.maxSubscriberBytes,
                  ConnectionGate.isConnection(descriptor, toPort: port), shutdown(descriptor, Int32(SHUT_RDWR)) == 0 else { continue }
            shut += 1
            most = max(most, received)
        }
        guard shut > 0, let counted = shutLog.admit(adding: ["shut": shut]) else { return }
        logger.warning("change-notice connections that sent more than a subscriber does were disconnected (a subscriber sends under 1 KiB)",
                       metadata: counted.merging(["bytes sent, the most": "\(most)", "limit": "\(Self.maxSubscriberBytes)"]) { $1 })
    }
}

/// What a change notice says: which write committed, and its number since the service started.
public struct ChangeNotice: Codable, Sendable, Equatable {
    public var v: Int
    /// 1, 2, 3… since the service started; a gap means notices were dropped (sync anyway).
    public var seq: Int
    /// The write operation that committed.
    public var op: String
    public var at: Date
}

/// Subscribes to storages' change notices on a thread of its own (ZeroMQ sockets stay on one thread):
/// the other end of `ChangePublisher`.
public final class ChangeSubscriber: Sendable {
    private struct State {
        var pendingEndpoints: [(endpoint: String, security: CurveClientSecurity?)] = []
        var connected: Set<String> = []
        var stopped = false
    }
    private let state = Mutex(State())
    private let logger: Logger

    public init(logger: Logger) { self.logger = logger }

    public func isListening(to name: String) -> Bool { state.withLock { $0.connected.contains(name) } }

    public func add(_ endpoint: String, security: CurveClientSecurity?, for name: String) {
        state.withLock {
            $0.connected.insert(name)
            $0.pendingEndpoints.append((endpoint, security))
        }
        logger.debug("listening for change notices", metadata: ["endpoint": "\(endpoint)"])
    }

    /// Starts listening; `noticed` is called (on the listener's thread) once for each burst of notices that arrives,
    /// and each time a connection to a storage's notices is made (the first, and again after the storage restarted or
    /// the network came back): what it announced while nobody was listening is not known, so it counts as a change.
    /// No wait for a subscription to "settle" is needed before syncing: the sync that a connection asks for follows it.
    public func start(_ noticed: @escaping @Sendable () -> Void) {
        Thread.start(named: "change notices") { [self] in self.loop(noticed) }
    }

    public func stop() { state.withLock { $0.stopped = true } }

    private func loop(_ noticed: @Sendable () -> Void) {
        do {
            let context = try Context.shared()
            // One socket per storage: each may have its own CURVE server key.
            var sockets: [Socket] = []
            // Each socket's connections: a handshake done is a connection made (see `start`).
            var monitors: [Socket] = []
            var poller = Poller()
            while true {
                let (endpoints, stopped) = state.withLock { state in
                    defer { state.pendingEndpoints = [] }
                    return (state.pendingEndpoints, state.stopped)
                }
                if stopped { break }
                if !endpoints.isEmpty {
                    for (endpoint, security) in endpoints {
                        // An endpoint that cannot be listened to (a replica that gave a malformed one, say) loses its
                        // own notices only: one failure here once ended the listening for every storage.
                        let socket = try Socket(context, .subscribe)
                        var monitor: Socket?
                        do {
                            try socket.setMaxMessageSize(ChangePublisher.maxFrameBytes)
                            try socket.subscribe(Array(ChangePublisher.topic.utf8))
                            if endpoint.contains("[") { try socket.setIPv6(true) }
                            if let security { try socket.apply(security) }
                            monitor = try socket.monitor([.handshakeSucceeded])
                            try socket.connect(endpoint)
                            sockets.append(socket)
                            if let monitor { monitors.append(monitor) }
                        } catch {
                            monitor?.close()
                            socket.close()
                            logger.warning("change notices from this endpoint unavailable; its pairs sync on the interval",
                                           metadata: ["endpoint": "\(endpoint.prefix(200))", "error": "\(error)"])
                        }
                    }
                    poller = Poller()
                    for socket in sockets + monitors { try poller.add(socket) }
                }
                // A notice (or a connection made) wakes the poll at once; the timeout only bounds how soon a new
                // endpoint or a stop is taken in.
                if try poller.poll(timeout: .milliseconds(250)) > 0 {
                    var any = false
                    for socket in sockets {
                        while try socket.receive(dontWait: true) != nil { any = true }
                    }
                    for monitor in monitors {
                        while try monitor.readEvent() != nil { any = true }
                    }
                    if any { noticed() }
                }
            }
            for monitor in monitors { monitor.close() }
            for socket in sockets { socket.close() }
        } catch {
            logger.warning("change notices unavailable; syncing on the interval only", metadata: ["error": "\(error)"])
        }
    }

    /// A storage's publish endpoint as the worker can reach it: a wildcard host (`*`, `0.0.0.0`, `[::]`)
    /// becomes the host the worker reaches the storage on.
    public static func reachable(_ published: String, via requestEndpoint: String) -> String {
        func split(_ endpoint: String) -> (scheme: String, host: String, port: String)? {
            guard let schemeEnd = endpoint.range(of: "://"), let colon = endpoint.range(of: ":", options: .backwards),
                  colon.lowerBound > schemeEnd.upperBound else { return nil }
            return (String(endpoint[..<schemeEnd.lowerBound]), String(endpoint[schemeEnd.upperBound..<colon.lowerBound]),
                    String(endpoint[colon.upperBound...]))
        }
        guard let publish = split(published), ["*", "0.0.0.0", "[::]", "[*]"].contains(publish.host),
              let request = split(requestEndpoint) else { return published }
        return "\(publish.scheme)://\(request.host):\(publish.port)"
    }
}
