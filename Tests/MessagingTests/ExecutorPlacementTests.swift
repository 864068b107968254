import Foundation
import Logging
import Messaging
import RecipeProtocol
import Synchronization
import TestThreads
import Testing
import ZeroMQ

/// Small requests run on the server's I/O thread (no hand-off); requests that touch photo files, or carry
/// 64 KB or more, run on a thread of their own, so a slow disk or a large decode never holds up the socket;
/// reads whose reply grows with the collection run, and encode it, on threads of their own ("… replies"), never on Swift's
/// shared pool, which whatever else the process runs (here, the rest of the test run) can keep busy.
@Suite("Where handlers run")
struct ExecutorPlacementTests {
    /// Releases the blocked handler.
    enum Release: WireOperation {
        static let name = "test.release"
        static let isWrite = false
        struct Request: Codable, Sendable { var padding = "" }
        struct Response: Codable, Sendable { var released = true }
    }

    /// Blocks its thread (as a read from a stalled disk would) until `test.release` arrives, for at most two minutes.
    enum BlockFiles: WireOperation {
        static let name = "test.blockFiles"
        static let isWrite = false
        static let touchesFiles = true
        typealias Request = Release.Request
        typealias Response = Release.Response
    }

    /// The same, for an operation that does not say it touches files, reached with a large body.
    enum BlockLarge: WireOperation {
        static let name = "test.blockLarge"
        static let isWrite = false
        typealias Request = Release.Request
        typealias Response = Release.Response
    }

    /// The same, for a read whose reply grows with the collection (its handler and its reply's encoding).
    enum BlockBulk: WireOperation {
        static let name = "test.blockBulk"
        static let isWrite = false
        static let repliesInBulk = true
        typealias Request = Release.Request
        typealias Response = Release.Response
    }

    final class Gate: Sendable {
        let release = DispatchSemaphore(value: 0)
        let started = Mutex(false)

        /// Blocks the calling thread until released; `false` when two minutes passed first. (Long: the release is sent
        /// once the test has seen the block begin, and the test's own task waits its turn on the shared pool.)
        func block() -> Bool {
            started.withLock { $0 = true }
            return release.wait(timeout: .now() + 120) == .success
        }
    }

    @Test("while a file operation, a large request or a reply of megabytes blocks its thread, a small request still gets through",
          arguments: ["files", "large", "bulk"])
    func blockedWorkDoesNotHoldTheSocket(_ kind: String) async throws {
        let gate = Gate()
        var routes = Routes()
        routes.handle(Release.self) { _, _ in
            gate.release.signal()
            return .init()
        }
        routes.handle(BlockFiles.self) { _, _ in .init(released: gate.block()) }
        routes.handle(BlockLarge.self) { _, _ in .init(released: gate.block()) }
        routes.handle(BlockBulk.self) { _, _ in .init(released: gate.block()) }
        try await withServer(routes) { endpoint in
            // What is measured is whether the release is read while the blocked request holds its thread, not how soon
            // the blocked one begins, so its client waits as long as the whole case may take. The release's wait is
            // below the block's two minutes, so a socket held by the blocked request still fails the case.
            let blockedClient = try makeClient(endpoint, timeout: .seconds(300), attempts: 1)
            let releasingClient = try makeClient(endpoint, timeout: .seconds(60), attempts: 1)
            let blocked = Task {
                switch kind {
                case "files": try await blockedClient.call(BlockFiles.self, .init()).released
                case "bulk": try await blockedClient.call(BlockBulk.self, .init()).released
                default: try await blockedClient.call(BlockLarge.self, .init(padding: String(repeating: "x", count: 70_000))).released
                }
            }
            // Only once the blocking handler runs: had the release come first, it would prove nothing.
            let deadline = ContinuousClock.now + .seconds(240)
            while !gate.started.withLock({ $0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(gate.started.withLock { $0 })
            _ = try await releasingClient.call(Release.self, .init())
            // Had the blocked handler held the socket, the release could not have been read until it gave up.
            #expect(try await blocked.value, "the small request was not read while the \(kind) request blocked its thread")
        }
    }

    /// Says which thread answered it.
    enum Where: WireOperation {
        static let name = "test.where"
        static let isWrite = false
        struct Request: Codable, Sendable {}
        struct Response: Codable, Sendable { var thread: String }
    }

    /// The same, for an operation that touches files.
    enum WhereFiles: WireOperation {
        static let name = "test.whereFiles"
        static let isWrite = false
        static let touchesFiles = true
        typealias Request = Where.Request
        typealias Response = Where.Response
    }

    /// The same, for a read whose reply grows with the collection.
    enum WhereBulk: WireOperation {
        static let name = "test.whereBulk"
        static let isWrite = false
        static let repliesInBulk = true
        typealias Request = Where.Request
        typealias Response = Where.Response
    }

    @Test("a small request is answered on the socket's thread, a file request on the files thread, a reply of megabytes on the replies threads, each named so top -H shows it")
    func threadsCarryTheirNames() async throws {
        var routes = Routes()
        routes.handle(Where.self) { _, _ in .init(thread: Thread.systemName) }
        routes.handle(WhereFiles.self) { _, _ in .init(thread: Thread.systemName) }
        routes.handle(WhereBulk.self) { _, _ in .init(thread: Thread.systemName) }
        try await withServer(routes) { endpoint in
            // What is checked is the thread, not the time.
            let client = try makeClient(endpoint, timeout: .seconds(300), attempts: 1)
            // Linux keeps 15 bytes of a thread's name: "zmq test-service" and "test-service files", cut.
            #expect(try await client.call(Where.self, .init()).thread == "zmq test-servic")
            #expect(try await client.call(WhereFiles.self, .init()).thread == "test-service fi")
            let bulk = try await client.call(WhereBulk.self, .init()).thread
            #expect(bulk == "test-service re", "made on the replies threads, not the socket's, the files' or the shared pool's")
        }
    }

    final class HeldThreads: Sendable { let count = Atomic<Int>(0) }

    @Test("a reply of megabytes is made while every thread of Swift's shared pool is held by other work")
    func bulkRepliesNeedNoPoolThread() async throws {
        var routes = Routes()
        routes.handle(WhereBulk.self) { _, _ in .init(thread: Thread.systemName) }
        try await withServer(routes) { endpoint in
            let width = ProcessInfo.processInfo.activeProcessorCount
            let holding = HeldThreads()
            let release = DispatchSemaphore(value: 0)
            // Blocks every pool thread (bounded), as a loaded process's other work can: the request below is sent
            // only once all of them are held, from a thread of its own, and lets them go once it has its answer.
            for _ in 0..<width {
                Task.detached {
                    holding.count.add(1, ordering: .relaxed)
                    _ = release.wait(timeout: .now() + 90)
                }
            }
            let outcome = try await onOwnThread(named: "bulk requester", within: .seconds(200)) { () throws -> (held: Bool, reply: String?) in
                defer { for _ in 0..<width { release.signal() } }
                let deadline = ContinuousClock.now + .seconds(60)
                while holding.count.load(ordering: .relaxed) < width, ContinuousClock.now < deadline { usleep(10_000) }
                let held = holding.count.load(ordering: .relaxed) == width
                let context = try Context()
                let socket = try Socket(context, .dealer)
                defer { socket.close() }
                try socket.setReceiveTimeout(.seconds(20))
                try socket.connect(endpoint)
                try socket.send(Message([Data(), Data(#"{"v":1,"id":"while-held","op":"test.whereBulk","body":{}}"#.utf8)]))
                let reply = try socket.receive()
                return (held, reply.flatMap { $0.frames.count >= 2 ? String(decoding: $0.frames[1], as: UTF8.self) : nil })
            }
            let (held, reply) = try #require(outcome)
            #expect(held, "the pool's \(width) threads were not all held within a minute")
            #expect(reply?.contains("test-service re") == true, "no reply while the pool was held: \(reply ?? "none in 20 s")")
        }
    }
}

@Suite("Replies of megabytes: two made at once")
struct BulkReplyLimitTests {
    /// A read whose reply grows with the collection, held at a gate.
    enum HoldBulk: WireOperation {
        static let name = "test.holdBulk"
        static let isWrite = false
        static let repliesInBulk = true
        typealias Request = Empty
        typealias Response = Empty
    }

    @Test("a third such read waits until one of two is done; small requests are answered meanwhile")
    func atMostTwo() async throws {
        let gate = Gate()
        var routes = gate.holdingRoutes()
        routes.handle(HoldBulk.self) { _, _ in
            gate.enter()
            try await gate.waitUntilOpen()
            return Empty()
        }
        try await withServer(routes) { endpoint in
            let clients = (0..<3).map { _ in Task { try await makeClient(endpoint, timeout: .seconds(40), attempts: 1).call(HoldBulk.self, Empty()) } }
            try await gate.waitUntilEntered(2)
            // Long enough for a third to have entered had it not been held back (its request is already sent).
            try await Task.sleep(for: .milliseconds(300))
            #expect(gate.entered == 2, "only two are being made")
            #expect(try await makeClient(endpoint).call(System.Health.self, Empty()).service == "test-service")
            gate.open()
            for client in clients { _ = try await client.value }
            #expect(gate.entered == 3)
        }
    }
}
