import CZeroMQ
import Foundation

/// A ZeroMQ socket.
///
/// A socket belongs to one thread at a time, so this type is deliberately not
/// `Sendable`. It is created with `LINGER 0` (closing never waits for unsent
/// messages) and closes itself when released; call `close()` to close it early.
public final class Socket {
    /// The socket pattern.
    public let type: SocketType
    let context: Context
    private var handle: UnsafeMutableRawPointer?
    /// Whether `monitor(_:)` reports this socket's events: closing it stops them first.
    var isMonitored = false
    /// How many times `monitor(_:)` has been called on this socket: each call replaces the monitor before it.
    var monitorGeneration = 0
    /// On a socket `monitor(_:)` returned: the socket whose events arrive here, and which of its monitors this is.
    /// That monitor (not one that replaced it) is stopped before this socket closes (see `close()`).
    var monitoredSocket: (socket: Socket, generation: Int)?

    /// Opens a socket of `type` in `context`, with `LINGER 0`.
    public init(_ context: Context, _ type: SocketType) throws {
        guard let handle = zmq_socket(context.handle, type.rawValue) else {
            throw ZMQError(errno: zmq_errno(), operation: "zmq_socket(\(type))")
        }
        self.context = context
        self.type = type
        self.handle = handle
        do {
            try setOption(ZMQ_LINGER, Int32(0), "ZMQ_LINGER")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// `true` once `close()` has run.
    public var isClosed: Bool { handle == nil }

    /// Closes the socket; further calls do nothing.
    ///
    /// A monitor is stopped before either of its two sockets closes. libzmq sends most events from its I/O thread, with
    /// a send that waits while nobody can take the event: an event that came after the socket they arrive on closed
    /// (a connection dropping while the socket it belongs to is still being taken down) blocked that thread for good —
    /// and with it every connection of every socket of the context.
    public func close() {
        guard let handle else { return }
        if let (watched, generation) = monitoredSocket, watched.monitorGeneration == generation { watched.stopMonitor() }
        monitoredSocket = nil
        stopMonitor()
        self.handle = nil
        _ = zmq_close(handle)
    }

    /// Stops reporting this socket's events (`zmq_socket_monitor` with no endpoint): once it returns, none is sent.
    func stopMonitor() {
        guard isMonitored, let handle else { return }
        isMonitored = false
        _ = zmq_socket_monitor(handle, nil, 0)
    }

    /// The libzmq handle, or `ENOTSOCK` once the socket is closed.
    func requireHandle(_ operation: @autoclosure () -> String) throws -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError(errno: ENOTSOCK, operation: operation()) }
        return handle
    }

    /// Binds to `endpoint` and returns the endpoint actually bound:
    /// `tcp://127.0.0.1:*` comes back with the port the system chose.
    @discardableResult
    public func bind(_ endpoint: String) throws -> String {
        let handle = try requireHandle("bind(\(endpoint))")
        try zmqCheck("bind(\(endpoint))") { zmq_bind(handle, endpoint) }
        return try lastEndpoint
    }

    /// Connects to `endpoint`; the connection is made in the background.
    public func connect(_ endpoint: String) throws {
        let handle = try requireHandle("connect(\(endpoint))")
        try zmqCheck("connect(\(endpoint))") { zmq_connect(handle, endpoint) }
    }

    /// Stops listening on an endpoint returned by `bind`.
    public func unbind(_ endpoint: String) throws {
        let handle = try requireHandle("unbind(\(endpoint))")
        try zmqCheck("unbind(\(endpoint))") { zmq_unbind(handle, endpoint) }
    }

    /// Drops the connection to `endpoint`.
    public func disconnect(_ endpoint: String) throws {
        let handle = try requireHandle("disconnect(\(endpoint))")
        try zmqCheck("disconnect(\(endpoint))") { zmq_disconnect(handle, endpoint) }
    }

    /// Sends every frame of `message` as one atomic multipart message.
    ///
    /// Returns `false` when nothing could be sent in time (the send timeout ran
    /// out, or `dontWait` was given and the socket could not take it now).
    @discardableResult
    public func send(_ message: Message, dontWait: Bool = false) throws -> Bool {
        let handle = try requireHandle("send")
        guard !message.frames.isEmpty else { throw ZMQError(errno: EINVAL, operation: "send(empty message)") }
        let last = message.frames.count - 1
        for (index, frame) in message.frames.enumerated() {
            var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
            if index < last { flags |= ZMQ_SNDMORE }
            let sent = try frame.withUnsafeBytes { (bytes) throws -> Int32? in
                try zmqCall("send") { zmq_send(handle, bytes.baseAddress, bytes.count, flags) }
            }
            if sent == nil {
                // libzmq accepts the remaining parts of a multipart message once it took the first.
                guard index == 0 else { throw ZMQError(errno: EAGAIN, operation: "send(part \(index))") }
                return false
            }
        }
        return true
    }

    /// How much of one incoming message is read: past either limit, the rest of the
    /// message is read and dropped part by part, so no message can make the process hold more.
    public struct ReceiveLimits: Sendable, Equatable {
        /// The most bytes of all frames together.
        public var maxBytes: Int
        /// The most frames.
        public var maxFrames: Int

        public init(maxBytes: Int, maxFrames: Int) {
            self.maxBytes = maxBytes
            self.maxFrames = maxFrames
        }

        /// No limit beyond the socket's own per-frame `MAXMSGSIZE`.
        public static let none = ReceiveLimits(maxBytes: .max, maxFrames: .max)
    }

    /// Receives one whole multipart message.
    ///
    /// Returns `nil` when nothing arrived in time (the receive timeout ran out, or
    /// `dontWait` was given and nothing is waiting). A message over `limits` comes back
    /// with `isOversized` set and only the frames that fit.
    public func receive(dontWait: Bool = false, limits: ReceiveLimits = .none) throws -> Message? {
        let handle = try requireHandle("receive")
        var part = zmq_msg_t()
        zmq_msg_init(&part)
        defer { zmq_msg_close(&part) }
        var message = Message([])
        var bytes = 0
        var parts = 0
        while true {
            let flags: Int32 = (dontWait || parts > 0) ? ZMQ_DONTWAIT : 0
            guard let size = try zmqCall("receive", { zmq_msg_recv(&part, handle, flags) }) else {
                guard parts == 0 else { throw ZMQError(errno: EAGAIN, operation: "receive(part \(parts))") }
                return nil
            }
            // A ROUTER's identity part carries no metadata: the first part from the peer does.
            if message.userID == nil, parts < 2, let user = zmq_msg_gets(&part, "User-Id") {
                let text = String(cString: user)
                message.userID = text.isEmpty ? nil : text
            }
            if message.sourceDescriptor == nil {
                let descriptor = zmq_msg_get(&part, ZMQ_SRCFD)
                if descriptor >= 0 { message.sourceDescriptor = descriptor }
            }
            parts += 1
            bytes += Int(size)
            if message.isOversized || bytes > limits.maxBytes || parts > limits.maxFrames {
                message.isOversized = true // read and dropped: libzmq frees the part on the next receive
            } else if size == 0 {
                message.frames.append(Data())
            } else {
                message.frames.append(Data(bytes: zmq_msg_data(&part), count: Int(size)))
            }
            if zmq_msg_more(&part) == 0 { return message }
        }
    }
}

@available(*, unavailable, message: "a ZeroMQ socket belongs to one thread")
extension Socket: Sendable {}
