import Foundation
import Messaging
import RecipeProtocol
import Testing

@Suite("Server loop: malformed input gets an error reply, and the server keeps serving")
struct MalformedInputTests {
    @Test("each malformed request gets its documented code")
    func malformedRequests() async throws {
        let cases: [(json: String, code: String)] = [
            ("this is not json", "malformed_json"),
            ("{\"v\":1,", "malformed_json"),
            ("[1,2,3]", "invalid_envelope"),
            (#"{"v":1,"op":"system.health"}"#, "invalid_envelope"),
            (#"{"v":"one","id":"a","op":"system.health"}"#, "invalid_envelope"),
            (#"{"v":1,"id":7,"op":"system.health"}"#, "invalid_envelope"),
            (#"{"v":9,"id":"a","op":"system.health"}"#, "unsupported_version"),
            (#"{"v":1,"id":"a","op":"recipe.explode"}"#, "unknown_op"),
            (#"{"v":1,"id":"a","op":"system.echo","body":{"text":42,"frames":[]}}"#, "invalid_body"),
            (#"{"v":1,"id":"a","op":"system.echo","body":{"frames":[]}}"#, "invalid_body"),
            (#"{"v":1,"id":"a","op":"system.echo","body":"text"}"#, "invalid_body"),
            (#"{"v":1,"id":"a","op":"system.echo","body":{"text":"x","frames":[{"frame":3}]}}"#, "invalid_body"),
            (#"{"v":1,"id":"a","op":"system.echo","body":{"text":"x","frames":"#
                + String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000) + "}}", "nesting_too_deep"),
        ]
        try await withServer(testRoutes()) { endpoint in
            let peer = try RawPeer(endpoint)
            for item in cases {
                let code = try await peer.errorCode(item.json)
                #expect(code == item.code, "\(item.json.prefix(80))")
            }
            // Binary garbage in frame 0, and an empty payload, are errors too.
            try await peer.send([Data(), Data([0xff, 0x00, 0xfe])])
            let garbage = try #require(try await peer.receive())
            #expect(String(decoding: garbage.frames[1], as: UTF8.self).contains("malformed_json"))

            // Still serving, for this peer and a new client.
            let health = try await makeClient(endpoint).call(System.Health.self, Empty())
            #expect(health.service == "test-service")
            #expect(try await peer.request(#"{"v":1,"id":"ok","op":"system.health"}"#)?.ok == true)
        }
    }

    @Test("error replies say what was wrong and what is allowed")
    func messages() async throws {
        try await withServer(testRoutes()) { endpoint in
            let peer = try RawPeer(endpoint)
            let unknown = try #require(try await peer.request(#"{"v":1,"id":"u","op":"recipe.explode"}"#))
            let message = try #require(unknown.errorMessage)
            #expect(message.contains("recipe.explode") && message.contains("system.health"))
            #expect(unknown.id == .some("u"))

            let notJSON = try #require(try await peer.request("nope"))
            #expect(notJSON.id == .some(nil), "the id is present and null")

            let wrongType = try #require(try await peer.request(#"{"v":1,"id":"w","op":"system.echo","body":{"text":1,"frames":[]}}"#))
            #expect(wrongType.errorMessage == "body.text must be a string, found a number")
        }
    }

    @Test("a handler that fails unexpectedly gives internal_error, and the server keeps serving")
    func handlerFailure() async throws {
        struct DiskOnFire: Error {}
        enum Explode: WireOperation {
            static let name = "test.explode"
            static let isWrite = false
            typealias Request = Empty
            typealias Response = Empty
        }
        var routes = testRoutes()
        routes.handle(Explode.self) { _, _ in throw DiskOnFire() }
        try await withServer(routes) { endpoint in
            let client = try makeClient(endpoint)
            let error = await #expect(throws: ServiceError.self) { _ = try await client.call(Explode.self, Empty()) }
            #expect(error?.code == .internalError)
            #expect(error?.message.contains("test.explode failed") == true)
            #expect(try await client.call(System.Health.self, Empty()).service == "test-service")
        }
    }

    @Test("the client reports a service error as a ServiceError with its code")
    func clientSurfacesErrors() async throws {
        try await withServer(testRoutes()) { endpoint in
            let client = try makeClient(endpoint)
            let error = await #expect(throws: ServiceError.self) {
                _ = try await client.call(System.Echo.self, System.Echo.Request(text: "x", frames: [FrameReference(frame: 1)]))
            }
            #expect(error?.code == .invalidBody)
            #expect(error?.message.contains("no binary frames") == true)
        }
    }
}
