import Foundation
import Messaging
import RecipeProtocol
import Testing
import TestThreads
import ZeroMQ

/// The CURVE security matrix through real TCP sockets: only a client with an allowed
/// key that knows the service's public key is served; every other client gets nothing,
/// and the service keeps serving the allowed one throughout.
@Suite("CURVE security: who is served")
struct SecurityTests {
    let serverKeys: CurveKeyPair
    let allowedKeys: CurveKeyPair

    init() throws {
        serverKeys = try CurveKeyPair.generate()
        allowedKeys = try CurveKeyPair.generate()
    }

    func secured(_ configuration: inout MessageServer.Configuration) {
        configuration.security = CurveServerSecurity(keys: serverKeys, allowedClientKeys: [allowedKeys.publicKey])
    }

    func client(_ endpoint: String, keys: CurveKeyPair?, serverKey: String? = nil) throws -> MessageClient {
        var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "storage")
        configuration.timeout = .milliseconds(700)
        configuration.attempts = 2
        configuration.security = keys.map { CurveClientSecurity(keys: $0, serverKey: serverKey ?? serverKeys.publicKey) }
        return try MessageClient(configuration: configuration)
    }

    @Test("allowed key served; unknown key, no CURVE and wrong server key get nothing; the allowed client keeps being served")
    func matrix() async throws {
        let counter = Counter()
        try await withServer(testRoutes(counter: counter), configure: secured) { endpoint in
            let allowed = try client(endpoint, keys: allowedKeys)
            #expect(try await allowed.call(Increment.self, .init()).value == 1)

            // A key not on the list: the authenticator refuses it, and the client is told so at once.
            let unknown = try client(endpoint, keys: try CurveKeyPair.generate())
            let refusedKey = await #expect(throws: MessageClientError.self) { try await unknown.call(Increment.self, .init()) }
            #expect(refusedKey.map(Self.isRefusal) == true, "unknown key: \(String(describing: refusedKey))")
            #expect(try await allowed.call(Increment.self, .init()).value == 2)

            // No CURVE at all: the handshake fails on the mechanism.
            let plain = try client(endpoint, keys: nil)
            let refusedPlain = await #expect(throws: MessageClientError.self) { try await plain.call(Increment.self, .init()) }
            #expect(refusedPlain.map(Self.isRefusal) == true, "no CURVE: \(String(describing: refusedPlain))")
            #expect(try await allowed.call(Increment.self, .init()).value == 3)

            // An allowed key but the wrong server key: the service cannot read the hello and hangs up.
            let impostor = try CurveKeyPair.generate()
            let misdirected = try client(endpoint, keys: allowedKeys, serverKey: impostor.publicKey)
            let failed = await #expect(throws: MessageClientError.self) { try await misdirected.call(Increment.self, .init()) }
            #expect(failed.map(Self.isRefusal) == true, "wrong server key: \(String(describing: failed))")
            #expect(failed?.description.contains("public key") == true, "the error points at the key: \(String(describing: failed))")

            #expect(try await allowed.call(Increment.self, .init()).value == 4)
        }
        #expect(counter.current == 4, "no request of a refused client reached a handler")
    }

    @Test("a bare CURVE socket with an unknown key sends a request and receives nothing")
    func rawUnknownKeyGetsNothing() async throws {
        let counter = Counter()
        try await withServer(testRoutes(counter: counter), configure: secured) { endpoint in
            let reply = try await onOwnThread { [serverKeys] in
                let context = try Context()
                let socket = try Socket(context, .dealer)
                try socket.apply(CurveClientSecurity(keys: try CurveKeyPair.generate(), serverKey: serverKeys.publicKey))
                try socket.setReceiveTimeout(.milliseconds(800))
                try socket.connect(endpoint)
                let request = #"{"v":1,"id":"raw-1","op":"test.increment","body":{}}"#
                try socket.send(Message([Data(), Data(request.utf8)]))
                return try socket.receive()
            }
            #expect(reply == nil)
        }
        #expect(counter.current == 0)
    }

    @Test("the service's own key pair is allowed (the container health check uses it)")
    func ownKeyAllowed() async throws {
        try await withServer(testRoutes(), configure: secured) { endpoint in
            let health = try await client(endpoint, keys: serverKeys).call(System.Health.self, Empty())
            #expect(health.service == "test-service")
        }
    }

    @Test("a client with keys is refused by a service without CURVE, and told why")
    func keysAgainstPlainService() async throws {
        try await withServer(testRoutes()) { endpoint in
            let keyed = try client(endpoint, keys: allowedKeys)
            let error = await #expect(throws: MessageClientError.self) { try await keyed.call(System.Health.self, Empty()) }
            #expect(error.map(Self.isRefusal) == true && error?.description.contains("CURVE") == true, "\(String(describing: error))")
        }
    }

    @Test("an allow-list entry that is not a key is refused when the service starts")
    func badAllowList() async throws {
        var configuration = MessageServer.Configuration(endpoint: "tcp://127.0.0.1:*", serviceName: "test-service")
        configuration.security = CurveServerSecurity(keys: serverKeys, allowedClientKeys: ["not-a-key"])
        let server = try MessageServer(configuration: configuration, routes: testRoutes(), logger: .init(label: "test"))
        let running = Task { try await server.run() }
        await #expect(throws: ServerStartError.self) { try await server.boundEndpoint }
        server.stop()
        _ = await running.result
    }

    static func isRefusal(_ error: MessageClientError) -> Bool {
        if case .refused = error { return true }
        return false
    }
}
