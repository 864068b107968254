import ArgumentParser
import RecipeProtocol

/// The resource bounds of a service's request socket, the same options for recipe-storage
/// and recipe-worker (docs/PROTOCOL.md, "Transport").
public struct ServerLimitOptions: ParsableArguments, Sendable {
    @Option(name: .long, help: ArgumentHelp("Largest request, all frames together, in bytes; larger ones are answered message_too_large unread.", valueName: "bytes"))
    public var maxMessageBytes: Int = WireProtocol.defaultMaxMessageBytes

    @Option(name: .long, help: ArgumentHelp("Client connections held at once, about (each takes a file and about 22 KB); past it new connections wait until some close (64 to 1048576).", valueName: "count"))
    public var maxConnections: Int = WireProtocol.defaultMaxConnections

    @Option(name: .long, help: ArgumentHelp("Memory the service may hold, in MiB; past it the connections that brought no whole request in the last 5 seconds are shut, with what they had sent of one, and those taking their replies at under 64 KiB a second, with the replies (128 to 1048576).", valueName: "MiB"))
    public var maxMemory: Int = 1_024

    @Option(name: .long, help: ArgumentHelp("Requests handled at once; beyond it a request is answered busy and the client retries (1 to 10000).", valueName: "count"))
    public var maxRequests: Int = WireProtocol.defaultMaxRequestsInFlight

    @Option(name: .long, help: ArgumentHelp("Bytes of the requests handled at once, all together; beyond it a request is answered busy and the client retries (4194304 to 68719476736). One request is always taken when none is being handled.", valueName: "bytes"))
    public var maxBytesInFlight: Int = WireProtocol.defaultMaxBytesInFlight

    @Option(name: .long, help: ArgumentHelp("Bytes of answered writes remembered for retried requests (0 to 4294967296).", valueName: "bytes"))
    public var replyCacheBytes: Int = WireProtocol.defaultReplyCacheBytes

    public init() {}

    public func validate() throws {
        guard (4 * 1_024 * 1_024...1_024 * 1_024 * 1_024).contains(maxMessageBytes) else {
            throw ValidationError("--max-message-bytes must be 4194304 (4 MiB) to 1073741824 (1 GiB); got \(maxMessageBytes)")
        }
        guard (64...1_048_576).contains(maxConnections) else { throw ValidationError("--max-connections must be 64 to 1048576; got \(maxConnections)") }
        guard (128...1_048_576).contains(maxMemory) else { throw ValidationError("--max-memory must be 128 to 1048576 (MiB); got \(maxMemory)") }
        guard (1...10_000).contains(maxRequests) else { throw ValidationError("--max-requests must be 1 to 10000; got \(maxRequests)") }
        guard (4 * 1_024 * 1_024...64 * 1_024 * 1_024 * 1_024).contains(maxBytesInFlight) else {
            throw ValidationError("--max-bytes-in-flight must be 4194304 (4 MiB) to 68719476736 (64 GiB); got \(maxBytesInFlight)")
        }
        guard (0...4 * 1_024 * 1_024 * 1_024).contains(replyCacheBytes) else {
            throw ValidationError("--reply-cache-bytes must be 0 to 4294967296; got \(replyCacheBytes)")
        }
    }
}
