@testable import Messaging
import RecipeProtocol
import TestHTTPServer
import Testing

/// `RECIPES_STORAGE` set to the worker's endpoint made every command say "unknown operation "recipe.list";
/// recipe-worker answers: import.batch, …" and `recipes status` report the worker as "recipe-storage: up".
@Suite("An endpoint answered by the other service")
struct WrongServiceTests {
    func refusal(server: String, client: String, setting: String?) async throws -> ServiceError? {
        try await withServer(testRoutes(), configure: { $0.serviceName = server }) { endpoint in
            var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: client)
            configuration.timeout = .seconds(5)
            configuration.setting = setting
            let client = try MessageClient(configuration: configuration)
            let error = await #expect(throws: ServiceError.self) { _ = try await client.call(RecipeOps.List.self, RecipeListQuery()) }
            return error.map { ServiceError($0.code, $0.message.replacingOccurrences(of: endpoint, with: "ENDPOINT")) }
        }
    }

    @Test("is said as the mistake it is, with where to set the endpoint; an operation one service lacks is said as before")
    func saidAsSuch() async throws {
        #expect(try await refusal(server: "recipe-worker", client: "recipe-storage", setting: "RECIPES_STORAGE or --storage")
                == ServiceError(.unknownOp, "ENDPOINT is recipe-worker, not recipe-storage (it does not answer recipe.list); "
                                + "set RECIPES_STORAGE or --storage to recipe-storage's endpoint"))
        #expect(try await refusal(server: "recipe-storage", client: "recipe-worker", setting: nil)?.message
                == "ENDPOINT is recipe-storage, not recipe-worker (it does not answer recipe.list); give recipe-worker's endpoint")
        // The service asked for, without the operation (an older version): its own words.
        let older = try await refusal(server: "recipe-storage", client: "recipe-storage", setting: "RECIPES_STORAGE or --storage")
        #expect(older?.code == .unknownOp && older?.message.hasPrefix("unknown operation \"recipe.list\"; recipe-storage answers: ") == true)
        #expect(MessageClient.answeringService("unknown operation \"a; b answers: c\"; recipe-worker answers: x, y") == "recipe-worker")
        #expect(MessageClient.answeringService("no such thing") == nil)
    }

    /// RECIPES_STORAGE set to a web server's port: a client without keys said only "refused this client: it requires
    /// CURVE security and this client has no keys", and one whose peer never answered "is recipe-storage running?".
    @Test("another program on the port is named as a possibility: one that hangs up, and one that never answers the handshake")
    func anotherProgram() async throws {
        func client(_ port: Int) throws -> MessageClient {
            var configuration = MessageClient.Configuration(endpoint: "tcp://127.0.0.1:\(port)", serviceName: "recipe-storage")
            configuration.timeout = .seconds(1)
            configuration.attempts = 2
            configuration.hint = "is recipe-storage running?"
            configuration.setting = "RECIPES_STORAGE or --storage"
            return try MessageClient(configuration: configuration)
        }
        // A web server that answers what it cannot read with 400 and hangs up.
        let hangsUp = try RawReplyServer(reply: Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8), connections: 10)
        let refused = await #expect(throws: MessageClientError.self) { _ = try await client(hangsUp.port).call(System.Health.self, Empty()) }
        guard case let .refused(_, _, reason, _)? = refused else {
            Issue.record("not refused: \(String(describing: refused))")
            return
        }
        #expect(reason == "it requires CURVE security and this client has no keys, or what answers there is not a RecipeVault service at all "
                + "(another program on that port, such as a web server)")
        // One that waits for a request line the handshake never sends.
        let web = try await TestHTTPServer()
        let silent = await #expect(throws: MessageClientError.self) { _ = try await client(web.port).call(System.Health.self, Empty()) }
        guard case let .unreachable(_, _, _, _, hint)? = silent else {
            Issue.record("not unreachable: \(String(describing: silent))")
            return
        }
        #expect(hint == "something accepts connections there but never answered the ZeroMQ handshake: another program listens on that port, "
                + "or recipe-storage is stopped or hung; check RECIPES_STORAGE or --storage")
        await web.shutdown()
    }
}
