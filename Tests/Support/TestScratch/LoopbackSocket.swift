import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Scratch {
    /// A TCP socket bound to 127.0.0.1 on a port the system chose, not yet listening: held, a port no other test can
    /// take and whose connections are refused; listening, a server of the test's own. `nil` (with `errno` set) when the
    /// system gives none. The caller closes the descriptor.
    public static func loopbackSocket() -> (descriptor: Int32, port: UInt16)? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard bound else {
            let failure = errno
            close(descriptor)
            errno = failure
            return nil
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }
}
