import Testing

/// A suite trait: each of the suite's tests runs with a thread of its own as its task executor
/// (`onOwnExecutor`), not on the cooperative pool.
///
/// For suites of synchronous work — parsers, codecs, images, property loops. Swift Testing runs every
/// test on the cooperative pool, one thread per core (two on the CI machine); a synchronous test holds
/// its thread until it ends, and together these suites take about 27 s of processor time in a debug
/// build. While they held both threads at the start of a run, every other test's continuations
/// waited: a client's 2 s reply timeout and a fetch's 30 s deadline passed with the reply already
/// there. On threads of their own the kernel shares the cores between them and everything else.
///
/// And for suites that wait against the clock on work done elsewhere — a fetch from a local HTTP server,
/// whose deadline NIO keeps on its own threads while the test's continuation waits for the pool.
///
/// Not for tests that start our servers or whose handlers block: their child tasks would inherit the
/// preference and run on this one thread, which is not how the services schedule them.
public struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await onOwnExecutor(named: "test") { try await function() }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test of the suite on a thread of its own (see `OwnThreadTrait`).
    public static var onOwnThread: Self { OwnThreadTrait() }
}
