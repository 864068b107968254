import Foundation
import Messaging
import RecipeProtocol
import TestScratch
import Testing
import ZeroMQ

@Suite("Server loop and client: round trips")
struct ServerRoundTripTests {
    @Test("echo with binary frames of 0 B, 1 B and 3 MB over tcp, ipc and inproc", arguments: ["tcp", "ipc", "inproc"])
    func echo(transport: String) async throws {
        let context = try Context()
        let endpoint = switch transport {
        case "tcp": "tcp://127.0.0.1:*"
        case "ipc": Scratch.ipcEndpoint("rv-srv")
        default: "inproc://server-\(UUID().uuidString)"
        }
        let frames = [Data(), randomBytes(1), randomBytes(3 * 1_024 * 1_024)]
        let reply = try await withServer(testRoutes(), endpoint: endpoint, context: context) { bound in
            let client = try makeClient(bound, context: context)
            let references = (1...3).map { FrameReference(frame: $0) }
            return try await client.send(System.Echo.self, System.Echo.Request(text: "héllo 🍅", frames: references), frames: frames)
        }
        #expect(reply.body.text == "héllo 🍅")
        #expect(reply.body.frames == (1...3).map { FrameReference(frame: $0) })
        #expect(reply.frames == frames, "frames come back byte-exact")
    }

    @Test("health names the service, version and protocol")
    func health() async throws {
        let health = try await withServer(testRoutes()) { endpoint in
            try await makeClient(endpoint).call(System.Health.self, Empty())
        }
        #expect(health.service == "test-service")
        #expect(health.version == RecipeVault.version)
        #expect(health.protocolVersion == WireProtocol.version)
        #expect(health.uptimeSeconds >= 0)
    }

    @Test("REQ clients (which add the delimiter) and DEALER clients without one are both answered")
    func reqAndBareDealer() async throws {
        try await withServer(testRoutes()) { endpoint in
            let req = try RawPeer(endpoint, type: .request)
            try await req.send([Data(#"{"v":1,"id":"q1","op":"system.health"}"#.utf8)])
            let reqReply = try #require(try await req.receive())
            #expect(reqReply.frames.count == 1)
            #expect(String(decoding: reqReply.frames[0], as: UTF8.self).contains(#""ok":true"#))

            let dealer = try RawPeer(endpoint)
            try await dealer.send([Data(#"{"v":1,"id":"d1","op":"system.health"}"#.utf8)])
            let dealerReply = try #require(try await dealer.receive())
            #expect(dealerReply.frames.count == 1, "no delimiter comes back when none was sent")
            #expect(String(decoding: dealerReply.frames[0], as: UTF8.self).contains(#""id":"d1""#))
        }
    }

    @Test("handlers run concurrently: a slow request does not hold up a quick one")
    func concurrentHandlers() async throws {
        let gate = Counter()
        var routes = testRoutes()
        enum Wait: WireOperation {
            static let name = "test.wait"
            static let isWrite = false
            typealias Request = Empty
            typealias Response = Empty
        }
        // test.wait returns only once test.health has been answered while it was running.
        routes.handle(Wait.self) { _, _ in
            let deadline = ContinuousClock.now + .seconds(5)
            while gate.current == 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            return Empty()
        }
        try await withServer(routes) { endpoint in
            let slow = try makeClient(endpoint, timeout: .seconds(10), attempts: 1)
            let quick = try makeClient(endpoint)
            async let waited: Empty = slow.call(Wait.self, Empty())
            _ = try await quick.call(System.Health.self, Empty())
            _ = gate.increment()
            _ = try await waited
        }
    }
}
