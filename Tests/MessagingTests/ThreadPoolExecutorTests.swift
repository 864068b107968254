import Foundation
@testable import Messaging
import Synchronization
import TestThreads
import Testing

/// The executor the server makes its replies of megabytes on: up to `width` threads of its own, never Swift's pool.
@Suite("A pool of threads of its own", .onOwnThread)
struct ThreadPoolExecutorTests {
    final class Record: Sendable {
        let running = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let finished = Atomic<Int>(0)
        let names = Mutex<Set<String>>([])
    }

    /// Runs `count` jobs that each block their thread for `hold`, all sent at once, and waits for them (bounded).
    static func run(_ count: Int, width: Int, hold: UInt32 = 50_000, shutdownFirst: Bool = false) async throws -> Record {
        let pool = ThreadPoolExecutor(name: "test replies", width: width)
        if shutdownFirst { pool.shutdown() }
        let record = Record()
        let tasks = (0..<count).map { _ in
            Task(executorPreference: pool) {
                let now = record.running.add(1, ordering: .relaxed).newValue
                record.most.max(now, ordering: .relaxed)
                record.names.withLock { _ = $0.insert(Thread.systemName) }
                usleep(hold) // blocks the thread, as encoding a large reply does
                record.running.subtract(1, ordering: .relaxed)
                record.finished.add(1, ordering: .relaxed)
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while record.finished.load(ordering: .relaxed) < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        for task in tasks { _ = await task.value }
        if !shutdownFirst { pool.shutdown() }
        return record
    }

    @Test("jobs that block their threads run up to the width at once, on threads named for it, never more")
    func width() async throws {
        let record = try await Self.run(8, width: 2)
        #expect(record.finished.load(ordering: .relaxed) == 8)
        #expect(record.most.load(ordering: .relaxed) == 2, "two at once, the width")
        #expect(record.names.withLock { $0 } == ["test replies"])
    }

    @Test("a job that waits gives its thread up: with one thread, a job waiting for a later one still ends")
    func waitingFreesTheThread() async throws {
        let pool = ThreadPoolExecutor(name: "test replies", width: 1)
        defer { pool.shutdown() }
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let record = Record()
        Task(executorPreference: pool) {
            for await value in stream {
                record.finished.store(value, ordering: .relaxed)
                break
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        Task(executorPreference: pool) { continuation.yield(42) }
        let deadline = ContinuousClock.now + .seconds(60)
        while record.finished.load(ordering: .relaxed) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(record.finished.load(ordering: .relaxed) == 42)
    }

    @Test("jobs sent after shutdown still run: a request still running when its server stopped finishes")
    func afterShutdown() async throws {
        let record = try await Self.run(4, width: 2, shutdownFirst: true)
        #expect(record.finished.load(ordering: .relaxed) == 4)
    }
}
