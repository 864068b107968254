import CZeroMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A libzmq call that failed: the errno it set and libzmq's own text for it.
public struct ZMQError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `errno` value libzmq reported.
    public let errno: Int32
    /// libzmq's description of `errno` (`zmq_strerror`).
    public let message: String
    /// The call that failed, such as `bind(tcp://127.0.0.1:5555)`.
    public let operation: String

    /// An error for `errno`, with libzmq's message for it.
    public init(errno: Int32, operation: String) {
        self.errno = errno
        self.operation = operation
        self.message = String(cString: zmq_strerror(errno))
    }

    /// `true` when the context was shut down or terminated (`ETERM`).
    public var isContextTerminated: Bool { errno == ETERM }

    public var description: String { "\(operation): \(message) (errno \(errno))" }
}

/// The one helper every libzmq call goes through: `EINTR` is retried, `EAGAIN`
/// (a timeout or a non-blocking call with nothing to do) becomes `nil`, and every
/// other failure is thrown as a `ZMQError`.
@inline(__always)
func zmqCall(_ operation: @autoclosure () -> String, _ call: () -> Int32) throws -> Int32? {
    while true {
        let rc = call()
        if rc >= 0 { return rc }
        let code = zmq_errno()
        switch code {
        case EINTR: continue
        case EAGAIN: return nil
        default: throw ZMQError(errno: code, operation: operation())
        }
    }
}

/// Like `zmqCall`, for calls where `EAGAIN` cannot mean "try later" and is an error too.
@inline(__always)
func zmqCheck(_ operation: @autoclosure () -> String, _ call: () -> Int32) throws {
    guard try zmqCall(operation(), call) != nil else {
        throw ZMQError(errno: EAGAIN, operation: operation())
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so a short positive wait never becomes 0 ("don't wait").
    var zmqMilliseconds: Int {
        let (seconds, attoseconds) = components
        let millis = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(clamping: max(0, millis))
    }
}
