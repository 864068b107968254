import CZeroMQ
import Synchronization

/// A libzmq context: the I/O threads every socket of a process shares.
///
/// libzmq contexts are thread-safe, so this type is `Sendable`. Every `Socket`
/// keeps its context alive, and the context is terminated when the last
/// reference goes away (after its sockets are closed).
public final class Context: Sendable {
    nonisolated(unsafe) let handle: UnsafeMutableRawPointer

    /// Creates a context with `ioThreads` background I/O threads and room for
    /// `maxSockets` sockets at once (libzmq's default is 1023; closed sockets count
    /// until libzmq's reaper thread has finished them).
    public init(ioThreads: Int = 1, maxSockets: Int? = nil) throws {
        guard let handle = zmq_ctx_new() else {
            throw ZMQError(errno: zmq_errno(), operation: "zmq_ctx_new")
        }
        self.handle = handle
        try zmqCheck("zmq_ctx_set(ZMQ_IO_THREADS)") { zmq_ctx_set(handle, ZMQ_IO_THREADS, Int32(ioThreads)) }
        if let maxSockets {
            try zmqCheck("zmq_ctx_set(ZMQ_MAX_SOCKETS)") { zmq_ctx_set(handle, ZMQ_MAX_SOCKETS, Int32(clamping: maxSockets)) }
        }
    }

    /// The process's context for the sockets that connect — clients and subscribers: one I/O thread and one
    /// reaper for all of them, where a context per owner cost two threads each (the worker had one per storage
    /// client). It lives as long as the process. Sockets that bind with CURVE keep a context of their own:
    /// libzmq asks one key checker per context, at a fixed address, so two such servers cannot share one.
    public static func shared() throws -> Context {
        try sharedContext.withLock { existing in
            if let existing { return existing }
            let context = try Context(maxSockets: 4_096)
            existing = context
            return context
        }
    }

    /// How many sockets this context allows at once.
    public var maxSockets: Int { Int(zmq_ctx_get(handle, ZMQ_MAX_SOCKETS)) }

    /// Makes every blocking call on this context's sockets return with `ETERM`,
    /// so threads parked in `receive` or `poll` wake up and can close their sockets.
    public func shutdown() {
        _ = zmq_ctx_shutdown(handle)
    }

    deinit {
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }
}

private let sharedContext = Mutex<Context?>(nil)
