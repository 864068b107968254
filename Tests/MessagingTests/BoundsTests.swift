import Foundation
import Synchronization
import Messaging
import RecipeProtocol
import Testing
@testable import Messaging

@Suite("Bounds: requests in flight, remembered replies by bytes, requests over the size limits")
struct BoundsTests {
    @Test("beyond the requests in flight a request is answered busy at once; the client retries it and both land")
    func busy() async throws {
        let counter = Counter()
        let gate = Gate()
        let routes = Self.routes(counter: counter, holdingAt: gate)
        try await withServer(routes, configure: { $0.maxRequestsInFlight = 1 }) { endpoint in
            let holder = try RawPeer(endpoint)
            // Its reply comes only after the gate opens, several steps later: a loaded machine may take more than the 30 s
            // this waited before (CI, 2026-12-03, beside a build): as long as the gate waits.
            let held = Task { try await holder.request(#"{"v":1,"id":"hold","op":"test.hold","body":{}}"#, timeout: .seconds(300)) }
            try await gate.waitUntilEntered()
            let other = try RawPeer(endpoint)
            let refused = try await other.request(#"{"v":1,"id":"second","op":"test.increment","body":{}}"#)
            #expect(refused?.errorCode == "busy")
            #expect(refused?.errorMessage?.contains("the most it takes at once (its --max-requests); retry") == true, "\(refused?.errorMessage ?? "no reply")")

            // The reference client waits and asks again; it lands once the slot is free.
            let client = try makeClient(endpoint, timeout: .seconds(5), attempts: 1)
            let call = Task { try await client.call(Increment.self, Increment.Request()) }
            try await Task.sleep(for: .milliseconds(100))
            gate.open()
            #expect(try await call.value.value == 1)
            #expect(try await held.value?.ok == true)
        }
        #expect(counter.current == 1, "the busy request never ran; the retried one ran once")
    }

    @Test("one client's requests at once are bounded on their own: past eight it is answered busy, saying so, while another client is served; all eight held are answered")
    func busyPerClient() async throws {
        let counter = Counter()
        let gate = Gate()
        let routes = Self.routes(counter: counter, holdingAt: gate)
        try await withServer(routes) { endpoint in
            let eager = try RawPeer(endpoint)
            for index in 0..<12 { try await eager.send([Data(), Data(#"{"v":1,"id":"hold-\#(index)","op":"test.hold","body":{}}"#.utf8)]) }
            try await gate.waitUntilEntered(8)
            var refused: [RawReply] = []
            for _ in 0..<4 {
                guard let reply = try await eager.receive(timeout: .seconds(20)), reply.frames.count >= 2 else { break }
                refused.append(try RawReply(reply.frames[1]))
            }
            #expect(refused.count == 4 && refused.allSatisfy { $0.errorCode == "busy" })
            #expect(refused.first?.errorMessage?.contains("this client has 8 requests being handled by test-service, the most one client may have at once") == true,
                    "\(refused.first?.errorMessage ?? "no reply")")
            #expect(gate.entered == 8, "the four refused never ran")
            let other = try RawPeer(endpoint)
            #expect(try await other.request(#"{"v":1,"id":"other","op":"test.increment","body":{}}"#)?.ok == true, "another client is served")
            gate.open()
            var answered = 0
            while answered < 8, let reply = try await eager.receive(timeout: .seconds(20)), reply.frames.count >= 2 {
                #expect(try RawReply(reply.frames[1]).ok == true)
                answered += 1
            }
            #expect(answered == 8)
        }
    }

    @Test("a write its handler answers busy did nothing: the client's retry with the same id runs it, and gets its own answer, not the busy one remembered")
    func busyWriteIsNotRemembered() async throws {
        let attempts = Counter()
        var routes = testRoutes()
        routes.handle(FlakyWrite.self) { _, _ in
            let attempt = attempts.increment()
            // The way a full store answers (every file in use, say): nothing was done; come back in a moment.
            if attempt <= 2 { throw ServiceError(.busy, "every file is in use; retry in a moment") }
            return Increment.Response(value: attempt)
        }
        try await withServer(routes) { endpoint in
            let client = try makeClient(endpoint, timeout: .seconds(5), attempts: 1)
            #expect(try await client.call(FlakyWrite.self, Increment.Request()).value == 3)
        }
        #expect(attempts.current == 3, "two busy answers, then the write ran")
    }

    @Test("a gate in front of the routes answers each request the error it gives, without running the handler, and lets it through once it gives none; the service's own operations stay open; a write it turned away runs when sent again with the same id")
    func gatedRoutes() async throws {
        let closed = Mutex(true)
        let counter = Counter()
        var routes = testRoutes(counter: counter)
        routes.gate(where: { op, _, _ in !op.hasPrefix("system.") }) { op in
            closed.withLock { $0 } ? ServiceError(.shuttingDown, "\(op): the service starts again; retry in a few seconds") : nil
        }
        try await withServer(routes) { endpoint in
            let client = try makeClient(endpoint, timeout: .seconds(5), attempts: 1)
            let peer = try RawPeer(endpoint)
            let request = #"{"v":1,"id":"gated-write","op":"test.increment","body":{}}"#
            let refused = try await peer.request(request)
            #expect(refused?.errorCode == "shutting_down" && refused?.errorMessage == "test.increment: the service starts again; retry in a few seconds",
                    "\(refused?.errorMessage ?? "no reply")")
            #expect(counter.current == 0, "the handler did not run")
            #expect(try await client.call(System.Health.self, Empty()).service == "test-service")
            closed.withLock { $0 = false }
            let again = try await peer.request(request)
            #expect(again?.ok == true, "\(again?.errorMessage ?? "no reply")")
            #expect(try await client.call(Increment.self, .init()).value == 2)
        }
    }

    @Test("clients that send the same write (id and body) while it runs each get its reply, and it runs once; the reply went only to the last of them, and the first waited for good")
    func sameWriteFromSeveralClients() async throws {
        let gate = Gate()
        let runs = Counter()
        var routes = testRoutes()
        routes.handle(HoldWrite.self) { _, _ in
            gate.enter()
            try await gate.waitUntilOpen()
            return Increment.Response(value: runs.increment())
        }
        try await withServer(routes) { endpoint in
            let request = #"{"v":1,"id":"same-write","op":"test.holdWrite","body":{}}"#
            let peers = try (0..<3).map { _ in try RawPeer(endpoint) }
            for (index, peer) in peers.enumerated() {
                try await peer.send([Data(), Data(request.utf8)])
                if index == 0 { try await gate.waitUntilEntered() }
            }
            // Another body under that id is still refused, at once.
            let other = try RawPeer(endpoint)
            let reused = try await other.request(#"{"v":1,"id":"same-write","op":"test.holdWrite","body":{"x":1}}"#)
            #expect(reused?.errorCode == "request_id_reused", "\(reused?.errorMessage ?? "no reply")")
            try await Task.sleep(for: .milliseconds(100))
            gate.open()
            for (index, peer) in peers.enumerated() {
                let reply = try await peer.receive(timeout: .seconds(20))
                #expect(try reply.map { try RawReply($0.frames[1]).ok } == true, "client \(index) got the reply")
            }
        }
        #expect(runs.current == 1 && gate.entered == 1, "the write ran once")
    }

    @Test("requests are held by bytes too: past the bytes in flight a request is answered busy; a small one still runs, and one larger than the bound runs when nothing else does")
    func busyByBytes() async throws {
        let counter = Counter()
        let gate = Gate()
        let routes = Self.routes(counter: counter, holdingAt: gate)
        let kilobytes600 = Data(count: 600 * 1_024)
        try await withServer(routes, configure: { $0.maxBytesInFlight = 1_024 * 1_024 }) { endpoint in
            let holder = try RawPeer(endpoint)
            let held = Task {
                try await holder.request(#"{"v":1,"id":"hold","op":"test.hold","body":{}}"#, extraFrames: [kilobytes600], timeout: .seconds(300))
            }
            try await gate.waitUntilEntered()
            let other = try RawPeer(endpoint)
            let refused = try await other.request(#"{"v":1,"id":"large","op":"test.increment","body":{}}"#, extraFrames: [kilobytes600])
            #expect(refused?.errorCode == "busy")
            #expect(refused?.errorMessage?.contains("1048576 bytes it holds at once (its --max-bytes-in-flight)") == true, "\(refused?.errorMessage ?? "no reply")")
            let small = try await other.request(#"{"v":1,"id":"small","op":"test.increment","body":{}}"#, extraFrames: [Data(count: 1_024)])
            #expect(small?.ok == true, "a request that fits beside the held one runs")
            gate.open()
            #expect(try await held.value?.ok == true)
            // Nothing running: a request of twice the bound is taken (the largest request is bounded on its own).
            let alone = try await other.request(#"{"v":1,"id":"alone","op":"test.increment","body":{}}"#, extraFrames: [Data(count: 2 * 1_024 * 1_024)])
            #expect(alone?.ok == true)
        }
        #expect(counter.current == 2, "the busy request never ran; the small one and the one alone did")
    }

    @Test("remembered replies are bounded by bytes: the oldest are forgotten first, a running write never")
    func replyCacheBytes() {
        var cache = ReplyCache(capacity: 100, maxBytes: 250, lifetime: .seconds(600))
        let peer = ReplyCache.Peer(identity: Data([1]), delimited: true, principal: "key-a")
        let now = ContinuousClock.now
        for index in 0..<5 {
            #expect(cache.begin(id: "w\(index)", op: "op", digest: Data([UInt8(index)]), peer: peer, now: now) == .new)
            _ = cache.finish(id: "w\(index)", principal: "key-a", reply: [Data(count: 100)], now: now)
        }
        #expect(cache.bytes <= 250)
        #expect(cache.begin(id: "w0", op: "op", digest: Data([0]), peer: peer, now: now) == .new, "the oldest was forgotten")
        #expect(cache.begin(id: "w4", op: "op", digest: Data([4]), peer: peer, now: now) == .answered([Data(count: 100)]))
        // Another client's id of the same name is its own; the same id with another body is refused.
        let stranger = ReplyCache.Peer(identity: Data([2]), delimited: true, principal: "key-b")
        #expect(cache.begin(id: "w4", op: "op", digest: Data([4]), peer: stranger, now: now) == .new)
        #expect(cache.begin(id: "w4", op: "op", digest: Data([9]), peer: peer, now: now) == .reused(previousOp: "op", sameOp: true))
    }

    @Test("a request of too many frames or bytes is answered message_too_large, and the server goes on")
    func oversized() async throws {
        try await withServer(testRoutes(), configure: { $0.maxMessageBytes = 4 * 1_024 * 1_024 }) { endpoint in
            let raw = try RawPeer(endpoint)
            let json = #"{"v":1,"id":"big","op":"system.echo","body":{"text":"x","frames":[]}}"#
            let tooMany = try await raw.request(json, extraFrames: Array(repeating: Data([1]), count: 40))
            #expect(tooMany?.errorCode == "message_too_large")
            let tooBig = try await raw.request(json, extraFrames: Array(repeating: Data(count: 1_024 * 1_024), count: 6))
            #expect(tooBig?.errorCode == "message_too_large")
            let fine = try await raw.request(#"{"v":1,"id":"ok","op":"system.health","body":{}}"#)
            #expect(fine?.errorCode == nil)
        }
    }
}

extension BoundsTests {
    /// The test routes and `test.hold`, which runs until `gate` opens.
    static func routes(counter: Counter, holdingAt gate: Gate) -> Routes {
        var routes = testRoutes(counter: counter)
        routes.handle(Hold.self) { _, _ in
            gate.enter()
            try await gate.waitUntilOpen()
            return Empty()
        }
        return routes
    }
}

/// A write whose handler may answer busy.
enum FlakyWrite: WireOperation {
    static let name = "test.flaky"
    static let isWrite = true
    typealias Request = Increment.Request
    typealias Response = Increment.Response
}

/// A write that holds its slot until the test lets it go.
enum HoldWrite: WireOperation {
    static let name = "test.holdWrite"
    static let isWrite = true
    typealias Request = Empty
    typealias Response = Increment.Response
}

/// A read that holds its slot until the test lets it go.
enum Hold: WireOperation {
    static let name = "test.hold"
    static let isWrite = false
    typealias Request = Empty
    typealias Response = Empty
}

/// Lets a test see that handlers are running and decide when they finish (every wait bounded).
final class Gate: Sendable {
    private let state = Mutex((entered: 0, open: false))
    func enter() { state.withLock { $0.entered += 1 } }
    func open() { state.withLock { $0.open = true } }
    var isOpen: Bool { state.withLock { $0.open } }
    /// How many handlers came to the gate.
    var entered: Int { state.withLock { $0.entered } }

    func waitUntilEntered(_ count: Int = 1) async throws {
        for _ in 0..<3_000 where entered < count { try await Task.sleep(for: .milliseconds(10)) }
        #expect(entered >= count, "the held requests reached their handler")
    }

    /// Waits for the test to open the gate, up to five minutes by the clock. Long because on a loaded machine the
    /// test's own task may wait its turn for many seconds between two of its sends, while the handlers, on threads of
    /// their own, count the time: a handler that let go after thirty seconds freed its client's slot before the test
    /// had sent the requests past the bound (CI, 2026-12-03). A handler left waiting by a failed test ends on its own.
    func waitUntilOpen() async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        while !isOpen {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Routes with the system operations and `test.hold` waiting at this gate.
    func holdingRoutes() -> Routes {
        var routes = Routes()
        routes.addSystemOperations(service: "test-service")
        routes.handle(Hold.self) { _, _ in
            self.enter()
            try await self.waitUntilOpen()
            return Empty()
        }
        return routes
    }
}
