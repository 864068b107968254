import Foundation
import Logging
import Messaging
import RecipeProtocol
import Synchronization
import TestRandom
import TestScratch
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// Runs a `MessageServer` for `routes` on an ephemeral loopback port (or the
/// endpoint given), hands its bound endpoint to `body`, and always stops it.
func withServer<T: Sendable>(
    _ routes: Routes,
    endpoint: String = "tcp://127.0.0.1:*",
    context: Context? = nil,
    configure: (inout MessageServer.Configuration) -> Void = { _ in },
    _ body: (String) async throws -> T
) async throws -> T {
    var configuration = MessageServer.Configuration(endpoint: endpoint, serviceName: "test-service")
    configuration.drainTimeout = .seconds(5)
    configure(&configuration)
    let server = try MessageServer(configuration: configuration, routes: routes, logger: Logger(label: "test"), context: context)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await server.run() }
        do {
            let result = try await body(try await server.boundEndpoint)
            server.stop()
            try await group.waitForAll()
            return result
        } catch {
            server.stop()
            try? await group.waitForAll()
            throw error
        }
    }
}

/// A client with short timeouts, for tests.
func makeClient(_ endpoint: String, timeout: Duration = .seconds(2), attempts: Int = 2, context: Context? = nil) throws -> MessageClient {
    var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "storage")
    configuration.timeout = timeout
    configuration.attempts = attempts
    return try MessageClient(configuration: configuration, context: context)
}

/// A bare socket on a thread of its own, for sending exactly the bytes a test wants.
actor RawPeer {
    private let executor = ThreadExecutor(name: "raw peer")
    private let context: Context
    private let socket: Socket
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(_ endpoint: String, type: SocketType = .dealer) throws {
        context = try Context()
        socket = try Socket(context, type)
        try socket.setReceiveTimeout(.seconds(2))
        try socket.connect(endpoint)
    }

    deinit { executor.shutdown() }

    func send(_ frames: [Data]) throws {
        try socket.send(Message(frames))
    }

    /// The next message, or `nil` after `timeout`.
    func receive(timeout: Duration = .seconds(2)) throws -> Message? {
        try socket.setReceiveTimeout(timeout)
        return try socket.receive()
    }

    /// Sends `[delimiter, json]` and returns what the reply's JSON says.
    func request(_ json: String, extraFrames: [Data] = [], timeout: Duration = .seconds(2)) throws -> RawReply? {
        try send([Data(), Data(json.utf8)] + extraFrames)
        guard let reply = try receive(timeout: timeout), reply.frames.count >= 2 else { return nil }
        return try RawReply(reply.frames[1])
    }

    /// The error code of the reply to `json`.
    func errorCode(_ json: String) throws -> String? {
        try request(json)?.errorCode
    }

    func close() { socket.close() }
}

/// A write the tests count: `test.increment` adds one to a shared counter.
enum Increment: WireOperation {
    static let name = "test.increment"
    static let isWrite = true
    struct Request: Codable, Sendable {
        var delayMilliseconds = 0
        init(delayMilliseconds: Int = 0) { self.delayMilliseconds = delayMilliseconds }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            delayMilliseconds = try container.decodeIfPresent(Int.self, forKey: .delayMilliseconds) ?? 0
        }
    }
    struct Response: Codable, Sendable, Equatable { var value: Int }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() -> Int { value.withLock { $0 += 1; return $0 } }
    var current: Int { value.withLock { $0 } }
}

/// Routes with the system operations and `test.increment` on `counter`.
func testRoutes(counter: Counter = Counter()) -> Routes {
    var routes = Routes()
    routes.addSystemOperations(service: "test-service")
    routes.handle(Increment.self) { request, _ in
        let value = counter.increment()
        if request.delayMilliseconds > 0 { try await Task.sleep(for: .milliseconds(request.delayMilliseconds)) }
        return Increment.Response(value: value)
    }
    return routes
}

/// A port on 127.0.0.1 that is held but not listening: connections are refused,
/// as when the service is not running, and no other test can take the port.
final class ClosedPort {
    let endpoint: String
    private let descriptor: Int32

    init() throws {
        guard let (descriptor, port) = Scratch.loopbackSocket() else { throw ZMQError(errno: errno, operation: "reserve a port") }
        self.descriptor = descriptor
        endpoint = "tcp://127.0.0.1:\(port)"
    }

    deinit { close(descriptor) }
}

/// `count` random-looking bytes (SplitMix64, a fresh seed each call): fast enough
/// that making megabytes does not tie up the threads the other tests need.
func randomBytes(_ count: Int) -> Data {
    var random = SplitMix(seed: .random(in: .min ... .max))
    return Data(random.bytes(count))
}

/// The parts of a reply's JSON the tests look at.
struct RawReply: Sendable {
    var ok: Bool?
    /// `.some(nil)` when the reply has `"id": null`.
    var id: String??
    var errorCode: String?
    var errorMessage: String?
    /// `body.value`, for `test.increment`.
    var value: Int?

    init(_ json: Data) throws {
        let object = try JSONSerialization.jsonObject(with: json) as? [String: Any] ?? [:]
        ok = object["ok"] as? Bool
        if let rawID = object["id"] { self.id = .some(rawID as? String) }
        let error = object["error"] as? [String: Any]
        errorCode = error?["code"] as? String
        errorMessage = error?["message"] as? String
        value = (object["body"] as? [String: Any])?["value"] as? Int
    }
}
