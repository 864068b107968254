import Foundation
import Logging
import Synchronization
import TestThreads
import Testing
@testable import Messaging

@Suite("Change notices between processes' ends", .onOwnThread)
struct ChangeSubscriberTests {
    @Test("a connection to a storage's notices counts as a notice, with nothing announced: when it is first made, and again after the storage restarted (what it announced meanwhile is not known)")
    func connectionIsANotice() async throws {
        let logger = Logger(label: "test")
        var publisher = try ChangePublisher(endpoint: "tcp://127.0.0.1:*", logger: logger)
        let endpoint = publisher.endpoint
        let subscriber = ChangeSubscriber(logger: logger)
        let noticed = Atomic<Int>(0)
        subscriber.start { noticed.add(1, ordering: .relaxed) }
        defer { subscriber.stop() }
        subscriber.add(endpoint, security: nil, for: "storage")
        func waitFor(_ count: Int) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(30)
            while noticed.load(ordering: .relaxed) < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            return noticed.load(ordering: .relaxed) >= count
        }
        #expect(try await waitFor(1), "no notice for the connection in 30 s")
        // The storage restarts on the same endpoint: the subscriber connects again, and says so.
        await publisher.close()
        let before = noticed.load(ordering: .relaxed)
        // (ZeroMQ lets go of the port a moment after the close returns: the new one tries again until it can bind.)
        let bindBy = ContinuousClock.now + .seconds(20)
        while true {
            do {
                publisher = try ChangePublisher(endpoint: endpoint, logger: logger)
                break
            } catch where ContinuousClock.now < bindBy {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        #expect(try await waitFor(before + 1), "no notice for the connection made again in 30 s")
        await publisher.close()
    }

    @Test("an endpoint that cannot be listened to loses its own notices only: the others still arrive (one such endpoint ended the listening for every storage)")
    func badEndpointAlone() async throws {
        let logger = Logger(label: "test")
        let publisher = try ChangePublisher(endpoint: "tcp://127.0.0.1:*", logger: logger)
        let subscriber = ChangeSubscriber(logger: logger)
        let noticed = Atomic<Int>(0)
        subscriber.start { noticed.add(1, ordering: .relaxed) }
        defer { subscriber.stop() }
        // What a replica that gives a malformed publish endpoint makes the worker add, then a storage's.
        subscriber.add("bogus://replica", security: nil, for: "malformed")
        subscriber.add(publisher.endpoint, security: nil, for: "storage")
        // On a thread of its own: a loaded full run's other tests hold the task pool for tens of seconds, and this
        // loop, waiting for the pool, ran past its deadline having announced little.
        let deadline = ContinuousClock.now + .seconds(30)
        while noticed.load(ordering: .relaxed) == 0, ContinuousClock.now < deadline {
            publisher.announce("recipe.create")
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(noticed.load(ordering: .relaxed) > 0, "no notice from the storage's endpoint in 30 s")
        await publisher.close()
    }
}
