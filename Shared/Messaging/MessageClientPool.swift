import Foundation
import Logging
import RecipeProtocol
import Synchronization

/// Up to `size` clients of one service, so calls made by many tasks at once are answered
/// side by side instead of one after another behind a single client's wait.
///
/// A call takes an idle client, opens a new one while fewer than `size` exist, or waits
/// (first come, first served) for one to come back. Each client keeps its own socket,
/// thread, timeout and retries (`MessageClient`); nothing is opened before the first call,
/// and a pool that only ever makes one call at a time holds one client.
public final class MessageClientPool: Sendable {
    /// What every client of the pool is made with.
    public let configuration: MessageClient.Configuration
    /// The most clients, and so the most calls in flight, at once.
    public let size: Int
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var idle: [MessageClient] = []
        var all: [MessageClient] = []
        /// Clients being opened (counted against `size` before they exist).
        var opening = 0
        var waiters: [(ticket: UInt64, continuation: CheckedContinuation<Grant, any Error>)] = []
        var nextTicket: UInt64 = 0
        var closed = false
    }

    /// What a call is given: a client that is free, or leave to open one.
    private enum Grant {
        case use(MessageClient)
        case open
    }

    /// A pool of at most `size` clients for `configuration`.
    public init(configuration: MessageClient.Configuration, size: Int, logger: Logger = Logger(label: "recipevault.client")) {
        precondition(size >= 1, "a pool holds at least one client")
        self.configuration = configuration
        self.size = size
        self.logger = logger
    }

    /// Clients opened so far (at most `size`).
    public var openedClients: Int { state.withLock { $0.all.count } }

    /// `MessageClient.send` on a client of the pool.
    public func send<Op: WireOperation>(
        _ op: Op.Type, _ body: Op.Request, frames: [Data] = [], requestID: String = RequestID.make(), timeout: Duration? = nil
    ) async throws -> Reply<Op.Response> {
        let client = try await checkOut()
        defer { checkIn(client) }
        return try await client.send(op, body, frames: frames, requestID: requestID, timeout: timeout)
    }

    /// `MessageClient.call` on a client of the pool.
    public func call<Op: WireOperation>(_ op: Op.Type, _ body: Op.Request, requestID: String = RequestID.make(),
                                        timeout: Duration? = nil) async throws -> Op.Response {
        try await send(op, body, requestID: requestID, timeout: timeout).body
    }

    /// Closes every client; calls waiting for one, and later calls, fail with `MessageClientError.closed`.
    public func close() async {
        let (clients, waiters) = state.withLock { state in
            state.closed = true
            defer { state.waiters = []; state.idle = [] }
            return (state.all, state.waiters)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: MessageClientError.closed) }
        for client in clients { await client.close() }
    }

    private func checkOut() async throws -> MessageClient {
        let ticket = state.withLock { state in
            state.nextTicket += 1
            return state.nextTicket
        }
        // Decided under the lock, inside the continuation: a cancellation that comes first is seen by
        // `Task.isCancelled` (set before the handler runs); one that comes after finds the waiter.
        let grant = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
                let now: Result<Grant, any Error>? = state.withLock { state in
                    if state.closed { return .failure(MessageClientError.closed) }
                    if let client = state.idle.popLast() { return .success(.use(client)) }
                    if state.all.count + state.opening < size {
                        state.opening += 1
                        return .success(.open)
                    }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters.append((ticket, continuation))
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.waiters.firstIndex { $0.ticket == ticket }.map { state.waiters.remove(at: $0).continuation }
            }
            waiter?.resume(throwing: CancellationError())
        }
        if case .use(let client) = grant { return client }
        let client: MessageClient
        do {
            client = try MessageClient(configuration: configuration, logger: logger)
        } catch {
            state.withLock { $0.opening -= 1 }
            throw error
        }
        let closed = state.withLock { state in
            state.opening -= 1
            state.all.append(client)
            return state.closed
        }
        if closed {
            await client.close()
            throw MessageClientError.closed
        }
        return client
    }

    private func checkIn(_ client: MessageClient) {
        let waiter = state.withLock { state -> CheckedContinuation<Grant, any Error>? in
            guard !state.closed else { return nil }
            guard !state.waiters.isEmpty else {
                state.idle.append(client)
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        waiter?.resume(returning: .use(client))
    }
}
