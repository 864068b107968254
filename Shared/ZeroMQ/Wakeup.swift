import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A self-pipe that wakes a thread parked in `zmq_poll` from any other thread.
package final class Wakeup: Sendable {
    /// The end the poller watches.
    package let readDescriptor: Int32
    private let writeDescriptor: Int32
    /// The thread that polls; it needs no wake-up from itself.
    private let owner = Mutex<pthread_t?>(nil)

    package init() throws(WakeupError) {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { throw WakeupError(errno: errno) }
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
    }

    /// Marks the calling thread as the one that polls.
    package func claim() {
        owner.withLock { $0 = pthread_self() }
    }

    /// Wakes the poller, unless called from the polling thread itself (which looks
    /// at its queues before it polls again). A full pipe already means "wake up".
    package func signal() {
        if let owner = owner.withLock({ $0 }), pthread_equal(owner, pthread_self()) != 0 { return }
        var byte: UInt8 = 1
        while write(writeDescriptor, &byte, 1) < 0 && errno == EINTR {}
    }

    /// Empties the pipe after a wake-up.
    package func drain() {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    deinit {
        _ = close(readDescriptor)
        _ = close(writeDescriptor)
    }
}

/// The wake-up pipe could not be created (usually: out of file descriptors).
package struct WakeupError: Error, CustomStringConvertible {
    package let errno: Int32
    package var description: String { "cannot create the wake-up pipe: \(String(cString: strerror(errno)))" }
}
