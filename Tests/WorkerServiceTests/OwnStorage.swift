import Logging
import Messaging
@testable import WorkerService

/// A storage of the test's own: a real server answering `routes` on a loopback port. `body` is given a way to make
/// workers that use it (one job at a time, no automatic syncs); the server is stopped once `body` has returned.
/// `configure` changes the workers' configuration further (what they may fetch, say).
func withOwnStorage<T: Sendable>(_ routes: Routes, configure: (inout WorkerConfiguration) -> Void = { _ in },
                                 _ body: (_ worker: () throws -> WorkerService) async throws -> T) async throws -> T {
    let server = try MessageServer(configuration: .init(endpoint: "tcp://127.0.0.1:*", serviceName: "storage"),
                                   routes: routes, logger: Logger(label: "test"))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await server.run() }
        defer { server.stop() }
        var configuration = WorkerConfiguration()
        configuration.bindEndpoint = "tcp://127.0.0.1:*"
        configuration.storageEndpoint = try await server.boundEndpoint
        configuration.concurrency = 1
        configuration.syncAutomatically = false
        configure(&configuration)
        let result = try await body { try WorkerService(configuration: configuration, logger: Logger(label: "test")) }
        server.stop()
        try await group.waitForAll()
        return result
    }
}
