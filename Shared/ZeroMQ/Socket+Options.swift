import CZeroMQ
import Foundation

extension Socket {
    func setOption<Value: FixedWidthInteger>(_ option: Int32, _ value: Value, _ name: String) throws {
        let handle = try requireHandle("setsockopt(\(name))")
        var value = value
        try zmqCheck("setsockopt(\(name))") { zmq_setsockopt(handle, option, &value, MemoryLayout<Value>.size) }
    }

    func setOption(_ option: Int32, bytes: [UInt8], _ name: String) throws {
        let handle = try requireHandle("setsockopt(\(name))")
        try bytes.withUnsafeBytes { (raw) throws in
            try zmqCheck("setsockopt(\(name))") { zmq_setsockopt(handle, option, raw.baseAddress, raw.count) }
        }
    }

    func option<Value: FixedWidthInteger>(_ option: Int32, as _: Value.Type, _ name: String) throws -> Value {
        let handle = try requireHandle("getsockopt(\(name))")
        var value: Value = 0
        var size = MemoryLayout<Value>.size
        try zmqCheck("getsockopt(\(name))") { zmq_getsockopt(handle, option, &value, &size) }
        return value
    }

    func bytesOption(_ option: Int32, capacity: Int, _ name: String) throws -> [UInt8] {
        let handle = try requireHandle("getsockopt(\(name))")
        var buffer = [UInt8](repeating: 0, count: capacity)
        var size = capacity
        try buffer.withUnsafeMutableBytes { (raw) throws in
            try zmqCheck("getsockopt(\(name))") { zmq_getsockopt(handle, option, raw.baseAddress, &size) }
        }
        return Array(buffer.prefix(size))
    }

    /// A timeout as libzmq wants it: milliseconds, -1 for "wait forever".
    private static func milliseconds(_ timeout: Duration?) -> Int32 {
        guard let timeout else { return -1 }
        return Int32(clamping: timeout.zmqMilliseconds)
    }

    private static func duration(_ milliseconds: Int32) -> Duration? {
        milliseconds < 0 ? nil : .milliseconds(milliseconds)
    }

    /// The endpoint most recently bound or connected, with the real port for `*`.
    public var lastEndpoint: String {
        get throws {
            let bytes = try bytesOption(ZMQ_LAST_ENDPOINT, capacity: 1_024, "ZMQ_LAST_ENDPOINT")
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// How long `close()` keeps unsent messages; `.zero` (the default here) drops them at once.
    public func setLinger(_ linger: Duration?) throws {
        try setOption(ZMQ_LINGER, Self.milliseconds(linger), "ZMQ_LINGER")
    }

    /// The linger period in force; `nil` means "forever".
    public var linger: Duration? {
        get throws { Self.duration(try option(ZMQ_LINGER, as: Int32.self, "ZMQ_LINGER")) }
    }

    /// How long `send` waits before giving up; `nil` waits forever.
    public func setSendTimeout(_ timeout: Duration?) throws {
        try setOption(ZMQ_SNDTIMEO, Self.milliseconds(timeout), "ZMQ_SNDTIMEO")
    }

    /// ZMTP heartbeats: a ping every `interval` on each of this socket's connections, and a connection whose peer
    /// sends nothing back within `timeout` is closed (reported as `disconnected` to a monitor). A peer whose host
    /// went away without closing the connection (a power cut, a network gone) is noticed so, instead of never.
    /// The peer's ZeroMQ answers the pings itself, however long its own work on a request takes.
    public func setHeartbeat(interval: Duration, timeout: Duration) throws {
        try setOption(ZMQ_HEARTBEAT_IVL, Self.milliseconds(interval), "ZMQ_HEARTBEAT_IVL")
        try setOption(ZMQ_HEARTBEAT_TIMEOUT, Self.milliseconds(timeout), "ZMQ_HEARTBEAT_TIMEOUT")
    }

    /// How long `receive` waits before returning `nil`; `nil` waits forever.
    public func setReceiveTimeout(_ timeout: Duration?) throws {
        try setOption(ZMQ_RCVTIMEO, Self.milliseconds(timeout), "ZMQ_RCVTIMEO")
    }

    /// The receive timeout in force; `nil` means "forever".
    public var receiveTimeout: Duration? {
        get throws { Self.duration(try option(ZMQ_RCVTIMEO, as: Int32.self, "ZMQ_RCVTIMEO")) }
    }

    /// The largest frame a peer may send; a peer that sends a larger one is disconnected.
    /// `nil` removes the limit.
    public func setMaxMessageSize(_ bytes: Int?) throws {
        try setOption(ZMQ_MAXMSGSIZE, Int64(bytes ?? -1), "ZMQ_MAXMSGSIZE")
    }

    /// The frame size limit in force; `nil` means unlimited.
    public var maxMessageSize: Int? {
        get throws {
            let value = try option(ZMQ_MAXMSGSIZE, as: Int64.self, "ZMQ_MAXMSGSIZE")
            return value < 0 ? nil : Int(value)
        }
    }

    /// How many messages may queue per peer for sending before sends block or drop (ZeroMQ's default: 1,000).
    public func setSendHighWaterMark(_ messages: Int32) throws {
        try setOption(ZMQ_SNDHWM, messages, "ZMQ_SNDHWM")
    }

    /// How many received messages may queue per peer before ZeroMQ stops reading from it (ZeroMQ's default: 1,000).
    public func setReceiveHighWaterMark(_ messages: Int32) throws {
        try setOption(ZMQ_RCVHWM, messages, "ZMQ_RCVHWM")
    }

    /// How long after a connection fails or closes the socket tries again (ZeroMQ's default: 100 ms).
    public func setReconnectInterval(_ interval: Duration) throws {
        try setOption(ZMQ_RECONNECT_IVL, Int32(clamping: interval.zmqMilliseconds), "ZMQ_RECONNECT_IVL")
    }

    /// The identity a ROUTER peer sees for this socket.
    public func setRoutingID(_ id: [UInt8]) throws {
        try setOption(ZMQ_ROUTING_ID, bytes: id, "ZMQ_ROUTING_ID")
    }

    /// Queue messages only to completed connections (so a send to nobody times out).
    public func setImmediate(_ on: Bool) throws {
        try setOption(ZMQ_IMMEDIATE, Int32(on ? 1 : 0), "ZMQ_IMMEDIATE")
    }

    /// Allows IPv6 addresses such as `tcp://[::1]:5555`.
    public func setIPv6(_ on: Bool) throws {
        try setOption(ZMQ_IPV6, Int32(on ? 1 : 0), "ZMQ_IPV6")
    }

    /// On a ROUTER: make sends to an unknown peer fail with `EHOSTUNREACH` instead of vanishing.
    public func setRouterMandatory(_ on: Bool) throws {
        try setOption(ZMQ_ROUTER_MANDATORY, Int32(on ? 1 : 0), "ZMQ_ROUTER_MANDATORY")
    }

    /// On a SUB: receive messages whose first frame starts with `prefix` (empty = everything).
    public func subscribe(_ prefix: [UInt8] = []) throws {
        try setOption(ZMQ_SUBSCRIBE, bytes: prefix, "ZMQ_SUBSCRIBE")
    }

    /// On a SUB: stop receiving messages for `prefix`.
    public func unsubscribe(_ prefix: [UInt8] = []) throws {
        try setOption(ZMQ_UNSUBSCRIBE, bytes: prefix, "ZMQ_UNSUBSCRIBE")
    }
}
