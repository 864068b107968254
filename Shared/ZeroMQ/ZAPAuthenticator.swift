import CZeroMQ
import Foundation
import Synchronization

/// A ZAP handler (ZeroMQ RFC 27) for one context: every CURVE handshake on a
/// server socket of that context is put to it, and only clients whose public key
/// is on the allow-list get in. Everything else — an unknown key, another
/// mechanism, another domain — is refused with status 400.
///
/// libzmq without a ZAP handler lets every CURVE client in, so a server socket
/// must not bind before its context has an authenticator: create one first and
/// keep it until the socket is closed. The handler answers on its own thread.
public final class ZAPAuthenticator: Sendable {
    /// The endpoint libzmq sends ZAP requests to (fixed by the RFC).
    public static let endpoint = "inproc://zeromq.zap.01"

    /// One handshake the authenticator decided.
    public struct Decision: Sendable {
        /// The client's public key (Z85), when it offered one.
        public var clientKey: String?
        /// The client's address, such as `127.0.0.1`.
        public var address: String
        /// `CURVE`, `NULL` or `PLAIN`.
        public var mechanism: String
        public var allowed: Bool
    }

    private let wakeup: Wakeup
    private let handler: Handler

    /// Binds the handler in `context` and starts answering. Throws when the context
    /// already has a ZAP handler. `decided` hears every decision (on the handler's thread).
    public init(context: Context, domain: String, allowing allowedKeys: Set<String>,
                decided: @escaping @Sendable (Decision) -> Void = { _ in }) throws {
        var allowed: Set<[UInt8]> = []
        for key in allowedKeys {
            guard let bytes = CurveKeyPair.keyBytes(key) else {
                throw ZMQError(errno: EINVAL, operation: "allow-list entry \"\(key)\" is not a 40-character Z85 public key")
            }
            allowed.insert(bytes)
        }
        let socket = try Socket(context, .reply)
        do {
            try socket.bind(Self.endpoint)
        } catch let error as ZMQError where error.errno == EADDRINUSE {
            throw ZMQError(errno: EADDRINUSE, operation: "this context already has a ZAP handler")
        }
        let wakeup = try Wakeup()
        let handler = Handler(socket: socket, domain: domain, allowed: allowed, decided: decided)
        self.wakeup = wakeup
        self.handler = handler
        let thread = Thread { handler.serve(until: wakeup) }
        thread.name = "zap"
        thread.start()
    }

    /// Stops answering; handshakes after this fail. Called on release too.
    public func stop() {
        if handler.markStopped() { wakeup.signal() }
    }

    deinit { stop() }
}

/// The authenticator's thread-side state: the REP socket and the allow-list.
private final class Handler: @unchecked Sendable {
    // The socket is created on the caller's thread and handed over once, before the
    // handler's thread starts (thread start is a full memory barrier); only that thread uses it afterwards.
    private let socket: Socket
    private let domain: String
    private let allowed: Set<[UInt8]>
    private let decided: @Sendable (ZAPAuthenticator.Decision) -> Void
    private let stopped = Mutex(false)

    init(socket: Socket, domain: String, allowed: Set<[UInt8]>, decided: @escaping @Sendable (ZAPAuthenticator.Decision) -> Void) {
        self.socket = socket
        self.domain = domain
        self.allowed = allowed
        self.decided = decided
    }

    /// Asks the thread to finish; `true` the first time.
    func markStopped() -> Bool {
        stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
    }

    func serve(until wakeup: Wakeup) {
        defer { socket.close() }
        let poller = Poller()
        guard let socketItem = try? poller.add(socket) else { return }
        let wakeItem = poller.add(fileDescriptor: wakeup.readDescriptor)
        while !stopped.withLock({ $0 }) {
            guard (try? poller.poll(timeout: nil)) != nil else { return }
            if poller.events(at: wakeItem).contains(.readable) { wakeup.drain() }
            guard poller.events(at: socketItem).contains(.readable) else { continue }
            while let request = try? socket.receive(dontWait: true) {
                _ = try? socket.send(Message(reply(to: request.frames)))
            }
        }
    }

    /// RFC 27: request [version, request id, domain, address, routing id, mechanism, credentials…];
    /// reply [version, request id, status code, status text, user id, metadata].
    private func reply(to frames: [Data]) -> [Data] {
        let version = Data("1.0".utf8)
        let requestID = frames.count > 1 ? frames[1] : Data()
        func answer(_ code: String, _ text: String, user: String = "") -> [Data] {
            [version, requestID, Data(code.utf8), Data(text.utf8), Data(user.utf8), Data()]
        }
        guard frames.count >= 6, frames[0] == version else {
            return answer("500", "malformed ZAP request")
        }
        let text = { (frame: Data) in String(decoding: frame, as: UTF8.self) }
        let mechanism = text(frames[5])
        let clientKey = mechanism == "CURVE" && frames.count == 7 ? [UInt8](frames[6]) : nil
        let allowed = text(frames[2]) == domain && clientKey.map(allowed.contains) == true
        let keyText = clientKey.flatMap(CurveKeyPair.keyText)
        decided(.init(clientKey: keyText, address: text(frames[3]), mechanism: mechanism, allowed: allowed))
        return allowed ? answer("200", "OK", user: keyText ?? "") : answer("400", "client key not allowed")
    }
}
