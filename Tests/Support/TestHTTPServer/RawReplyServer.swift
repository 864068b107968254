import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP server on 127.0.0.1 that answers each of its first `connections` connections with `reply`, whatever was
/// asked, and closes it (with `reset`, by resetting it, as a crashed server's system does): the replies no HTTP
/// library would send, and a program that is not the service a client expected. It waits at most 10 s for each.
public final class RawReplyServer: Sendable {
    public let port: Int

    public init(reply: [UInt8], reset: Bool = false, connections: Int = 1) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw RawServerError("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound else {
            close(listener)
            throw RawServerError("bind")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        var wait = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread {
            defer { close(listener) }
            for _ in 0..<connections {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                Self.answer(connection, with: reply, reset: reset)
            }
        }
        thread.start()
    }

    private static func answer(_ connection: Int32, with reply: [UInt8], reset: Bool) {
        defer {
            if reset {
                var abort = linger(l_onoff: 1, l_linger: 0)
                setsockopt(connection, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
            }
            close(connection)
        }
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var request = [UInt8](repeating: 0, count: 65_536)
        _ = recv(connection, &request, request.count, 0)
        var offset = 0
        while offset < reply.count {
            let sent = reply[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return } // the client hung up
            offset += sent
        }
    }
}

public struct RawServerError: Error {
    public let what: String
    init(_ what: String) { self.what = what }
}
