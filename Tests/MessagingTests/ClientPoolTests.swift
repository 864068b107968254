import Foundation
import Messaging
import RecipeProtocol
import Testing

private func pool(_ endpoint: String, size: Int) -> MessageClientPool {
    var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "storage")
    configuration.timeout = .seconds(40)
    configuration.attempts = 1
    return MessageClientPool(configuration: configuration, size: size)
}

@Suite("A pool of clients: calls from many tasks side by side")
struct ClientPoolTests {
    @Test("a call is answered while others wait for their replies; the pool opens a client only when all are busy")
    func callsDoNotQueueBehindEachOther() async throws {
        let gate = Gate()
        try await withServer(gate.holdingRoutes()) { endpoint in
            let clients = pool(endpoint, size: 3)
            _ = try await clients.call(System.Health.self, Empty())
            #expect(clients.openedClients == 1, "calls one after another share one client")
            let answeredHolds = Counter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        _ = try await clients.call(Hold.self, Empty())
                        _ = answeredHolds.increment()
                    }
                }
                // Behind one client the second hold would never reach the service while the first is held.
                try await gate.waitUntilEntered(2)
                let health = try await clients.call(System.Health.self, Empty())
                #expect(health.service == "test-service")
                #expect(answeredHolds.current == 0, "answered while both held calls still waited for their replies")
                #expect(clients.openedClients == 3)
                gate.open()
                try await group.waitForAll()
            }
            await clients.close()
        }
    }

    @Test("with every client busy a call waits its turn; a waiting call can be cancelled; close fails the waiting ones")
    func fullPoolWaits() async throws {
        let gate = Gate()
        try await withServer(gate.holdingRoutes()) { endpoint in
            let clients = pool(endpoint, size: 2)
            let held = (0..<2).map { _ in Task { try await clients.call(Hold.self, Empty()) } }
            try await gate.waitUntilEntered(2)
            // A third call finds both clients busy: it waits, and gets the first one back.
            let third = Task { try await clients.call(Hold.self, Empty()) }
            let cancelled = Task { try await clients.call(System.Health.self, Empty()) }
            try await Task.sleep(for: .milliseconds(100))
            #expect(gate.entered == 2, "nothing more reached the service while both clients were busy")
            cancelled.cancel()
            await #expect(throws: CancellationError.self) { try await cancelled.value }
            gate.open()
            for call in held { _ = try await call.value }
            _ = try await third.value
            #expect(gate.entered == 3)
            #expect(clients.openedClients == 2, "never more clients than the pool's size")
            // Still usable after a cancelled wait.
            #expect(try await clients.call(System.Health.self, Empty()).service == "test-service")

            await clients.close()
            await #expect(throws: MessageClientError.closed) { _ = try await clients.call(System.Health.self, Empty()) }
        }
    }

    @Test("close fails a call that waits for a client")
    func closeFailsWaiters() async throws {
        let gate = Gate()
        try await withServer(gate.holdingRoutes()) { endpoint in
            let clients = pool(endpoint, size: 1)
            let held = Task { try await clients.call(Hold.self, Empty()) }
            try await gate.waitUntilEntered()
            let waiting = Task { try await clients.call(System.Health.self, Empty()) }
            try await Task.sleep(for: .milliseconds(100))
            // Closing waits for the call in flight to end, but the waiting one fails at once.
            let closing = Task { await clients.close() }
            await #expect(throws: MessageClientError.closed) { try await waiting.value }
            #expect(!gate.isOpen)
            gate.open()
            _ = await held.result
            await closing.value
        }
    }
}
