import Foundation
import Messaging
import RecipeProtocol
import TestScratch
import Testing

@Suite("recipe-storage as a process")
struct StorageProcessTests {
    @Test("starts on an ephemeral port, answers health, and exits cleanly on SIGTERM and SIGINT", arguments: [SIGTERM, SIGINT])
    func startServeStop(signal: Int32) async throws {
        let service = try ServiceProcess("recipe-storage", ["--bind", "tcp://127.0.0.1:*", "--publish", "tcp://127.0.0.1:*", "--data", temporaryDataFolder()])
        let endpoint = try await service.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        var configuration = MessageClient.Configuration(endpoint: endpoint, serviceName: "storage")
        configuration.timeout = .seconds(5)
        let client = try MessageClient(configuration: configuration)
        let health = try await client.call(System.Health.self, Empty())
        #expect(health.service == "recipe-storage")
        #expect(health.version == RecipeVault.version)
        #expect(try await service.stop(signal: signal) == 0, "exit status 0 after a graceful stop; output:\n\(service.printed)")
        #expect(service.printed.contains("stopping"))
    }

    @Test("RECIPES_STORAGE_BIND and RECIPES_DATA set the endpoint and the data folder")
    func bindFromEnvironment() async throws {
        let service = try ServiceProcess("recipe-storage", [], environment: [
            "RECIPES_STORAGE_BIND": "tcp://127.0.0.1:*", "RECIPES_DATA": temporaryDataFolder(),
            "RECIPES_STORAGE_PUBLISH": "tcp://127.0.0.1:*",
        ])
        let endpoint = try await service.waitForOutput(#"endpoint=(tcp://127\.0\.0\.1:\d+) operations="#)
        #expect(endpoint != RecipeVault.defaultStorageEndpoint)
        #expect(service.printed.contains("rv-data-"), "the database opened in the folder RECIPES_DATA names")
        #expect(try await service.stop() == 0)
    }

    @Test("an endpoint it cannot bind is a clear error and a non-zero exit")
    func badEndpoint() async throws {
        let service = try ServiceProcess("recipe-storage", ["--bind", "tcp://no-such-interface-xyz:1", "--publish", "tcp://127.0.0.1:*", "--data", temporaryDataFolder()])
        _ = try await service.waitForOutput("cannot listen on tcp://no-such-interface-xyz:1")
        let status = try await service.waitForExit()
        #expect(status != nil && status != 0)
    }
}

/// A fresh data folder path in the temporary folder (the service creates it; removed when the tests exit).
func temporaryDataFolder() -> String {
    Scratch.path("rv-data")
}
