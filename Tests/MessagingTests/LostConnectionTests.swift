import Foundation
@testable import Messaging
import RecipeProtocol
import Synchronization
import TestScratch
import Testing
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// A request given a long wait (a snapshot's install waits up to 15 minutes) to a service that was killed and started
/// again in seconds waited all of it: the reply could never come, and the client did not notice its connection close.
@Suite("A connection that closes while a request is out", .serialized)
struct LostConnectionTests {
    // Each try is given 10 minutes; what is measured is the time from the moment the connection closed (or went
    // silent) to the try's end, and it must be well under that. The suites beside this one can hold the machine's two
    // cores for tens of seconds at the start of a run, so nothing here is timed from the test's own start.
    private static let tryTimeout = Duration.seconds(600)
    private static let bound = Duration.seconds(240)

    @Test("a service killed with the request out and started again: the try ends at once and the request, sent again, is answered")
    func killedAndStartedAgain() async throws {
        let dying = try DyingService(lives: 1)
        let client = try makeClient(dying.endpoint, timeout: Self.tryTimeout, attempts: 2)
        let call = Task { try await client.call(Increment.self, .init()) }
        guard let died = await dying.ended(within: Self.bound) else {
            call.cancel()
            Issue.record("the request never reached the first service")
            return
        }
        let counter = Counter()
        let reply = try await withServer(testRoutes(counter: counter), endpoint: dying.endpoint) { _ in
            try await outcome(of: call, within: Self.bound)
        }
        #expect(reply == Increment.Response(value: 1))
        #expect(ContinuousClock.now - died < Self.bound, "the client waited out its timeout: \(ContinuousClock.now - died)")
        #expect(counter.current == 1)
    }

    @Test("a service that dies with the request out on every try: connection_lost after the tries, long before their timeouts, saying what happened")
    func diesEveryTime() async throws {
        let dying = try DyingService(lives: 2)
        let client = try makeClient(dying.endpoint, timeout: Self.tryTimeout, attempts: 2)
        let call = Task { try await client.call(Increment.self, .init()) }
        let error = await #expect(throws: MessageClientError.self) { _ = try await outcome(of: call, within: Self.bound * 2) }
        #expect(error == .connectionLost(service: "storage", endpoint: dying.endpoint, op: Increment.name, attempts: 2, closed: 2))
        #expect(error?.description == "storage at \(dying.endpoint) closed the connection before it answered test.increment, on each of 2 tries: "
                + "it stopped or restarted while the request was out (or its machine stopped answering), so whether it was done is not known; "
                + "once storage runs again, ask again")
        // Both tries were the same request: a write sent again takes effect once.
        #expect(dying.requestIDs.count == 2 && Set(dying.requestIDs).count == 1, "\(dying.requestIDs)")
    }

    @Test("a service whose host goes silent without closing the connection: the heartbeats notice it, long before the request's timeout")
    func silentHost() async throws {
        try await withServer(testRoutes()) { endpoint in
            let relay = try Relay(to: endpoint)
            defer { relay.stop() }
            var configuration = MessageClient.Configuration(endpoint: relay.endpoint, serviceName: "storage")
            configuration.timeout = Self.tryTimeout
            configuration.attempts = 1
            configuration.heartbeat = (interval: .milliseconds(100), timeout: .seconds(1))
            let client = try MessageClient(configuration: configuration)
            // Through the relay while it passes bytes on: answered.
            let first = try await client.call(Increment.self, .init())
            #expect(first == Increment.Response(value: 1))
            let call = Task { try await client.call(Increment.self, .init(delayMilliseconds: 1_500)) }
            try await Task.sleep(for: .milliseconds(300))
            relay.freeze() // the request is at the service; its reply, and every heartbeat, stays in the relay
            let error = await #expect(throws: MessageClientError.self) { _ = try await outcome(of: call, within: Self.bound) }
            guard case .connectionLost? = error else {
                Issue.record("not connection_lost: \(String(describing: error))")
                return
            }
        }
    }
}

/// A call's outcome, or `OutcomeTimedOut` when it has none within `limit` — a bound on the test's wait that is well
/// under the client's own timeout, so a client that would wait that out fails the test instead of holding it. (A
/// call blocks its client's thread and does not stop when cancelled: the wait is raced, not cancelled.)
private func outcome<Value: Sendable>(of call: Task<Value, any Error>, within limit: Duration) async throws -> Value {
    let resumed = Mutex(false)
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
        let once: @Sendable (Result<Value, any Error>) -> Void = { result in
            guard resumed.withLock({ was in defer { was = true }; return !was }) else { return }
            continuation.resume(with: result)
        }
        Task { once(await call.result) }
        Task {
            try? await Task.sleep(for: limit)
            once(.failure(OutcomeTimedOut(limit: limit)))
        }
    }
}

struct OutcomeTimedOut: Error, CustomStringConvertible {
    let limit: Duration
    var description: String { "the call had no outcome within \(limit): the client waited on a connection that had closed" }
}

/// A service that dies `lives` times on one endpoint: each life binds, takes one request, and closes its socket
/// without answering, as a killed process's connections close.
final class DyingService: Sendable {
    let endpoint: String
    private let taken = Mutex<[String]>([])
    private let over = Mutex<ContinuousClock.Instant?>(nil)

    init(lives: Int) throws {
        let context = try Context()
        let first = try Socket(context, .router)
        let endpoint = try first.bind("tcp://127.0.0.1:*")
        self.endpoint = endpoint
        let held = UncheckedBox(first)
        Thread.detachNewThread { [self] in
            var socket: Socket? = held.value
            for _ in 0..<lives {
                guard let current = socket ?? (try? Self.bindAgain(context, endpoint)) else { break }
                try? current.setReceiveTimeout(.seconds(300))
                guard let message = try? current.receive(), let json = message.frames.last,
                      let header = try? WireCodec.decodeRequestHeader(json, using: WireJSONDecoder()) else { break }
                taken.withLock { $0.append(header.id) }
                current.close()
                socket = nil
            }
            over.withLock { $0 = ContinuousClock.now }
            _ = context
        }
    }

    /// The request ids each life took.
    var requestIDs: [String] { taken.withLock { $0 } }

    /// When the last life ended, if it has within `limit`.
    func ended(within limit: Duration) async -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let instant = over.withLock({ $0 }) { return instant }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// The endpoint bound again once the last life's socket has let it go.
    private static func bindAgain(_ context: Context, _ endpoint: String) throws -> Socket {
        for _ in 0..<100 {
            let socket = try Socket(context, .router)
            if (try? socket.bind(endpoint)) != nil { return socket }
            socket.close()
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw ZMQError(errno: EADDRINUSE, operation: "bind \(endpoint) again")
    }
}

/// Holds a value that is only handed to one other thread, once.
private final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A TCP relay on loopback between one client and `endpoint`, that can freeze: from then on it passes nothing either
/// way and closes nothing, as a network gone quiet or a host without power.
final class Relay: Sendable {
    let endpoint: String
    private let listener: Int32
    private let frozen = Atomic(false)
    private let stopped = Atomic(false)

    init(to target: String) throws {
        guard let port = target.split(separator: ":").last.flatMap({ UInt16($0) }) else { throw RelayError.badEndpoint }
        guard let (listener, listening) = Scratch.loopbackSocket(), listen(listener, 4) == 0 else { throw RelayError.cannotListen }
        self.listener = listener
        endpoint = "tcp://127.0.0.1:\(listening)"
        Thread.detachNewThread { [self] in run(port: port) }
    }

    func freeze() { frozen.store(true, ordering: .sequentiallyConsistent) }

    func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// Takes one client at a time and passes its bytes on (while not frozen) until either side closes or it stops.
    private func run(port: UInt16) {
        defer { close(listener) }
        while !stopped.load(ordering: .sequentiallyConsistent) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: port)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            if connected { pass(between: client, and: server) }
            close(client)
            close(server)
        }
    }

    private func pass(between a: Int32, and b: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1_024)
        while !stopped.load(ordering: .sequentiallyConsistent) {
            if frozen.load(ordering: .sequentiallyConsistent) {
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, 50) >= 0 else { return }
            for (from, to) in [(0, b), (1, a)] where fds[from].revents != 0 {
                let count = read(fds[from].fd, &buffer, buffer.count)
                guard count > 0 else { return }
                var sent = 0
                while sent < count {
                    let written = buffer.withUnsafeBytes { write(to, $0.baseAddress! + sent, count - sent) }
                    guard written > 0 else { return }
                    sent += written
                }
            }
        }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    enum RelayError: Error { case badEndpoint, cannotListen }
}
