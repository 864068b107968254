import Foundation
import Logging
import Messaging
import RecipeProtocol
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Small requests run on the server's I/O thread (no hand-off); requests that touch photo files, or carry
/// 64 KB or more, run on a thread of their own, so a slow disk or a large decode never holds up the socket.
@Suite("Where handlers run")
struct ExecutorPlacementTests {
    enum Quick: WireOperation {
        static let name = "test.quick"
        static let isWrite = false
        struct Request: Codable, Sendable { var padding = "" }
        struct Response: Codable, Sendable { var ok = true }
    }

    /// Blocks its thread for 800 ms, as a read from a stalled disk would.
    enum SlowFiles: WireOperation {
        static let name = "test.slowFiles"
        static let isWrite = false
        static let touchesFiles = true
        typealias Request = Quick.Request
        typealias Response = Quick.Response
    }

    /// The same, for an operation that does not say it touches files, reached with a large body.
    enum SlowLarge: WireOperation {
        static let name = "test.slowLarge"
        static let isWrite = false
        typealias Request = Quick.Request
        typealias Response = Quick.Response
    }

    static func block() { usleep(800_000) }

    @Test("while a file operation or a large request blocks its thread, a small request is answered at once",
          arguments: ["files", "large"])
    func slowWorkDoesNotHoldTheSocket(_ kind: String) async throws {
        var routes = Routes()
        routes.handle(Quick.self) { _, _ in .init() }
        routes.handle(SlowFiles.self) { _, _ in Self.block(); return .init() }
        routes.handle(SlowLarge.self) { _, _ in Self.block(); return .init() }
        try await withServer(routes) { endpoint in
            let slowClient = try makeClient(endpoint, timeout: .seconds(5), attempts: 1)
            let quickClient = try makeClient(endpoint, timeout: .seconds(5), attempts: 1)
            let slow = Task {
                if kind == "files" {
                    _ = try await slowClient.call(SlowFiles.self, .init())
                } else {
                    _ = try await slowClient.call(SlowLarge.self, .init(padding: String(repeating: "x", count: 70_000)))
                }
            }
            try await Task.sleep(for: .milliseconds(200)) // the slow one is running by now
            let start = ContinuousClock.now
            _ = try await quickClient.call(Quick.self, .init())
            let elapsed = ContinuousClock.now - start
            try await slow.value
            #expect(elapsed < .milliseconds(400), "the quick request waited \(elapsed)")
        }
    }
}
