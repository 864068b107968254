import Foundation
import Messaging
import RecipeModel
import RecipeProtocol
import Testing

@Suite("Server loop and client: limits, retries, idempotency, shutdown")
struct LimitsAndFailureTests {
    @Test("a frame over the cap disconnects that peer while another client is served")
    func frameOverCap() async throws {
        try await withServer(testRoutes(), configure: { $0.maxFrameBytes = 1_024 * 1_024 }) { endpoint in
            let offender = try RawPeer(endpoint)
            let request = #"{"v":1,"id":"big","op":"system.echo","body":{"text":"x","frames":[{"frame":1}]}}"#
            try await offender.send([Data(), Data(request.utf8), randomBytes(2 * 1_024 * 1_024)])
            let other = try makeClient(endpoint)
            let reply = try await other.send(System.Echo.self, System.Echo.Request(text: "fine", frames: [FrameReference(frame: 1)]),
                                             frames: [randomBytes(512 * 1_024)])
            #expect(reply.body.text == "fine")
            #expect(reply.frames.first?.count == 512 * 1_024)
            #expect(try await offender.receive(timeout: .milliseconds(500)) == nil, "the oversized request got no reply")
            // The server itself is fine: the offender, reconnected, is served again with a small request.
            let again = try await offender.request(#"{"v":1,"id":"small","op":"system.health"}"#)
            #expect(again?.ok == true)
        }
    }

    @Test("the client refuses a frame over the cap before sending it")
    func clientChecksFrameSize() async throws {
        let port = try ClosedPort()
        var configuration = MessageClient.Configuration(endpoint: port.endpoint, serviceName: "storage")
        configuration.maxFrameBytes = 1_000
        let client = try MessageClient(configuration: configuration)
        let error = await #expect(throws: MessageClientError.self) {
            _ = try await client.send(System.Echo.self, System.Echo.Request(text: ""), frames: [Data(count: 1_001)])
        }
        #expect(error == .frameTooLarge(frame: 1, bytes: 1_001, limit: 1_000))
        #expect(error?.description == "frame 1 is 1001 bytes; the most one frame may carry is 1000 bytes")
    }

    @Test("a request holding nan or an infinity is refused before sending, naming the field; not taken for a file error")
    func clientRefusesWhatJSONCannotCarry() async throws {
        let port = try ClosedPort()
        let client = try MessageClient(configuration: MessageClient.Configuration(endpoint: port.endpoint, serviceName: "storage"))
        let cooked = await #expect(throws: MessageClientError.self) {
            _ = try await client.call(CookLogOps.Add.self, .init(recipeID: UUID(), servings: .nan))
        }
        #expect(cooked == .unencodable(op: "cooklog.add", reason: "servings is nan, not a number JSON can carry"))
        #expect(cooked?.description == "cooklog.add was not sent: servings is nan, not a number JSON can carry")
        let created = await #expect(throws: MessageClientError.self) {
            _ = try await client.call(RecipeOps.Create.self, .init(recipe: RecipeDraft(name: "Jam", servings: -.infinity)))
        }
        #expect(created == .unencodable(op: "recipe.create", reason: "recipe.servings is -inf, not a number JSON can carry"))
        // Foundation's words for what JSON cannot carry share a domain with its file errors; the CLI tells them apart.
        let encoding: any Error = EncodingError.invalidValue(Double.nan, .init(codingPath: [], debugDescription: "nan"))
        #expect(!FileErrorText.isFileError(encoding))
        #expect(FileErrorText.isFileError(CocoaError(.fileWriteOutOfSpace)) && FileErrorText.isFileError(POSIXError(.ENOSPC)))
    }

    @Test("with nothing listening, a request fails as not reachable after about timeout × tries")
    func notReachable() async throws {
        let port = try ClosedPort()
        let endpoint = port.endpoint
        var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "storage")
        configuration.timeout = .milliseconds(250)
        configuration.attempts = 3
        configuration.hint = "set RECIPES_STORAGE"
        let client = try MessageClient(configuration: configuration)
        let start = ContinuousClock.now
        let error = await #expect(throws: MessageClientError.self) {
            _ = try await client.call(System.Health.self, Empty())
        }
        let elapsed = ContinuousClock.now - start
        #expect(error?.description == "storage not reachable at \(endpoint): no reply after 3 tries of 250 ms each (set RECIPES_STORAGE)")
        #expect(elapsed >= .milliseconds(700), "it tried three times")
        // Only a hang goes past it: the suite runs in parallel on two cores, and a loaded run once took 20.06 s for
        // these 750 ms (the tries themselves are counted by the message above).
        #expect(elapsed < .seconds(90), "it did not hang")
        withExtendedLifetime(port) {}
    }

    @Test("a write retried after its reply was lost takes effect once (the retry arrives while it runs)")
    func retryWhileRunning() async throws {
        let counter = Counter()
        try await withServer(testRoutes(counter: counter)) { endpoint in
            // The first try times out while the write is still running; the client
            // reopens its socket and resends the same id; the one reply reaches the new socket.
            // 300 ms per try against a 500 ms write: at least one retry is certain.
            let client = try makeClient(endpoint, timeout: .milliseconds(300), attempts: 10)
            let reply = try await client.call(Increment.self, Increment.Request(delayMilliseconds: 500))
            #expect(reply.value == 1)
        }
        #expect(counter.current == 1)
    }

    @Test("a step that is no person's write but says what it did (runsOnce: a sync's apply) runs once when retried while it runs, and the retry gets that run's reply")
    func runsOnceRetryWhileRunning() async throws {
        enum Step: WireOperation {
            static let name = "test.step"
            static let isWrite = false
            static let runsOnce = true
            typealias Request = Increment.Request
            typealias Response = Increment.Response
        }
        let counter = Counter()
        var routes = testRoutes()
        // Each run says how many runs there have been: a second run would answer 2, as a retried apply answered
        // "nothing changed" (or the full disk its first run filled) for changes its first run kept.
        routes.handle(Step.self) { request, _ in
            try await Task.sleep(for: .milliseconds(request.delayMilliseconds))
            return Step.Response(value: counter.increment())
        }
        try await withServer(routes) { endpoint in
            let client = try makeClient(endpoint, timeout: .milliseconds(300), attempts: 10)
            #expect(try await client.call(Step.self, .init(delayMilliseconds: 500)).value == 1)
            // Sent again under its id once answered: the same reply, not a second run.
            #expect(try await client.call(Step.self, .init(), requestID: "step-1").value == 2)
            #expect(try await client.call(Step.self, .init(), requestID: "step-1").value == 2)
        }
        #expect(counter.current == 2)
    }

    @Test("a write repeated after it was answered gets the same reply and runs once")
    func retryAfterAnswer() async throws {
        let counter = Counter()
        try await withServer(testRoutes(counter: counter)) { endpoint in
            let peer = try RawPeer(endpoint)
            let request = #"{"v":1,"id":"write-1","op":"test.increment","body":{}}"#
            let first = try #require(try await peer.request(request))
            let second = try #require(try await peer.request(request))
            #expect(first.value == 1)
            #expect(second.value == 1, "the repeat got the remembered reply")
            // A new id is a new write.
            let third = try #require(try await peer.request(#"{"v":1,"id":"write-2","op":"test.increment","body":{}}"#))
            #expect(third.value == 2)
            let fourth = try await makeClient(endpoint).call(Increment.self, Increment.Request())
            #expect(fourth.value == 3)
        }
        #expect(counter.current == 3)
    }

    @Test("a read whose reply would be over 16 MiB of JSON is answered with message_too_large, saying its size; the service keeps answering")
    func oversizedReadReply() async throws {
        var routes = testRoutes()
        enum Everything: WireOperation {
            static let name = "test.everything"
            static let isWrite = false
            struct Request: Codable, Sendable { var bytes: Int }
            struct Response: Codable, Sendable { var text: String }
        }
        routes.handle(Everything.self) { request, _ in Everything.Response(text: String(repeating: "x", count: request.bytes)) }
        try await withServer(routes) { endpoint in
            let client = try makeClient(endpoint, timeout: .seconds(30), attempts: 1)
            let error = await #expect(throws: ServiceError.self) {
                _ = try await client.call(Everything.self, .init(bytes: 17 * 1_048_576))
            }
            #expect(error?.code == .messageTooLarge)
            #expect(error?.message == "the reply to test.everything would be 17.0 MiB of JSON, over the 16 MiB one reply may carry; ask for less at a time (a smaller limit, or a narrower question)")
            // Just under the limit still goes.
            let fits = try await client.call(Everything.self, .init(bytes: 16 * 1_048_576 - 1_024))
            #expect(fits.text.utf8.count == 16 * 1_048_576 - 1_024)
            _ = try await client.call(Increment.self, Increment.Request())
        }
    }

    @Test("a read of one record goes past 16 MiB up to the 64 MiB a client takes (a recipe answers with more than was written)")
    func oneRecordReply() async throws {
        var routes = testRoutes()
        enum Record: WireOperation {
            static let name = "test.record"
            static let isWrite = false
            static let repliesWithOneRecord = true
            struct Request: Codable, Sendable { var bytes: Int }
            struct Response: Codable, Sendable { var text: String }
        }
        routes.handle(Record.self) { request, _ in Record.Response(text: String(repeating: "y", count: request.bytes)) }
        try await withServer(routes) { endpoint in
            let client = try makeClient(endpoint, timeout: .seconds(60), attempts: 1)
            let large = try await client.call(Record.self, .init(bytes: 27 * 1_048_576))
            #expect(large.text.utf8.count == 27 * 1_048_576)
            let error = await #expect(throws: ServiceError.self) {
                _ = try await client.call(Record.self, .init(bytes: 65 * 1_048_576))
            }
            #expect(error?.code == .messageTooLarge)
            #expect(error?.message.hasPrefix("the reply to test.record would be 65.0 MiB of JSON, over the 64 MiB a client takes") == true)
            _ = try await client.call(Increment.self, Increment.Request())
        }
    }

    @Test("an id reused for another write operation is refused")
    func reusedID() async throws {
        var routes = testRoutes()
        enum Other: WireOperation {
            static let name = "test.other"
            static let isWrite = true
            typealias Request = Empty
            typealias Response = Empty
        }
        routes.handle(Other.self) { _, _ in Empty() }
        try await withServer(routes) { endpoint in
            let client = try makeClient(endpoint)
            _ = try await client.call(Increment.self, Increment.Request(), requestID: "same")
            let error = await #expect(throws: ServiceError.self) {
                _ = try await client.call(Other.self, Empty(), requestID: "same")
            }
            #expect(error?.code == .requestIDReused)
            #expect(error?.message.contains("already used for test.increment") == true)
        }
    }

    @Test("stopping lets a running request finish and answers new ones with shutting_down")
    func drainOnStop() async throws {
        // The running request is held until the late one has its answer: no timing decides the outcome
        // (a loaded CI run once took 34 s for the fixed three-second version of this test, and the drain ended first).
        let gate = Gate()
        var routes = testRoutes()
        routes.handle(Hold.self) { _, _ in
            gate.enter()
            try await gate.waitUntilOpen()
            return Empty()
        }
        var configuration = MessageServer.Configuration(endpoint: "tcp://127.0.0.1:*", serviceName: "test-service")
        configuration.drainTimeout = .seconds(30)
        let server = try MessageServer(configuration: configuration, routes: routes, logger: .init(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let endpoint = try await server.boundEndpoint
            let slow = try makeClient(endpoint, timeout: .seconds(30), attempts: 1)
            async let running: Empty = slow.call(Hold.self, Empty())
            try await gate.waitUntilEntered()
            server.stop()
            let peer = try RawPeer(endpoint)
            let late = try await peer.request(#"{"v":1,"id":"late","op":"system.health"}"#, timeout: .seconds(20))
            #expect(late?.errorCode == "shutting_down")
            gate.open()
            _ = try await running // the running request was answered
            try await group.waitForAll()
        }
    }

    @Test("a request that holds the I/O thread does not keep a stopping server from ending")
    func stuckRequestThread() async throws {
        // The handler blocks its thread (as a request stuck in a synchronous wait would) instead of awaiting.
        let gate = Gate()
        let release = DispatchSemaphore(value: 0)
        var routes = testRoutes()
        routes.handle(Hold.self) { _, _ in
            gate.enter()
            _ = release.wait(timeout: .now() + 600) // bounded: the test lets it go at the end
            return Empty()
        }
        var configuration = MessageServer.Configuration(endpoint: "tcp://127.0.0.1:*", serviceName: "test-service")
        configuration.drainTimeout = .milliseconds(200)
        configuration.stuckGrace = .milliseconds(300)
        let server = try MessageServer(configuration: configuration, routes: routes, logger: .init(label: "test"))
        defer { release.signal() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let endpoint = try await server.boundEndpoint
            let peer = try RawPeer(endpoint)
            try await peer.send([Data(), Data(#"{"v":1,"id":"held","op":"test.hold"}"#.utf8)])
            try await gate.waitUntilEntered()
            let started = ContinuousClock.now
            server.stop()
            let error = await #expect(throws: ServerStuckError.self) { try await group.next() }
            let waited = ContinuousClock.now - started
            // Had the server waited for its request thread, run() would have ended with the handler, ten minutes on;
            // the bound is far below that and far above what the test's own task can wait for a thread of the shared
            // pool in a busy run (a CI run once took over 20 s to get there).
            #expect(waited >= .milliseconds(500) && waited < .seconds(180), "run() ended \(waited) after the stop")
            #expect(error?.description == "test-service stopped without its request thread: a request still held it 500 ms after the stop began (a request that blocks instead of waiting); nothing acknowledged is lost",
                    "\(String(describing: error))")
        }
    }

    @Test("a bind failure is reported, not hidden")
    func bindFailure() async throws {
        try await withServer(testRoutes()) { endpoint in
            let second = try MessageServer(
                configuration: .init(endpoint: endpoint, serviceName: "second"), routes: testRoutes(), logger: .init(label: "test"))
            await #expect(throws: ServerStartError.self) { try await second.run() }
            let error = await #expect(throws: ServerStartError.self) { _ = try await second.boundEndpoint }
            #expect(error?.description.contains("cannot listen on \(endpoint)") == true)
            #expect(error?.description.contains("Address already in use") == true)
        }
    }
}
