import Foundation
import Testing
import TestThreads
@testable import ZeroMQ

@Suite("Errors and resource handling")
struct ErrorAndLifecycleTests {
    @Test("errors carry errno and libzmq's message")
    func errorsCarryErrnoAndMessage() throws {
        let context = try Context()
        let first = try Socket(context, .router)
        let endpoint = try first.bind("tcp://127.0.0.1:*")
        let second = try Socket(context, .router)
        let inUse = try #require(throws: ZMQError.self) { try second.bind(endpoint) }
        #expect(inUse.errno == EADDRINUSE)
        #expect(inUse.message == "Address already in use")
        #expect(inUse.description.contains(endpoint))

        let badProtocol = try #require(throws: ZMQError.self) { try second.bind("carrier-pigeon://loft") }
        #expect(badProtocol.errno == EPROTONOSUPPORT)
        #expect(!badProtocol.message.isEmpty)

        second.close()
        let closed = try #require(throws: ZMQError.self) { try second.send(Message(Data())) }
        #expect(closed.errno == ENOTSOCK)
    }

    @Test("opening and closing 10,000 sockets leaks no file descriptors")
    func noLeaks() async throws {
        // The count is of the whole process, so it runs in a process of its own: the suites
        // running alongside open and close descriptors of their own, which once read as a leak.
        await #expect(processExitsWith: .success) {
            let more = try Self.descriptorsLeftAfterOpeningAndClosing(10_000)
            // Alone in its process, every descriptor the sockets took is given back:
            // a leak of one in 500 sockets (one TCP bind in 25) would show.
            #expect(more <= 5, "\(more) descriptors more after 10,000 open/close")
        }
    }

    /// Opens and closes `count` sockets of every type, one in 20 bound to TCP and the rest to
    /// inproc, and returns how many more descriptors the process holds once libzmq's reaper is done.
    static func descriptorsLeftAfterOpeningAndClosing(_ count: Int) throws -> Int {
        let context = try Context(maxSockets: 4_096)
        precondition(context.maxSockets == 4_096, "maxSockets is \(context.maxSockets), not 4096")
        let types = SocketType.allCases
        // Warm up: the context starts its own threads and descriptors with the first socket.
        try Socket(context, .pair).close()
        let before = openFileDescriptorCount()
        for index in 0..<count {
            let socket = try Socket(context, types[index % types.count])
            if index % 20 == 0 {
                try socket.bind("tcp://127.0.0.1:*")
            } else {
                try socket.bind("inproc://leak-check-\(index)")
            }
            socket.close()
            if index % 1_000 == 999 {
                // libzmq finishes closed sockets on its reaper thread: let it catch up (bounded).
                let pause = ContinuousClock.now + .seconds(5)
                while openFileDescriptorCount() > before + 20 && ContinuousClock.now < pause {
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
        }
        // The same for the last ones, then measure.
        var after = openFileDescriptorCount()
        let deadline = ContinuousClock.now + .seconds(10)
        while after > before && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            after = openFileDescriptorCount()
        }
        return after - before
    }

    @Test("a socket released without close() is closed: its port can be bound again")
    func releaseCloses() async throws {
        let reboundOnce = try await onOwnThread {
            let context = try Context()
            var endpoint = ""
            do {
                let socket = try Socket(context, .router)
                endpoint = try socket.bind("tcp://127.0.0.1:*")
            }
            // libzmq releases the port on its own thread: retry for a bounded moment.
            let deadline = ContinuousClock.now + .seconds(5)
            while true {
                do {
                    let again = try Socket(context, .router)
                    try again.bind(endpoint)
                    return true
                } catch let error as ZMQError where error.errno == EADDRINUSE && ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
        }
        #expect(reboundOnce)
    }
}
