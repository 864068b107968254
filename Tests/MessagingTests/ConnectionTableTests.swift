import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Messaging

@Suite("The connections a server took: when, how recently they brought a request, and whose")
struct ConnectionTableTests {
    let start = ContinuousClock.now
    let alice = Data("alice".utf8)
    let bob = Data("bob".utf8)

    @Test("a client is found by its identity on the connection its requests came on, and not once it closed")
    func identityToConnection() {
        var table = ConnectionTable()
        table.accepted(7, at: start)
        table.accepted(8, at: start)
        _ = table.request(from: alice, on: 7, at: start)
        _ = table.request(from: bob, on: 8, at: start)
        #expect(table.descriptor(of: alice) == 7 && table.descriptor(of: bob) == 8)
        table.disconnected(7)
        #expect(table.descriptor(of: alice) == nil && table.descriptor(of: bob) == 8 && table.identified == 1)
    }

    @Test("a connection the server shut drops the requests still on their way from it, is shut once, is never quiet, and is forgotten when it closes")
    func shutUntilClosed() {
        var table = ConnectionTable()
        table.accepted(7, at: start)
        _ = table.request(from: alice, on: 7, at: start)
        let shut = table.markShut(7)
        let later = table.request(from: alice, on: 7, at: start + .seconds(1))
        let shutAgain = table.markShut(7)
        #expect(shut && !later && !shutAgain)
        #expect(table.descriptor(of: alice) == nil && table.isShut(alice) && table.quiet(for: .seconds(1), at: start + .seconds(60)).isEmpty)
        table.disconnected(7)
        #expect(!table.isShut(alice) && table.entries.isEmpty && table.identified == 0)
    }

    @Test("requests on a connection not reported yet, or another's, change nothing; a number taken again is a new connection")
    func unknownAndReused() {
        var table = ConnectionTable()
        let unknown = table.request(from: alice, on: 9, at: start)
        #expect(unknown && table.descriptor(of: alice) == nil && table.entries.isEmpty, "not reported yet: taken, nothing noted")
        table.accepted(9, at: start)
        _ = table.request(from: alice, on: 9, at: start)
        // The number closed and given to another connection before its disconnected event was read.
        table.accepted(9, at: start + .seconds(2))
        #expect(table.descriptor(of: alice) == nil && table.entries[9] == .init(since: start + .seconds(2), lastRequest: nil, identity: nil, shut: false))
        _ = table.request(from: bob, on: 9, at: start + .seconds(3))
        #expect(table.descriptor(of: bob) == 9 && table.identified == 1)
    }

    @Test("an identity seen on a second connection is that one's; the first keeps its entry without it")
    func identityMoves() {
        var table = ConnectionTable()
        table.accepted(7, at: start)
        table.accepted(8, at: start)
        _ = table.request(from: alice, on: 7, at: start)
        _ = table.request(from: alice, on: 8, at: start)
        #expect(table.descriptor(of: alice) == 8 && table.entries[7]?.identity == nil)
        table.disconnected(7)
        #expect(table.descriptor(of: alice) == 8, "closing the first connection does not forget where the client is now")
    }

    @Test("the system says how many bytes a connection's peer acknowledged, growing as it reads, and whether there is room to send")
    func acknowledgedBytes() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                guard bind(listener, $0, length) == 0, listen(listener, 1) == 0, getsockname(listener, $0, &length) == 0 else {
                    throw ConnectionTableTestError("no listening socket: errno \(errno)")
                }
            }
        }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) } }
        try #require(connected == 0)
        let server = accept(listener, nil, nil)
        defer { close(server) }
        let before = try #require(ConnectionTable.bytesAcknowledged(server))
        #expect(ConnectionTable.hasRoomToSend(server))
        let bytes = [UInt8](repeating: 7, count: 100_000)
        #expect(send(server, bytes, bytes.count, 0) == bytes.count)
        var buffer = [UInt8](repeating: 0, count: 100_000)
        var read = 0
        while read < bytes.count {
            let got = recv(client, &buffer, buffer.count, 0)
            guard got > 0 else { break }
            read += got
        }
        var after = ConnectionTable.bytesAcknowledged(server) ?? 0
        for _ in 0..<200 where after < before + UInt64(bytes.count) {
            usleep(10_000)
            after = ConnectionTable.bytesAcknowledged(server) ?? 0
        }
        #expect(read == bytes.count && after >= before + UInt64(bytes.count), "acknowledged \(before), then \(after)")
        #expect(ConnectionTable.bytesAcknowledged(-1) == nil && !ConnectionTable.hasRoomToSend(-1))
    }

    @Test("a connection's reading rate: bytes acknowledged a second since the last look; none at the first look or for a connection not known")
    func readingRate() {
        var table = ConnectionTable()
        table.accepted(7, at: start)
        let first = table.readingRate(7, acknowledged: 1_000, at: start + .seconds(1))
        let second = table.readingRate(7, acknowledged: 5_000, at: start + .seconds(3))
        let unknown = table.readingRate(8, acknowledged: 5_000, at: start + .seconds(3))
        #expect(first == nil && second == 2_000 && unknown == nil)
        // Forgotten (its buffer had room): the next look starts a new stretch, what it took before not counted.
        table.forgetReadingRate(7)
        let afresh = table.readingRate(7, acknowledged: 900_000, at: start + .seconds(60))
        let after = table.readingRate(7, acknowledged: 900_100, at: start + .seconds(61))
        #expect(afresh == nil && after == 100)
    }

    @Test("quiet: no whole request within the span, counted from when the connection came for one that brought none")
    func quiet() {
        var table = ConnectionTable()
        table.accepted(7, at: start)
        table.accepted(8, at: start)
        table.accepted(9, at: start + .seconds(4))
        _ = table.request(from: alice, on: 8, at: start + .seconds(3))
        #expect(table.quiet(for: .seconds(5), at: start + .seconds(5)) == [7])
        #expect(Set(table.quiet(for: .seconds(5), at: start + .seconds(9))) == [7, 8, 9])
    }
}

struct ConnectionTableTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
