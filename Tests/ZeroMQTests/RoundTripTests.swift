import Foundation
import Testing
import TestThreads
@testable import ZeroMQ

@Suite("Multipart round trips over every transport")
struct RoundTripTests {
    enum Transport: String, CaseIterable, CustomTestStringConvertible {
        case tcp, ipc, inproc
        var testDescription: String { rawValue }

        func endpoint() -> String {
            switch self {
            case .tcp: "tcp://127.0.0.1:*"
            case .ipc: temporaryIPCEndpoint()
            case .inproc: "inproc://round-trip-\(UUID().uuidString)"
            }
        }
    }

    @Test("binary frames of 0 B, 1 B and 3 MB come back byte-exact", arguments: Transport.allCases)
    func binaryFramesComeBackExact(transport: Transport) async throws {
        let frames = [Data("{\"op\":\"test\"}".utf8), Data(), randomBytes(1), randomBytes(3 * 1_024 * 1_024)]
        let echoed = try await onOwnThread {
            let context = try Context()
            let router = try Socket(context, .router)
            let dealer = try Socket(context, .dealer)
            try router.setReceiveTimeout(.seconds(5))
            try dealer.setReceiveTimeout(.seconds(5))
            let endpoint = try router.bind(transport.endpoint())
            try dealer.connect(endpoint)

            #expect(try dealer.send(Message(frames)))
            let request = try #require(try router.receive(), "the ROUTER got nothing")
            #expect(request.frames.count == frames.count + 1, "the ROUTER adds the peer identity")
            #expect(Array(request.frames.dropFirst()) == frames)
            #expect(try router.send(request))
            return try #require(try dealer.receive(), "the DEALER got no reply")
        }
        #expect(echoed.frames.count == 4)
        #expect(echoed == Message(frames))
        #expect(echoed.frames.map(\.count) == [13, 0, 1, 3 * 1_024 * 1_024])
    }

    @Test("tcp://127.0.0.1:* binds an ephemeral port and reports it")
    func ephemeralPortIsReported() async throws {
        let endpoint = try await onOwnThread {
            let context = try Context()
            let socket = try Socket(context, .router)
            return try socket.bind("tcp://127.0.0.1:*")
        }
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        let port = try #require(Int(endpoint.split(separator: ":").last ?? ""))
        #expect(port > 0 && port < 65_536)
    }

    @Test("IPv6 loopback works when enabled")
    func ipv6Loopback() async throws {
        let reply = try await onOwnThread {
            let context = try Context()
            let reply = try Socket(context, .reply)
            let request = try Socket(context, .request)
            try reply.setIPv6(true)
            try request.setIPv6(true)
            try reply.setReceiveTimeout(.seconds(5))
            try request.setReceiveTimeout(.seconds(5))
            try request.connect(try reply.bind("tcp://[::1]:*"))
            try request.send(Message(Data("ping".utf8)))
            let got = try #require(try reply.receive())
            try reply.send(Message(Data("pong".utf8) + got.frames[0]))
            return try #require(try request.receive())
        }
        #expect(reply == Message(Data("pongping".utf8)))
    }
}
