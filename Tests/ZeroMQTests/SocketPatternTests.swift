import Foundation
import Testing
import TestThreads
@testable import ZeroMQ

@Suite("Socket patterns")
struct SocketPatternTests {
    @Test("PUB/SUB delivers only subscribed prefixes")
    func publishSubscribe() async throws {
        let received = try await onOwnThread {
            let context = try Context()
            let publisher = try Socket(context, .publish)
            let subscriber = try Socket(context, .subscribe)
            let endpoint = try publisher.bind("inproc://pubsub")
            try subscriber.subscribe(Array("recipe.".utf8))
            try subscriber.setReceiveTimeout(.milliseconds(50))
            try subscriber.connect(endpoint)
            // A subscription takes a moment to reach the publisher: publish until one arrives.
            var got: [String] = []
            let deadline = ContinuousClock.now + .seconds(5)
            while got.isEmpty && ContinuousClock.now < deadline {
                try publisher.send(Message(Data("book.changed".utf8)))
                try publisher.send(Message(Data("recipe.changed".utf8), Data("42".utf8)))
                while let message = try subscriber.receive() {
                    got.append(message.frames.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "|"))
                }
            }
            return got
        }
        #expect(!received.isEmpty)
        #expect(received.allSatisfy { $0 == "recipe.changed|42" })
    }

    @Test("PUSH/PULL and PAIR carry messages one way and both ways")
    func pushPullAndPair() async throws {
        let (pulled, paired) = try await onOwnThread {
            let context = try Context()
            let push = try Socket(context, .push)
            let pull = try Socket(context, .pull)
            try pull.setReceiveTimeout(.seconds(5))
            try push.connect(try pull.bind("inproc://pushpull"))
            try push.send(Message(Data("job".utf8)))
            let pulled = try #require(try pull.receive())

            let left = try Socket(context, .pair)
            let right = try Socket(context, .pair)
            try left.setReceiveTimeout(.seconds(5))
            try right.setReceiveTimeout(.seconds(5))
            try right.connect(try left.bind("inproc://pair"))
            try right.send(Message(Data("hello".utf8)))
            _ = try #require(try left.receive())
            try left.send(Message(Data("back".utf8)))
            return (pulled, try #require(try right.receive()))
        }
        #expect(pulled == Message(Data("job".utf8)))
        #expect(paired == Message(Data("back".utf8)))
    }

    @Test("a receive with a timeout returns nothing instead of hanging")
    func receiveTimesOut() async throws {
        let (message, elapsed) = try await onOwnThread {
            let context = try Context()
            let socket = try Socket(context, .pull)
            try socket.bind("inproc://silent")
            try socket.setReceiveTimeout(.milliseconds(100))
            let start = ContinuousClock.now
            return (try socket.receive(), ContinuousClock.now - start)
        }
        #expect(message == nil)
        #expect(elapsed >= .milliseconds(90) && elapsed < .seconds(3))
    }

    @Test("options read back what was set; LINGER is 0 by default")
    func optionsReadBack() throws {
        let context = try Context()
        let socket = try Socket(context, .router)
        #expect(try socket.linger == .zero)
        try socket.setMaxMessageSize(1_000)
        #expect(try socket.maxMessageSize == 1_000)
        try socket.setMaxMessageSize(nil)
        #expect(try socket.maxMessageSize == nil)
        try socket.setReceiveTimeout(.milliseconds(250))
        #expect(try socket.receiveTimeout == .milliseconds(250))
        try socket.setReceiveTimeout(nil)
        #expect(try socket.receiveTimeout == nil)
    }

    @Test("a poller wakes for a socket and for a plain file descriptor")
    func pollerWakes() async throws {
        let (socketReady, pipeReady) = try await onOwnThread {
            let context = try Context()
            let pull = try Socket(context, .pull)
            let push = try Socket(context, .push)
            try push.connect(try pull.bind("inproc://poll"))
            var descriptors: [Int32] = [0, 0]
            guard pipe(&descriptors) == 0 else { throw ZMQError(errno: errno, operation: "pipe") }
            defer { close(descriptors[0]); close(descriptors[1]) }
            let poller = Poller()
            let socketIndex = try poller.add(pull)
            let pipeIndex = poller.add(fileDescriptor: descriptors[0])
            #expect(try poller.poll(timeout: .milliseconds(20)) == 0)
            try push.send(Message(Data("x".utf8)))
            var byte: UInt8 = 1
            _ = write(descriptors[1], &byte, 1)
            let deadline = ContinuousClock.now + .seconds(5)
            var socketReady = false, pipeReady = false
            while !(socketReady && pipeReady) && ContinuousClock.now < deadline {
                try poller.poll(timeout: .milliseconds(100))
                socketReady = socketReady || poller.events(at: socketIndex).contains(.readable)
                pipeReady = pipeReady || poller.events(at: pipeIndex).contains(.readable)
            }
            return (socketReady, pipeReady)
        }
        #expect(socketReady)
        #expect(pipeReady)
    }
}
