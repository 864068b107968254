import Foundation
import Messaging
import Synchronization

/// Runs `body` on a thread of its own and waits for it without holding a thread.
///
/// Swift Testing runs every test on the cooperative pool, which has one thread per core
/// (two on the CI machine). A test that blocks — a socket's receive, a semaphore, a
/// libvips call, a loop of seconds of synchronous work — holds one of them for as long as it
/// blocks, and every other test's continuations wait behind it: a fetch cut off after 2 s
/// is then seen by its test after 30. Such work goes here instead.
public func onOwnThread<T: Sendable>(
    named name: String = "test work", _ body: @escaping @Sendable () throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = name
        thread.start()
    }
}

/// `onOwnThread` for work that cannot throw.
public func onOwnThread<T: Sendable>(
    named name: String = "test work", _ body: @escaping @Sendable () -> T
) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = name
        thread.start()
    }
}

/// Runs the async `body` with a thread of its own as its task executor: its own code and every
/// nonisolated async function it calls resume there, not on the cooperative pool.
///
/// For tests that measure time. When the pool is busy with the other tests (a test run starts
/// hundreds at once on two threads), a continuation can wait tens of seconds for a thread, and a
/// test reading a body chunk by chunk sees the fetch's own deadline pass before its size limit.
public func onOwnExecutor<T: Sendable>(
    named name: String = "timed test", _ body: () async throws -> T
) async rethrows -> T {
    let executor = ThreadExecutor(name: name)
    defer { executor.shutdown() }
    return try await withTaskExecutorPreference(executor) { try await body() }
}

/// `onOwnThread` with a bound: `nil` when `body` has not finished within `limit` (its thread is left to finish, or to
/// stay blocked, on its own). For work that the failure under test blocks for good rather than slows.
public func onOwnThread<T: Sendable>(
    named name: String = "test work", within limit: Duration, _ body: @escaping @Sendable () throws -> T
) async throws -> T? {
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let thread = Thread { let result = Result { try body() }; outcome.withLock { $0 = result } }
    thread.name = name
    thread.start()
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if let result = outcome.withLock({ $0 }) { return try result.get() }
        try await Task.sleep(for: .milliseconds(20))
    }
    return nil
}
