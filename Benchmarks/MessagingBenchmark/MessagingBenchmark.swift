import ArgumentParser
import BenchmarkSupport
import Foundation
import Logging
import Messaging
import RecipeProtocol

/// `messaging-bench`: round-trip latency and throughput of the RecipeVault server
/// loop and client, side by side with a bare libzmq REQ/REP echo of the same
/// payload, measured in the same run.
///
/// What the measurements so far say (2-core VM, 1 KB body, tcp loopback):
/// - "sockets alone" matches the bare echo: the wrapper, DEALER/ROUTER framing
///   and polling cost nothing measurable.
/// - Handlers now run on the server's I/O thread between polls (`LoopExecutor`),
///   and the envelope's `v`/`id`/`op` are read in one pass over the bytes
///   (`EnvelopeScanner`): the server crosses no thread for an echo and makes one
///   Foundation pass each way. Runs moved from 3.3–4.2× to 2.9–3.4× bare.
/// - Timing the parts of one round trip (means, with probes since removed) with
///   Foundation's coder: the client's encode ~18 µs and reply decode ~23 µs; the
///   server's body decode and reply encode ~40 µs. The wire's own coder
///   (`WireJSONEncoder`/`WireJSONDecoder`) took the hot-loop JSON of a round trip
///   from 32 to 14 µs and runs from 2.2–2.9× to 1.9–2.4× bare.
/// - Left: each `zmq_send` ~30 µs of wall time (libzmq's I/O thread being woken
///   on a 2-core machine) and more system calls per message than REQ/REP makes
///   (our poll loops ask for events before blocking). Spinning the client before
///   blocking would save ~60 µs, but is a busy-wait a home server should not pay for.
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

    @Flag(help: "Measure only the envelope round trip (for profiling it).")
    var envelopeOnly = false

    @Flag(help: "Measure only the bare libzmq echo (to compare system calls or profiles with --envelope-only).")
    var bareOnly = false

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
        if envelopeOnly {
            let stats = Stats(try await measureEnvelope(text: text, pinned: true))
            print(row("RecipeVault envelope", stats.p50.micros, stats.p99.micros, stats.mean.micros, stats.throughput))
            return
        }
        let bare = try BareEcho.measure(endpoint: endpoint(), payload: Data(text.utf8), count: roundTrips, warmup: warmup)
        if bareOnly {
            let stats = Stats(bare)
            print(row("bare libzmq REQ/REP", stats.p50.micros, stats.p99.micros, stats.mean.micros, stats.throughput))
            return
        }
        let ours = try await measureEnvelope(text: text, pinned: true)
        let oursPooled = try await measureEnvelope(text: text, pinned: false)

        let wrapper = try await WrapperEcho.measure(endpoint: endpoint(), payload: Data(text.utf8), count: roundTrips, warmup: warmup)
        let coding = try measureCoding(text: text)
        let bareStats = Stats(bare)
        let codingStats = Stats(coding)
        let wrapperStats = Stats(wrapper)
        let ourStats = Stats(ours)
        let pooledStats = Stats(oursPooled)
        print("RecipeVault messaging benchmark: \(payload)-byte body, \(roundTrips) round trips per side over \(transport) loopback, after \(warmup) warm-up")
        print("")
        print(row("", "p50", "p99", "mean", "throughput"))
        print(row("bare libzmq REQ/REP", bareStats.p50.micros, bareStats.p99.micros, bareStats.mean.micros, bareStats.throughput))
        print(row("RecipeVault envelope", ourStats.p50.micros, ourStats.p99.micros, ourStats.mean.micros, ourStats.throughput))
        print(row("  caller on the pool", pooledStats.p50.micros, pooledStats.p99.micros, pooledStats.mean.micros, pooledStats.throughput))
        print(row("  sockets alone", wrapperStats.p50.micros, wrapperStats.p99.micros, wrapperStats.mean.micros, wrapperStats.throughput))
        print(row("  JSON coding alone", codingStats.p50.micros, codingStats.p99.micros, codingStats.mean.micros, "-"))
        let p50Ratio = ourStats.p50 / bareStats.p50
        print(row("ratio (ours / bare)", ratio(p50Ratio), ratio(ourStats.p99 / bareStats.p99),
                  ratio(ourStats.mean / bareStats.mean), ratio(ourStats.requestsPerSecond / bareStats.requestsPerSecond)))
        print("")
        let verdict = p50Ratio <= 1.5 ? "met" : "NOT met"
        print("goal: the envelope adds at most 50% to the bare p50 round trip (ratio ≤ 1.50) — \(verdict) at \(ratio(p50Ratio))")
    }

    /// The JSON work of one round trip, without any sockets: what the envelope costs in CPU.
    private func measureCoding(text: String) throws -> [Duration] {
        let encoder = WireJSONEncoder()
        let decoder = WireJSONDecoder()
        let request = System.Echo.Request(text: text)
        let clock = ContinuousClock()
        var samples: [Duration] = []
        for index in 0..<(warmup + roundTrips) {
            let start = clock.now
            let frame = try WireCodec.encodeRequest(id: "0d5d8c4e-5b55-4f0e-9d7e-9d7f2b8e2a11", op: System.Echo.name, body: request, using: encoder)
            let header = try WireCodec.decodeRequestHeader(frame, using: decoder)
            let body = try WireCodec.decodeRequestBody(System.Echo.Request.self, from: frame, using: decoder)
            let reply = try WireCodec.encodeReply(id: header.id, body: body, using: encoder)
            _ = try WireCodec.decodeReplyHeader(reply, using: decoder)
            let back = try WireCodec.decodeReplyBody(System.Echo.Response.self, from: reply, using: decoder)
            let elapsed = clock.now - start
            guard back.text.utf8.count == text.utf8.count else { throw BenchmarkError("coding changed the text") }
            if index >= warmup { samples.append(elapsed) }
        }
        return samples
    }

    /// Round trips of `system.echo` through `MessageServer` and `MessageClient`.
    private func measureEnvelope(text: String, pinned: Bool) async throws -> [Duration] {
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
            let (warmup, roundTrips) = (warmup, roundTrips)
            let loop: @Sendable () async throws -> [Duration] = {
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
                return samples
            }
            let samples = pinned ? try await withTaskExecutorPreference(client.thread, operation: loop) : try await loop()
            server.stop()
            try await group.waitForAll()
            return samples
        }
    }

}

