import Foundation
import Synchronization
import Testing
import TestScratch
import TestThreads
@testable import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

@Suite("Socket monitors")
struct MonitorTests {
    /// A TCP port that takes every connection and closes it at once: a peer that is not a ZeroMQ service, or one
    /// that crashes as soon as it is reached. Each reconnect makes monitor events.
    final class Dropper: @unchecked Sendable {
        let descriptor: Int32
        let port: UInt16
        /// How many connections it has taken (and dropped) so far.
        let dropped = Atomic(0)

        init() throws {
            guard let (descriptor, port) = Scratch.loopbackSocket(), listen(descriptor, 128) == 0 else {
                throw ZMQError(errno: errno, operation: "listen on 127.0.0.1")
            }
            self.descriptor = descriptor
            self.port = port
            Thread {
                while true {
                    let connection = accept(descriptor, nil, nil)
                    if connection < 0 { return } // closed: the test is over
                    close(connection)
                    self.dropped.add(1, ordering: .relaxed)
                }
            }.start()
        }

        func stop() {
            shutdown(descriptor, Int32(SHUT_RDWR))
            close(descriptor)
        }
    }

    @Test("the socket events arrive on closed before the socket they are of, whose peer keeps dropping connections: the context's other connections are still served")
    func eventSocketClosedFirst() async throws {
        try await Self.beside(aClientOfADropper: [.connected, .disconnected, .handshakeFailed]) { context, _, events, _ in
            // Closed in the order a `defer` pair closes them: the events first. The client lives on (it might be
            // closing on libzmq's reaper thread while its connection drops: the same).
            events.close()
            return try Self.exchangeRounds(context)
        }
    }

    @Test("a monitor nobody reads while its socket's peer keeps dropping connections never stalls the context's other connections")
    func unreadMonitorDoesNotStallTheContext() async throws {
        try await Self.beside(aClientOfADropper: [.connected, .disconnected, .handshakeFailed, .handshakeSucceeded]) { context, _, events, dropper in
            // Requests and replies while the events pile up unread (thousands a second: ZeroMQ's own queue between
            // them held 2,000), until a round has gone on after 1,500 dropped connections (a connected and a
            // disconnected event each) — however long a loaded machine takes to make them.
            if let stalled = try Self.exchangeRounds(context, until: { dropper.dropped.load(ordering: .relaxed) >= 1_500 }) { return stalled }
            // The events were made (the test made what it set out to) and are all still there to read.
            var count = 0
            while count < 3_000, try events.readEvent() != nil { count += 1 }
            return count == 3_000 ? nil : "only \(count) events: the peer did not drop connections as often as the test needs"
        }
    }

    @Test("a second monitor replaces the first; closing the first's socket afterwards leaves the second reporting")
    func secondMonitorOutlivesTheFirstsSocket() async throws {
        try await Self.beside(aClientOfADropper: [.connected]) { _, client, first, _ in
            let second = try client.monitor([.connected, .disconnected])
            first.close()
            // What came before the close is not what is asked: drain it, then wait for events made after it.
            while try second.readEvent() != nil {}
            let deadline = ContinuousClock.now + .seconds(10)
            var after = 0
            while after < 20, ContinuousClock.now < deadline {
                if try second.readEvent() != nil { after += 1 } else { Thread.sleep(forTimeInterval: 0.01) }
            }
            return after == 20 ? nil : "the second monitor reported \(after) events in 10 s after the first's socket closed: closing it stopped the second"
        }
    }

    /// Runs `body` (which returns what went wrong, if anything) on a thread of its own, in a context with a client of
    /// a `Dropper` that reconnects every millisecond and whose `monitored` events are reported.
    static func beside(aClientOfADropper monitored: SocketEvent.Kind,
                       _ body: @escaping @Sendable (Context, Socket, Socket, Dropper) throws -> String?) async throws {
        let outcome = try await onOwnThread(within: .seconds(120)) { () throws -> String? in
            let context = try Context()
            let dropper = try Dropper()
            defer { dropper.stop() }
            let client = try Socket(context, .dealer)
            try client.setReconnectInterval(.milliseconds(1))
            let events = try client.monitor(monitored)
            try client.connect("tcp://127.0.0.1:\(dropper.port)")
            defer { client.close(); events.close() }
            return try body(context, client, events, dropper)
        }
        let failure = try #require(outcome, "blocked for two minutes: the context's I/O thread was blocked (closing the socket waits for it)")
        #expect(failure == nil, "\(failure ?? "")")
    }

    /// Contexts whose I/O thread a failed case left blocked: terminating one would wait for that thread for ever, so
    /// they are kept (the test fails instead of hanging).
    static let blocked = Mutex<[Context]>([])

    /// Requests and replies over TCP in `context`, half a second apart, six at least and on until a round has gone
    /// on after `enough` held (at most 100: 50 s); which one got no answer, if any.
    static func exchangeRounds(_ context: Context, until enough: () -> Bool = { true }) throws -> String? {
        guard let round = try rounds(context, until: enough) else { return nil }
        blocked.withLock { $0.append(context) }
        return "the exchange of round \(round) got no answer in 5 s: the context's I/O thread was blocked"
    }

    private static func rounds(_ context: Context, until enough: () -> Bool) throws -> Int? {
        let server = try Socket(context, .reply)
        let endpoint = try server.bind("tcp://127.0.0.1:*")
        try server.setReceiveTimeout(.seconds(5))
        defer { server.close() }
        for round in 0..<100 {
            Thread.sleep(forTimeInterval: 0.5)
            let last = round >= 5 && enough()
            let request = try Socket(context, .request)
            defer { request.close() }
            try request.setReceiveTimeout(.seconds(5))
            try request.connect(endpoint)
            _ = try request.send(Message(Data("ping".utf8)))
            guard try server.receive() != nil else { return round }
            _ = try server.send(Message(Data("pong".utf8)))
            guard try request.receive() != nil else { return round }
            if last { return nil }
        }
        return nil
    }
}
