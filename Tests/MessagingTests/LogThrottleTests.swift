import Foundation
import Logging
import RecipeProtocol
import Synchronization
import Testing
@testable import Messaging

@Suite("Lines strangers can cause: a few a window go out, the rest are counted and the count said with the next")
struct LogThrottleTests {
    let start = ContinuousClock.now

    @Test("within a window the first lines go out and the rest are left out; the next window's first line says how many were")
    func window() {
        var throttle = LogThrottle(linesPerWindow: 3, window: .seconds(60))
        let first = (0..<10).map { throttle.admit(at: start + .seconds($0)) }
        #expect(first == [0, 0, 0, nil, nil, nil, nil, nil, nil, nil])
        #expect(throttle.admit(at: start + .seconds(59)) == nil, "still the first window")
        #expect(throttle.admit(at: start + .seconds(60)) == 8, "a new window: out, with the eight left out before it")
        #expect(throttle.admit(at: start + .seconds(61)) == 0, "the count starts again once said")
        #expect(throttle.admit(at: start + .seconds(62)) == 0)
        #expect(throttle.admit(at: start + .seconds(63)) == nil)
    }

    @Test("lines fewer than the window's share all go out, however long it runs")
    func slowLinesAllGoOut() {
        var throttle = LogThrottle(linesPerWindow: 2, window: .seconds(10))
        #expect((0..<50).allSatisfy { throttle.admit(at: start + .seconds($0 * 5)) == 0 })
    }

    @Test("metadata names the left-out lines only when there were some")
    func metadata() {
        #expect(LogThrottle.metadata(leftOut: 0).isEmpty)
        #expect(LogThrottle.metadata(leftOut: 4_812)["more like it not logged"] == "4812")
    }

    @Test("counts added up: a line let through says what the lines left out before it counted, then starts again")
    func sums() {
        var throttle = LogThrottle(linesPerWindow: 1, window: .seconds(60))
        #expect(throttle.admit(adding: ["shut": 2, "quiet": 1], at: start) == ["shut": "2", "quiet": "1"])
        #expect(throttle.admit(adding: ["shut": 3], at: start + .seconds(1)) == nil)
        #expect(throttle.admit(adding: ["shut": 4, "quiet": 5], at: start + .seconds(2)) == nil)
        #expect(throttle.admit(adding: ["shut": 1], at: start + .seconds(60))
                == ["shut": "8", "quiet": "5", "more like it not logged": "2"])
        #expect(throttle.admit(adding: ["shut": 1], at: start + .seconds(120)) == ["shut": "1"])
    }

    @Test("refusals: each client's once a minute; of many clients at once on many threads exactly the window's share go out")
    func refusals() async {
        let log = RefusalLog(linesPerWindow: 10, window: .seconds(3_600))
        #expect(log.admit("key-0", at: start) == 0)
        #expect(log.admit("key-0", at: start + .seconds(59)) == nil, "the same client within a minute")
        #expect(log.admit("key-0", at: start + .seconds(60)) == 0, "the same client a minute later")
        let admitted = await withTaskGroup(of: Int.self) { group in
            for thread in 0..<8 {
                group.addTask { (0..<500).count { log.admit("key-\(thread)-\($0)") != nil } }
            }
            return await group.reduce(0, +)
        }
        #expect(admitted == 8, "ten lines an hour, two of them taken already")
    }

    @Test("requests that fail: ten lines a minute of each code the client is told, every client still answered with it")
    func failedRequests() async throws {
        struct DiskFull: Error {}
        struct Broken: Error {}
        var routes = Routes()
        routes.translateFailures { error, _ in error is DiskFull ? ServiceError(.storageFull, "the disk is full") : nil }
        routes.handle(System.Echo.self) { request, _ in
            if request.text == "full" { throw DiskFull() }
            throw Broken()
        }
        let lines = CapturedLines()
        let logger = Logger(label: "test") { _ in CapturingHandler(lines: lines) }
        for index in 0..<40 {
            let text = index.isMultiple(of: 2) ? "full" : "broken"
            let payload = Data(#"{"v":1,"id":"\#(index)","op":"system.echo","body":{"text":"\#(text)","frames":[]}}"#.utf8)
            let reply = try #require(await routes.reply(to: payload, logger: logger).first)
            let code = try #require(((try JSONSerialization.jsonObject(with: reply) as? [String: Any])?["error"] as? [String: Any])?["code"] as? String)
            #expect(code == (text == "full" ? "storage_full" : "internal_error"))
        }
        let written = lines.all
        #expect(written.filter { $0.hasPrefix("warning request refused") && $0.contains("storage_full") }.count == 10, "\(written)")
        #expect(written.filter { $0.hasPrefix("error request failed") }.count == 10, "\(written)")
    }
}

/// The lines a logger wrote, as "level message metadata".
private final class CapturedLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

private struct CapturingHandler: LogHandler {
    let lines: CapturedLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append("\(event.level) \(event.message) \(event.metadata ?? [:])")
    }
}
