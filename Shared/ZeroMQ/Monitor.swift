import CZeroMQ
import Foundation
import Synchronization

/// Something that happened to a socket's connections (`zmq_socket_monitor`).
public struct SocketEvent: Sendable, Equatable {
    /// What happened.
    public struct Kind: OptionSet, Sendable, Hashable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public static let connected = Kind(rawValue: UInt16(ZMQ_EVENT_CONNECTED))
        /// A listening socket took a connection (`value` is its file descriptor, which ZeroMQ owns).
        public static let accepted = Kind(rawValue: UInt16(ZMQ_EVENT_ACCEPTED))
        public static let disconnected = Kind(rawValue: UInt16(ZMQ_EVENT_DISCONNECTED))
        /// The security handshake failed for a reason other than the two below.
        public static let handshakeFailed = Kind(rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL))
        /// The peers do not speak the same protocol or mechanism (`value` says which rule: `ZMQ_PROTOCOL_ERROR_*`).
        public static let handshakeFailedProtocol = Kind(rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL))
        /// The peer's authenticator refused us (`value` is its status code, such as 400).
        public static let handshakeFailedAuth = Kind(rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH))
        public static let handshakeSucceeded = Kind(rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_SUCCEEDED))
        /// A connection attempt failed (refused, nothing listening) and will be tried again.
        public static let connectRetried = Kind(rawValue: UInt16(ZMQ_EVENT_CONNECT_RETRIED))
    }

    public var kind: Kind
    /// The event's number: a status code, an error number or a protocol error, depending on `kind`.
    public var value: UInt32
    /// The endpoint the event concerns.
    public var endpoint: String

    /// The protocol error for two peers of which only one uses CURVE (or they use different mechanisms).
    public static let mechanismMismatch = UInt32(ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
}

private let monitorCount = Atomic<Int>(0)

extension Socket {
    /// Starts reporting `events` of this socket and returns the socket they arrive on
    /// (poll it and read them with `Socket.readEvent()`). Closing either socket stops the reports (see `close()`), so
    /// they may be closed in any order. A second call replaces the first monitor: the socket the first returned gets no
    /// more events, and closing it leaves the second alone.
    ///
    /// Events queue until read, however many: libzmq sends most of them from its I/O thread, and a send to a
    /// full queue would block that thread — and with it every connection of every socket of the context — until
    /// someone reads (a peer that accepts and drops connections makes a few events each reconnect, so an owner
    /// that reads only while it has a request out would freeze the process within minutes). An owner that leaves its
    /// events unread for long should close the monitored socket or read them now and then.
    public func monitor(_ events: SocketEvent.Kind) throws -> Socket {
        let handle = try requireHandle("zmq_socket_monitor")
        let number = monitorCount.add(1, ordering: .relaxed).newValue
        let endpoint = "inproc://recipevault.monitor.\(getpid()).\(number)"
        stopMonitor()
        monitorGeneration += 1
        try zmqCheck("zmq_socket_monitor") { zmq_socket_monitor(handle, endpoint, Int32(events.rawValue)) }
        isMonitored = true
        let events: Socket
        do {
            events = try Socket(context, .pair)
        } catch {
            stopMonitor()
            throw error
        }
        events.monitoredSocket = (self, monitorGeneration)
        // No high-water mark on the reading side makes the whole inproc queue unbounded (libzmq adds the two sides'
        // marks, and a zero on either is no limit): the I/O thread's send never waits.
        try events.setReceiveHighWaterMark(0)
        try events.connect(endpoint)
        return events
    }

    /// The next event on a socket returned by `monitor(_:)`, or `nil` when none is waiting.
    public func readEvent() throws -> SocketEvent? {
        guard let message = try receive(dontWait: true), message.frames.count == 2, message.frames[0].count >= 6 else {
            return nil
        }
        let header = message.frames[0]
        let kind = header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: UInt16.self) }
        let value = header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 2, as: UInt32.self) }
        return SocketEvent(kind: .init(rawValue: kind), value: value,
                           endpoint: String(decoding: message.frames[1], as: UTF8.self))
    }
}
