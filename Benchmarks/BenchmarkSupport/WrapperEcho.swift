import Foundation
import ZeroMQ

/// The envelope's socket pattern without the envelope: a DEALER client and a
/// polling ROUTER echo through our wrapper, with no JSON and no tasks. It shows
/// how much of the difference to the bare REQ/REP echo is the pattern itself.
public enum WrapperEcho {
    public static func measure(endpoint: String, payload: Data, count: Int, warmup: Int) async throws -> [Duration] {
        let serverContext = try Context()
        let bound = Mailbox<String>()
        let total = warmup + count
        let server = Thread {
            do {
                let router = try Socket(serverContext, .router)
                bound.put(try router.bind(endpoint))
                let poller = Poller()
                try poller.add(router)
                var served = 0
                while served < total {
                    try poller.poll(timeout: .seconds(5))
                    while let message = try router.receive(dontWait: true) {
                        try router.send(message, dontWait: true)
                        served += 1
                    }
                }
            } catch {
                bound.put("failed: \(error)")
            }
        }
        server.start()
        let endpoint = try bound.take()
        let samples = try await onThread {
            let context = try Context()
            let dealer = try Socket(context, .dealer)
            try dealer.connect(endpoint)
            let poller = Poller()
            try poller.add(dealer)
            let message = Message([Data(), payload])
            let clock = ContinuousClock()
            var samples: [Duration] = []
            samples.reserveCapacity(count)
            for index in 0..<total {
                let start = clock.now
                try dealer.send(message)
                var reply: Message?
                while reply == nil {
                    try poller.poll(timeout: .seconds(5))
                    reply = try dealer.receive(dontWait: true)
                }
                let elapsed = clock.now - start
                guard reply?.frames.last?.count == payload.count else { throw BenchmarkError("wrapper echo changed the payload") }
                if index >= warmup { samples.append(elapsed) }
            }
            return samples
        }
        return samples
    }
}

/// Hands one value from one thread to another.
public final class Mailbox<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only touched with `condition` locked.
    private let condition = NSCondition()
    private var value: Value?

    public init() {}

    public func put(_ newValue: Value) {
        condition.lock()
        value = newValue
        condition.signal()
        condition.unlock()
    }

    public func take(timeout: TimeInterval = 10) throws -> Value {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while value == nil {
            guard condition.wait(until: deadline) else { throw BenchmarkError("no value in time") }
        }
        return value!
    }
}

/// Runs blocking `body` on a thread of its own.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

extension WrapperEcho {
    /// Round trips per second of `clients` DEALER clients, each on its own thread,
    /// against one polling ROUTER echo: the bare ceiling for a service serving them.
    public static func throughput(endpoint: String, payload: Data, clients: Int, perClient: Int) async throws -> Double {
        let serverContext = try Context()
        let bound = Mailbox<String>()
        let total = clients * (perClient + 1) // one round trip each before the clock starts
        let server = Thread {
            do {
                let router = try Socket(serverContext, .router)
                bound.put(try router.bind(endpoint))
                let poller = Poller()
                try poller.add(router)
                var served = 0
                while served < total {
                    guard try poller.poll(timeout: .seconds(5)) > 0 else { break }
                    while let message = try router.receive(dontWait: true) {
                        try router.send(message, dontWait: true)
                        served += 1
                    }
                }
            } catch {
                bound.put("failed: \(error)")
            }
        }
        server.start()
        let endpoint = try bound.take()
        // Every client connected and answered once before the clock starts (as `storage-bench`'s clients are): the
        // rate of requests, not of connecting.
        let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
        let started = Mailbox<ContinuousClock.Instant>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<clients {
                group.addTask {
                    try await onThread {
                        let context = try Context()
                        let dealer = try Socket(context, .dealer)
                        try dealer.setReceiveTimeout(.seconds(5))
                        try dealer.connect(endpoint)
                        let message = Message([Data(), payload])
                        try dealer.send(message)
                        guard try dealer.receive() != nil else { throw BenchmarkError("the echo server stopped answering") }
                        ready.signal()
                        guard go.wait(timeout: .now() + 30) == .success else { throw BenchmarkError("the other clients did not connect") }
                        for _ in 0..<perClient {
                            try dealer.send(message)
                            guard try dealer.receive() != nil else { throw BenchmarkError("the echo server stopped answering") }
                        }
                    }
                }
            }
            group.addTask {
                try await onThread {
                    for _ in 0..<clients {
                        guard ready.wait(timeout: .now() + 30) == .success else { throw BenchmarkError("a client did not connect") }
                    }
                    started.put(ContinuousClock.now)
                    for _ in 0..<clients { go.signal() }
                }
            }
            try await group.waitForAll()
        }
        let start = try started.take()
        let elapsed = ContinuousClock.now - start
        return Double(total) / elapsed.seconds
    }
}
