#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A self-pipe that wakes a thread parked in `zmq_poll` from any other thread.
final class Wakeup: Sendable {
    /// The end the poller watches.
    let readDescriptor: Int32
    private let writeDescriptor: Int32

    init() throws(WakeupError) {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { throw WakeupError(errno: errno) }
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
    }

    /// Wakes the poller. A full pipe already means "wake up", so that is not an error.
    func signal() {
        var byte: UInt8 = 1
        while write(writeDescriptor, &byte, 1) < 0 && errno == EINTR {}
    }

    /// Empties the pipe after a wake-up.
    func drain() {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    deinit {
        _ = close(readDescriptor)
        _ = close(writeDescriptor)
    }
}

/// The wake-up pipe could not be created (usually: out of file descriptors).
struct WakeupError: Error, CustomStringConvertible {
    let errno: Int32
    var description: String { "cannot create the wake-up pipe: \(String(cString: strerror(errno)))" }
}
