import Foundation
import Logging
import RecipeProtocol
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// The part of `MessageServer` that runs on its I/O thread and owns the ROUTER socket.
final class ServerLoop {
    private let configuration: MessageServer.Configuration
    private let routes: Routes
    private let logger: Logger
    private let mailbox: ServerMailbox
    private let context: Context
    private let encoder = WireJSONEncoder()
    private let decoder = WireJSONDecoder()
    private var cache: ReplyCache
    private var running = 0
    /// The bytes of the requests `running` counts, all frames together.
    private var runningBytes = 0
    private let limits: Socket.ReceiveLimits
    /// Where handlers run: on this I/O thread, between polls (no hand-off between threads), so a busy
    /// cooperative pool never holds them up.
    private let handlers: LoopExecutor
    /// Where a request with a large body, or one that reads or writes photo files, runs instead.
    private let bulkHandlers: ThreadExecutor
    /// Reads whose reply grows with the collection, made at most two at a time: each holds its rows and its
    /// JSON (a book of 30,000 recipes: ~25 MB) until sent, and eight at once took the storage to 228 MB.
    private let bulkReplies = Slots(limit: ServerLoop.bulkReplyWidth)
    /// Where those are made: as many threads of their own as may be made at once.
    private let bulkReplyHandlers: ThreadPoolExecutor
    static let bulkReplyWidth = 2
    /// From this size on (all frames together), a request runs on `bulkHandlers`.
    static let bulkBytes = 64 * 1_024
    /// Messages ZeroMQ queues per connection before the loop has read them; past it, it reads no more from that
    /// connection until the loop has (the client's sends wait). With the socket's default of 1,000, one client sending
    /// large requests faster than they were answered made the service hold hundreds of them. Two, not one: with
    /// CURVE on, a queue of one let no request of a new connection through (the security tests fail with it).
    static let receiveQueue: Int32 = 2
    /// Replies ZeroMQ queues for one connection before its I/O thread has sent them: past them, a reply is held in the
    /// loop's `backlog` while the client's connection takes bytes, and the client is shut when it stops taking them
    /// (`unreadPatience`). A stranger's connection that sent hundreds of small requests for a recipe of 3.6 MB and
    /// read none of the replies made the storage hold over a gigabyte of them (libzmq's default is a thousand a
    /// connection). A client of ours has one request out on a connection.
    static let replyQueue: Int32 = 4
    /// How long a client's held replies may wait with none sent and no byte of its connection taken, its system
    /// buffer full (the client reads nothing), before it is shut. A client on a slow link that reads goes on taking
    /// bytes, however slowly, and is never shut; one paused for a moment (a loaded machine) is given as long as a
    /// connection may be quiet. Past `--max-memory` the memory bound shuts such connections sooner.
    static let unreadPatience = Duration.seconds(5)
    /// Requests of one client (one connection: its ZeroMQ identity) handled at once, counting those whose replies are
    /// held for it (`backlog`); past them it is answered `busy`.
    /// A client of ours has one out at a time. Without it, one connection that sent requests without waiting took every
    /// one of `--max-requests` (so every other client was answered busy), and 64 reads of a recipe of 3.6 MB at once
    /// held hundreds of megabytes.
    static let requestsPerClient = 8
    /// The requests `running` counts, by client.
    private var runningByClient: [Data: Int] = [:]
    /// The longest the loop waits on its socket alone before it looks at its wake-up pipe.
    static let idleSlice = Duration.milliseconds(100)
    /// How often the loop counts the process's open files for its `ConnectionGate`, besides when connections arrive.
    static let gateInterval = Duration.milliseconds(250)

    init(configuration: MessageServer.Configuration, routes: Routes, logger: Logger, mailbox: ServerMailbox, context: Context) {
        self.context = context
        self.configuration = configuration
        self.routes = routes
        self.logger = logger
        self.mailbox = mailbox
        self.cache = ReplyCache(capacity: configuration.replyCacheCapacity, maxBytes: configuration.replyCacheBytes,
                                lifetime: configuration.replyCacheLifetime)
        // The identity frame and a REQ-style delimiter come on top of what the client sent.
        let service = Thread.shortName(ofService: configuration.serviceName)
        self.handlers = LoopExecutor(wakeup: mailbox.wakeup, name: "\(service) late")
        self.bulkHandlers = ThreadExecutor(name: "\(service) files")
        self.bulkReplyHandlers = ThreadPoolExecutor(name: "\(service) replies", width: Self.bulkReplyWidth)
        self.limits = Socket.ReceiveLimits(maxBytes: configuration.maxMessageBytes + 1_024, maxFrames: configuration.maxFrames + 2)
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
            try socket.setReceiveHighWaterMark(Self.receiveQueue)
            try socket.setSendHighWaterMark(Self.replyQueue)
            // A reply to a client whose queue is full is refused to us (not dropped unseen), so it can be held.
            try socket.setRouterMandatory(true)
            if configuration.endpoint.contains("[") { try socket.setIPv6(true) }
            if let security = configuration.security {
                authenticator = try ZAPAuthenticator(serving: security, in: context, logger: logger)
                try socket.apply(security, domain: ZAPAuthenticator.recipeVaultDomain)
            }
            let endpoint = try socket.bind(configuration.endpoint)
            if let port = ConnectionGate.tcpPort(of: endpoint), let limit = OpenFiles.limit, let baseline = OpenFiles.openCount() {
                let others = configuration.heldBackWith.compactMap(ConnectionGate.tcpPort(of:))
                gate = ConnectionGate(port: port, alsoPorts: others, limit: limit, baseline: baseline, maxConnections: configuration.maxConnections ?? .max)
                accepts = try socket.monitor([.accepted, .disconnected])
            }
            mailbox.reportBound(.success(endpoint))
            logger.info("listening", metadata: ["endpoint": "\(endpoint)", "operations": "\(routes.operations.joined(separator: " "))"])
        } catch {
            let failure = ServerStartError(endpoint: configuration.endpoint, underlying: error)
            mailbox.reportBound(.failure(failure))
            throw failure
        }
        defer { socket.close() }
        defer { accepts?.close() }
        defer {
            handlers.close()
            bulkHandlers.shutdown()
            bulkReplyHandlers.shutdown()
        }
        mailbox.wakeup.claim()

        let poller = Poller()
        let socketItem = try poller.add(socket)
        let wakeItem = poller.add(fileDescriptor: mailbox.wakeup.readDescriptor)
        // Connections arriving wake the loop, which counts the files they hold (`keepFilesFree`).
        if let accepts { _ = try poller.add(accepts) }
        var drainDeadline: ContinuousClock.Instant?

        var jobsWaiting = false
        var idleWait: Duration?
        while true {
            keepFilesFree()
            if drainDeadline == nil && running == 0 && !jobsWaiting && !mailbox.stopRequested && backlog.isEmpty {
                // Nothing of ours is running, so nothing can post a reply: wait on the socket alone. A blocking
                // receive makes one system call where `zmq_poll` of the socket and the wake-up pipe made four or
                // five; the pipe is looked at once a slice passes (a stop request is seen within one slice).
                if idleWait != Self.idleSlice {
                    try socket.setReceiveTimeout(Self.idleSlice)
                    idleWait = Self.idleSlice
                }
                if let message = try socket.receive(limits: limits) {
                    try handle(message, on: socket, stopping: false)
                    jobsWaiting = handlers.runJobs()
                    try runHandlers(on: socket)
                    continue
                }
            }
            var timeout: Duration? = drainDeadline.map { min(.milliseconds(50), max(.zero, $0 - .now)) }
            if gate != nil { timeout = min(timeout ?? Self.gateInterval, Self.gateInterval) }
            // Held replies are tried again soon: ZeroMQ's I/O thread sends what it queued in the meantime.
            if let due = backlog.nextDue {
                let wait = max(.zero, due - .now)
                timeout = min(timeout ?? wait, wait)
            }
            if jobsWaiting { timeout = .zero }
            try poller.poll(timeout: timeout)
            if poller.events(at: wakeItem).contains(.readable) {
                mailbox.wakeup.drain()
            }
            jobsWaiting = handlers.runJobs()
            try runHandlers(on: socket)
            if drainDeadline == nil && mailbox.stopRequested {
                drainDeadline = .now + configuration.drainTimeout
                logger.info("stopping", metadata: ["running": "\(running)"])
            }
            if poller.events(at: socketItem).contains(.readable) {
                // Take what is waiting, but bounded, so replies keep flowing under load.
                for _ in 0..<256 {
                    guard let message = try socket.receive(dontWait: true, limits: limits) else { break }
                    try handle(message, on: socket, stopping: drainDeadline != nil)
                }
                jobsWaiting = handlers.runJobs()
                try runHandlers(on: socket)
            }
            if let deadline = drainDeadline, running == 0 || ContinuousClock.now >= deadline {
                if running > 0 { logger.warning("stopped with requests still running", metadata: ["running": "\(running)"]) }
                try sendHeld(on: socket)
                // Give the last replies a moment to leave before the socket goes.
                try? socket.setLinger(.seconds(1))
                return
            }
        }
    }

    /// Keeps connections from the process's last files (TCP endpoints; an IPC or inproc one's clients are this
    /// machine's own processes).
    private var gate: ConnectionGate?
    /// The connections the listening socket takes, as they come.
    private var accepts: Socket?
    private var nextGateCheck = ContinuousClock.now
    /// The TCP connections taken: when each came, when it last brought a whole request, and whose requests it brings.
    private var connections = ConnectionTable()
    /// Past `--max-memory`, a connection whose replies wait (its system buffer full) and that takes fewer bytes a second
    /// than this is shut.
    static let slowestReader = 64.0 * 1_024
    /// A connection that brought no whole request for this long is shut when the process holds more than it may.
    static let quietBeforeShed = Duration.seconds(5)
    private var nextMemoryShed = ContinuousClock.now
    /// Whether the last look at the memory shut connections: the next hands what they held back to the system.
    private var trimAfterShed = false
    /// The lines of connections shut past `--max-memory` or as they came, and what was shut since the last such line
    /// went out (a stranger reconnecting could otherwise have one written every look).
    private var memoryShedLog = LogThrottle(), shutAsTheyCameLog = LogThrottle()
    /// The lines of the gate holding connections back and taking them again: a stranger opening and closing hundreds
    /// of connections could have a pair written as fast as it can.
    private var gateLog = LogThrottle()

    /// Connections taken since `keepFilesFree` last looked, by file number.
    private var arrived: [Int32] = []

    /// Reads what the monitor reported of connections taken and closed into `connections` (and `arrived`).
    private func readConnectionEvents() {
        while let event = try? accepts?.readEvent() {
            let descriptor = Int32(bitPattern: event.value)
            if event.kind == .accepted {
                arrived.append(descriptor)
                connections.accepted(descriptor, at: .now)
            } else if event.kind == .disconnected {
                connections.disconnected(descriptor)
            }
        }
    }

    /// Counts the open files when connections arrive (and every `gateInterval`) and works the gate: past its
    /// threshold, connection requests are dropped below ZeroMQ and the connections taken meanwhile past it are shut,
    /// newest first (the clients served already keep theirs); once enough files are free, requests are let through.
    private func keepFilesFree() {
        guard var gate else { return }
        readConnectionEvents()
        let arrived = self.arrived
        self.arrived.removeAll()
        guard !arrived.isEmpty || ContinuousClock.now >= nextGateCheck else { return }
        nextGateCheck = .now + Self.gateInterval
        shedIfOverMemory(port: gate.port)
        guard var open = OpenFiles.openCount() else { return }
        defer { self.gate = gate }
        var excess = gate.excess(open: open)
        var shut = 0
        for descriptor in arrived.reversed() where excess > 0 {
            guard shutConnection(descriptor, port: gate.port) else { continue }
            excess -= 1
            shut += 1
        }
        if excess > 0, gate.paused || gate.change(open: open) == .pause {
            // Connections the loop did not see arrive (another endpoint's, or before it looked) still hold too many.
            shut += ConnectionGate.shedUnseen(excess, ports: gate.listeningPorts, below: Int(OpenFiles.limit ?? 0))
        }
        let limit = OpenFiles.limit.map(String.init) ?? "?"
        // What the connections reached: nearly every file the process may open, or the count it takes.
        let reached = gate.bound == .files
            ? "connections hold nearly every file this service may open"
            : "connections reached the most this service takes at once (its --max-connections, \(configuration.maxConnections ?? 0))"
        switch gate.change(open: open) {
        case .pause:
            let held = gate.set(paused: true)
            let failure = errno
            if held {
                if let leftOut = gateLog.admit() {
                    logger.warning("new connections held back: \(reached); those already made are served, and new ones are taken once some close",
                                   metadata: ["open files": "\(open)", "limit": "\(limit)", "shut": "\(shut)"].merging(LogThrottle.metadata(leftOut: leftOut)) { $1 })
                }
            } else if let leftOut = gateLog.admit() {
                logger.error("could not hold new connections back (the system refused the socket filter); connections past the reserve are still shut as they come",
                             metadata: ["open files": "\(open)", "limit": "\(limit)", "error": "\(String(cString: strerror(failure)))"]
                                 .merging(LogThrottle.metadata(leftOut: leftOut)) { $1 })
            }
        case .resume:
            open -= shut
            if gate.set(paused: false), let leftOut = gateLog.admit() {
                logger.info("taking new connections again",
                            metadata: ["open files": "\(open)", "limit": "\(limit)"].merging(LogThrottle.metadata(leftOut: leftOut)) { $1 })
            }
        case nil:
            if shut > 0, let counted = shutAsTheyCameLog.admit(adding: ["shut": shut]) {
                logger.warning("connections shut as they came: \(reached)",
                               metadata: counted.merging(["open files": "\(open)", "limit": "\(limit)"]) { $1 })
            }
        }
    }

    /// Shuts the TCP connection on `descriptor` and notes it, so the requests ZeroMQ still hands over from it are
    /// dropped: false when it is not known, is shut already, or is no longer a connection to `port` (its number may
    /// have been closed and given out again).
    private func shutConnection(_ descriptor: Int32, port: UInt16) -> Bool {
        connections.markShut(descriptor) && ConnectionGate.isConnection(descriptor, toPort: port) && shutdown(descriptor, Int32(SHUT_RDWR)) == 0
    }

    /// Past `maxResidentBytes`, shuts the connections that brought no whole request in the last `quietBeforeShed`, and
    /// those whose replies are not leaving (at most once a second): what a connection sent of a frame it never
    /// finishes is held until it closes, and what it asked for waits until it reads it, so a stranger's connections
    /// would otherwise take the process's memory for good. A client shut so connects again by itself and asks again.
    private func shedIfOverMemory(port: UInt16) {
        let now = ContinuousClock.now
        guard let budget = configuration.maxResidentBytes, now >= nextMemoryShed else { return }
        nextMemoryShed = now + .seconds(1)
        // What the connections shut at the last look held is freed after it; freed memory stays resident until the
        // allocator hands it back, and would be taken for memory still held.
        if trimAfterShed {
            trimAfterShed = false
            _ = ProcessMemory.residentBytesAfterTrim()
        }
        guard let measured = ProcessMemory.residentBytes(), measured > budget,
              let resident = ProcessMemory.residentBytesAfterTrim(), resident > budget else { return }
        let quiet = connections.quiet(for: Self.quietBeforeShed, at: now).filter { shutConnection($0, port: port) }.count
        // And those whose replies are not leaving — the system's buffer for them full, and fewer than `slowestReader`
        // bytes a second taken since the last look — for what they asked for waits here. 200 connections that each
        // asked for eight replies of 3.6 MB and read a byte a second held 3 GB before this.
        // A connection's rate is measured over a stretch its buffer stayed full: one found with room is caught up,
        // and what it took before counts no more.
        let debugging = logger.logLevel <= .debug
        var unread = 0, full = 0, rates: [Int] = []
        for (descriptor, entry) in connections.entries where !entry.shut {
            guard !ConnectionTable.hasRoomToSend(descriptor) else {
                connections.forgetReadingRate(descriptor)
                continue
            }
            full += 1
            guard let bytes = ConnectionTable.bytesAcknowledged(descriptor),
                  let rate = connections.readingRate(descriptor, acknowledged: bytes, at: now) else { continue }
            if debugging { rates.append(Int(rate)) }
            guard rate < Self.slowestReader else { continue }
            if let identity = entry.identity { backlog.drop(identity) }
            if shutConnection(descriptor, port: port) { unread += 1 }
        }
        if debugging {
            logger.debug("over --max-memory: looked for connections to shut",
                         metadata: ["resident MiB": "\(resident / 1_048_576)", "connections": "\(connections.entries.count)", "buffers full": "\(full)",
                                    "bytes a second taken": "\(rates.sorted().prefix(12))", "replies held for": "\(backlog.clients.count)"])
        }
        guard quiet + unread > 0 else { return }
        trimAfterShed = true
        guard let counted = memoryShedLog.admit(adding: ["quiet": quiet, "not reading": unread]) else { return }
        logger.warning("connections shut: \(configuration.serviceName) holds more memory than it may (its --max-memory); those that brought no whole request in the last \(Self.quietBeforeShed.components.seconds) seconds were shut, with what they had sent of one, and those not taking their replies, with the replies",
                       metadata: counted.merging(["resident MiB": "\(resident / 1_048_576)", "limit MiB": "\(budget / 1_048_576)"]) { $1 })
    }

    /// Runs the handler work that is ready and sends the replies it produced, after those held.
    private func runHandlers(on socket: Socket) throws {
        try sendHeld(on: socket)
        for outgoing in mailbox.takeOutbox() { try deliver(outgoing, on: socket) }
    }

    private func handle(_ message: Message, on socket: Socket, stopping: Bool) throws {
        let frames = message.frames
        // A connection the loop shut may still bring requests ZeroMQ had read: its client is gone, so they are dropped.
        // Its number may have gone to a new connection already, whose arrival the loop has not read yet: read first.
        if let descriptor = message.sourceDescriptor, let identity = frames.first,
           !connections.request(from: identity, on: descriptor, at: .now) {
            readConnectionEvents()
            guard connections.request(from: identity, on: descriptor, at: .now) else { return }
        }
        // [identity, (empty delimiter from REQ-style clients), JSON, binary…]
        guard frames.count >= 2 || (message.isOversized && !frames.isEmpty) else { return }
        let delimited = frames.count >= 3 && frames[1].isEmpty
        let payloadIndex = delimited ? 2 : 1
        let peer = ReplyCache.Peer(identity: frames[0], delimited: delimited, principal: message.userID ?? "")
        func refuse(_ id: String?, _ error: ServiceError) throws {
            try send([WireCodec.encodeError(id: id, error: error, using: encoder)], to: peer, on: socket)
        }
        if message.isOversized {
            try refuse(nil, ServiceError(.messageTooLarge,
                "the request is over what \(configuration.serviceName) reads: at most \(configuration.maxFrames) frames and \(configuration.maxMessageBytes) bytes in all; it was dropped unread"))
            return
        }

        let header: RequestHeader
        do {
            header = try WireCodec.decodeRequestHeader(frames[payloadIndex], using: decoder)
        } catch {
            try refuse(error.id, error.error)
            return
        }
        if stopping {
            try refuse(header.id, ServiceError(.shuttingDown, "\(configuration.serviceName) is shutting down; retry once it is back"))
            return
        }
        guard let route = routes.table[header.op] else {
            try refuse(header.id, ServiceError(.unknownOp,
                "unknown operation \"\(header.op.prefix(64))\"; \(configuration.serviceName) answers: \(routes.operations.joined(separator: ", "))"))
            return
        }
        if route.role == .peer, let security = configuration.security, !security.isPeer(message.userID) {
            try refuse(header.id, ServiceError(.forbidden,
                "\(header.op) is for replication peers only; this client's key is not one of \(configuration.serviceName)'s peer keys (list the worker's public key with --peer-keys)"))
            return
        }
        if running >= configuration.maxRequestsInFlight {
            try refuse(header.id, ServiceError(.busy,
                "\(configuration.serviceName) is working on \(running) requests, the most it takes at once (its --max-requests); retry in a moment"))
            return
        }
        // Its replies held, not yet taken, count: a client on a slow link has them out still.
        if runningByClient[peer.identity, default: 0] + backlog.count(for: peer.identity) >= Self.requestsPerClient {
            try refuse(header.id, ServiceError(.busy,
                "this client has \(Self.requestsPerClient) requests being handled by \(configuration.serviceName), the most one client may have at once; send more as their replies come"))
            return
        }
        // What a client can make the service hold is bounded by bytes too, not only by count: 64 requests of 24 MiB
        // each (photos that are then refused, say) would be 1.5 GB.
        let requestBytes = frames[payloadIndex...].reduce(0) { $0 + $1.count }
        if running > 0 && runningBytes + requestBytes > configuration.maxBytesInFlight {
            try refuse(header.id, ServiceError(.busy,
                "\(configuration.serviceName) holds \(running) requests of \(runningBytes) bytes in all, and this one of \(requestBytes) bytes would take it past the \(configuration.maxBytesInFlight) bytes it holds at once (its --max-bytes-in-flight); retry in a moment"))
            return
        }
        if route.runsOnce {
            let digest = RequestDigest.of(frames[payloadIndex...])
            switch cache.begin(id: header.id, op: header.op, digest: digest, peer: peer, now: .now) {
            case .new:
                break
            case .running:
                return
            case .crowded:
                try refuse(header.id, ServiceError(.busy,
                    "request \(header.id) is being handled already, with \(ReplyCache.waitersPerRequest) clients waiting for its reply; retry in a moment"))
                return
            case .answered(let reply):
                try send(reply, to: peer, on: socket)
                return
            case .reused(let previousOp, let sameOp):
                let what = sameOp ? "another \(previousOp) request with a different body" : previousOp
                try refuse(header.id, ServiceError(.requestIDReused,
                    "request id \(header.id) was already used for \(what); a retry must resend the same request, and every new request needs a new id"))
                return
            }
        }

        running += 1
        runningBytes += requestBytes
        runningByClient[peer.identity, default: 0] += 1
        let context = RequestContext(
            requestID: header.id, op: header.op,
            frames: Array(frames[(payloadIndex + 1)...]), logger: logger)
        let payload = frames[payloadIndex]
        let mailbox = self.mailbox
        let runsOnce = route.runsOnce
        let placement = placement(of: route, requestBytes: requestBytes)
        Task(executorPreference: placement.executor) {
            let answer = if let slots = placement.slots {
                await slots.withSlot { await route.run(payload, context) }
            } else {
                await route.run(payload, context)
            }
            mailbox.post(.init(peer: peer, requestID: context.requestID, runsOnce: runsOnce, requestBytes: requestBytes, frames: answer.frames,
                               remember: answer.remember))
        }
    }

    /// Where a request's handler runs, and what it waits for first.
    private struct Placement {
        let executor: any TaskExecutor
        /// Replies of megabytes wait for one of a few slots.
        let slots: Slots?
    }

    /// Decoding a large body, reading and writing photo files, or encoding a reply of megabytes never holds up
    /// the socket's thread. Large replies are made on threads of their own, not the files thread, so they never
    /// wait behind a backup, and not Swift's shared pool, so nothing else the process runs there holds them up (in a
    /// test run, hundreds of tests; that pool has a thread per core); at most two at once.
    private func placement(of route: Routes.Route, requestBytes: Int) -> Placement {
        let slots = route.repliesInBulk ? bulkReplies : nil
        if route.touchesFiles || requestBytes >= Self.bulkBytes { return Placement(executor: bulkHandlers, slots: slots) }
        if route.repliesInBulk { return Placement(executor: bulkReplyHandlers, slots: slots) }
        return Placement(executor: handlers, slots: nil)
    }

    private func deliver(_ outgoing: ServerMailbox.Outgoing, on socket: Socket) throws {
        running -= 1
        runningBytes -= outgoing.requestBytes
        if let count = runningByClient[outgoing.peer.identity] { runningByClient[outgoing.peer.identity] = count > 1 ? count - 1 : nil }
        // The reply of a request run once goes to every client that sent it meanwhile (a retry from a new connection among them).
        let waiting = outgoing.runsOnce
            ? cache.finish(id: outgoing.requestID, principal: outgoing.peer.principal, reply: outgoing.frames, remember: outgoing.remember, now: .now)
            : []
        for peer in waiting.isEmpty ? [outgoing.peer] : waiting { try send(outgoing.frames, to: peer, on: socket) }
    }

    private func send(_ reply: [Data], to peer: ReplyCache.Peer, on socket: Socket) throws {
        var frames = [peer.identity]
        if peer.delimited { frames.append(Data()) }
        frames.append(contentsOf: reply)
        // A client shut for not reading gets none (ZeroMQ may not have seen its connection close yet).
        guard !connections.isShut(peer.identity) else { return }
        let message = Message(frames)
        // Behind the replies held for the client, if any: a client gets its replies in the order they were made.
        if try backlog.holds(peer.identity) || !offer(message, on: socket) { hold(message, for: peer.identity) }
    }

    /// Lines about clients cut off for not reading: as many clients as a stranger can connect.
    private var unreadClientLog = LogThrottle()

    /// Replies held because their client's queue was full (`replyQueue`), in order per client.
    private var backlog = ReplyBacklog()

    /// Hands `message` to ZeroMQ without waiting: true when it took it, or when its client is gone (its reply has
    /// nowhere to go); false when the client's queue is full.
    private func offer(_ message: Message, on socket: Socket) throws -> Bool {
        do {
            return try socket.send(message, dontWait: true)
        } catch let error as ZMQError where error.errno == EHOSTUNREACH {
            return true
        }
    }

    /// Holds a reply whose client's queue is full, to send once ZeroMQ has sent what it queued; past what may be held
    /// for one client, the client is shut.
    private func hold(_ message: Message, for identity: Data) {
        if !backlog.hold(message, for: identity, at: .now) { shutUnreadClient(identity, dropping: 1) }
    }

    /// Sends what is held, oldest first per client, until a client's queue is full again (each client when its next try
    /// is due). A client whose held replies have not moved, and whose connection has taken no byte, for
    /// `unreadPatience`, its system buffer full, is shut.
    private func sendHeld(on socket: Socket) throws {
        guard !backlog.isEmpty else { return }
        let now = ContinuousClock.now
        for identity in backlog.clients where backlog.isDue(identity, at: now) {
            while let message = backlog.first(for: identity) {
                if try offer(message, on: socket) {
                    backlog.removeFirst(for: identity, at: now)
                    continue
                }
                backlog.missed(identity, at: now)
                let descriptor = connections.descriptor(of: identity)
                backlog.noteAcknowledged(descriptor.flatMap(ConnectionTable.bytesAcknowledged), for: identity, at: now)
                // A connection not known (an IPC endpoint's) is held by the backlog's bounds alone.
                if let descriptor, let stalled = backlog.stalled(identity), now - stalled >= Self.unreadPatience,
                   !ConnectionTable.hasRoomToSend(descriptor) {
                    shutUnreadClient(identity, dropping: 0)
                }
                break
            }
        }
    }

    /// Shuts the connection of a client that does not read its replies, dropping those held for it (and `dropping`
    /// more, not held): they would otherwise wait for it, and so would the memory they take. A client whose
    /// connection is not known (an IPC endpoint's, or one already let go of) loses its replies alone.
    private func shutUnreadClient(_ identity: Data, dropping more: Int) {
        let dropped = backlog.drop(identity) + more
        let shut = connections.descriptor(of: identity).flatMap { descriptor in gate.map { shutConnection(descriptor, port: $0.port) } } ?? false
        guard let leftOut = unreadClientLog.admit() else { return }
        let metadata: Logger.Metadata = ["dropped": "\(dropped)"].merging(LogThrottle.metadata(leftOut: leftOut)) { $1 }
        if shut {
            logger.warning("a client that does not read its replies was disconnected: its replies had stopped leaving; those waiting were dropped, and it may connect again",
                           metadata: metadata)
        } else {
            logger.warning("replies to a client that does not read them were dropped", metadata: metadata)
        }
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
