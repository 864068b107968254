import ArgumentParser
import Foundation
import Logging
import Messaging
import RecipeProtocol

/// `messaging-bench`: round-trip latency and throughput of the RecipeVault server
/// loop and client, side by side with a bare libzmq REQ/REP echo of the same
/// payload, measured in the same run.
@main
struct MessagingBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messaging-bench",
        abstract: "Compare the RecipeVault envelope's round trip with a bare libzmq REQ/REP echo."
    )

    @Option(help: "Body size in bytes (the echo text).")
    var payload = 1_024

    @Option(help: "Timed round trips per side.")
    var roundTrips = 20_000

    @Option(help: "Untimed round trips before timing starts.")
    var warmup = 2_000

    @Option(help: "Endpoint pattern: tcp, ipc.")
    var transport = "tcp"

    func validate() throws {
        guard payload >= 0 && payload <= 4 * 1_024 * 1_024 else { throw ValidationError("--payload must be 0 to 4194304 bytes") }
        guard roundTrips >= 100 else { throw ValidationError("--round-trips must be at least 100") }
        guard ["tcp", "ipc"].contains(transport) else { throw ValidationError("--transport must be tcp or ipc") }
    }

    private func endpoint() -> String {
        transport == "tcp" ? "tcp://127.0.0.1:*"
            : "ipc://" + FileManager.default.temporaryDirectory.appendingPathComponent("rv-bench-\(getpid()).ipc").path
    }

    func run() async throws {
        let text = String(repeating: "a", count: payload)
        let bare = try BareEcho.measure(endpoint: endpoint(), payload: Data(text.utf8), count: roundTrips, warmup: warmup)
        let ours = try await measureEnvelope(text: text)

        let bareStats = Stats(bare)
        let ourStats = Stats(ours)
        print("RecipeVault messaging benchmark: \(payload)-byte body, \(roundTrips) round trips per side over \(transport) loopback, after \(warmup) warm-up")
        print("")
        print(row("", "p50", "p99", "mean", "throughput"))
        print(row("bare libzmq REQ/REP", bareStats.p50.micros, bareStats.p99.micros, bareStats.mean.micros, bareStats.throughput))
        print(row("RecipeVault envelope", ourStats.p50.micros, ourStats.p99.micros, ourStats.mean.micros, ourStats.throughput))
        let p50Ratio = ourStats.p50 / bareStats.p50
        print(row("ratio (ours / bare)", ratio(p50Ratio), ratio(ourStats.p99 / bareStats.p99),
                  ratio(ourStats.mean / bareStats.mean), ratio(ourStats.requestsPerSecond / bareStats.requestsPerSecond)))
        print("")
        let verdict = p50Ratio <= 1.5 ? "met" : "NOT met"
        print("goal: the envelope adds at most 50% to the bare p50 round trip (ratio ≤ 1.50) — \(verdict) at \(ratio(p50Ratio))")
    }

    /// Round trips of `system.echo` through `MessageServer` and `MessageClient`.
    private func measureEnvelope(text: String) async throws -> [Duration] {
        var routes = Routes()
        routes.addSystemOperations(service: "messaging-bench")
        var logger = Logger(label: "messaging-bench")
        logger.logLevel = .warning
        let server = try MessageServer(
            configuration: .init(endpoint: endpoint(), serviceName: "messaging-bench"), routes: routes, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            defer { server.stop() }
            let client = try MessageClient(configuration: .init(endpoint: try await server.boundEndpoint, serviceName: "benchmark server"))
            let request = System.Echo.Request(text: text)
            let clock = ContinuousClock()
            var samples: [Duration] = []
            samples.reserveCapacity(roundTrips)
            for index in 0..<(warmup + roundTrips) {
                let start = clock.now
                let reply = try await client.call(System.Echo.self, request)
                let elapsed = clock.now - start
                guard reply.text.utf8.count == text.utf8.count else { throw BenchmarkError("echo came back changed") }
                if index >= warmup { samples.append(elapsed) }
            }
            server.stop()
            try await group.waitForAll()
            return samples
        }
    }

    private func row(_ label: String, _ columns: String...) -> String {
        label.padding(toLength: 22, withPad: " ", startingAt: 0)
            + columns.map { String(repeating: " ", count: max(0, 14 - $0.count)) + $0 }.joined()
    }

    private func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }
}

/// Percentiles and rates of a set of round-trip times.
struct Stats {
    let p50: Duration
    let p99: Duration
    let mean: Duration
    let requestsPerSecond: Double

    init(_ samples: [Duration]) {
        let sorted = samples.sorted()
        p50 = sorted[sorted.count / 2]
        p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        let total = sorted.reduce(Duration.zero, +)
        mean = total / sorted.count
        requestsPerSecond = Double(sorted.count) / total.seconds
    }

    var throughput: String { String(format: "%.0f req/s", requestsPerSecond) }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var micros: String { String(format: "%.1f µs", seconds * 1e6) }
}
