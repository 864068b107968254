import CZeroMQ

/// What a poll waits for, and what it found.
public struct PollEvents: OptionSet, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    /// A message (or, for a file descriptor, bytes) can be read without blocking.
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// A message can be sent without blocking.
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// An error condition on a file descriptor.
    public static let error = PollEvents(rawValue: Int16(ZMQ_POLLERR))
}

/// Waits on several sockets and file descriptors at once (`zmq_poll`).
///
/// Like its sockets, a poller belongs to one thread. It keeps its sockets alive.
public final class Poller {
    private var items: [zmq_pollitem_t] = []
    private var sockets: [Socket] = []

    /// An empty poller.
    public init() {}

    /// Watches `socket` for `events`; returns the index to read results with.
    @discardableResult
    public func add(_ socket: Socket, for events: PollEvents = .readable) throws -> Int {
        let handle = try socket.requireHandle("poll")
        sockets.append(socket)
        items.append(zmq_pollitem_t(socket: handle, fd: 0, events: events.rawValue, revents: 0))
        return items.count - 1
    }

    /// Watches a plain file descriptor (a pipe, an eventfd) for `events`.
    @discardableResult
    public func add(fileDescriptor: Int32, for events: PollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: events.rawValue, revents: 0))
        return items.count - 1
    }

    /// Waits until something is ready or `timeout` passes (`nil` waits forever).
    /// Returns how many items are ready; 0 means the timeout passed.
    @discardableResult
    public func poll(timeout: Duration?) throws -> Int {
        let millis = timeout.map { $0.zmqMilliseconds } ?? -1
        let count = items.count
        return try items.withUnsafeMutableBufferPointer { (buffer) throws -> Int in
            Int(try zmqCall("zmq_poll") { zmq_poll(buffer.baseAddress, Int32(count), millis) } ?? 0)
        }
    }

    /// What the last `poll` found for the item at `index`.
    public func events(at index: Int) -> PollEvents {
        PollEvents(rawValue: items[index].revents)
    }
}

@available(*, unavailable, message: "a poller belongs to one thread, like its sockets")
extension Poller: Sendable {}
