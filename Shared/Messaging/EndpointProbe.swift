import Foundation
import ZeroMQ

/// Whether something accepts connections at a ZeroMQ endpoint, found out in a moment: a
/// refused connection is reported by libzmq at once, where a request would wait for its
/// whole timeout. For deciding whether an optional service (the worker, for the CLI's
/// photos) is there at all; it says nothing of what answers. Names are resolved by libzmq,
/// as for every connection between our processes.
public enum EndpointProbe {
    public static func accepts(_ endpoint: String, within limit: Duration = .milliseconds(500)) -> Bool {
        guard let socket = try? Socket(Context.shared(), .dealer) else { return false }
        defer { socket.close() }
        try? socket.setLinger(.zero)
        guard let events = try? socket.monitor([.connected, .connectRetried]) else { return false }
        defer { events.close() }
        guard (try? socket.connect(endpoint)) != nil else { return false }
        let poller = Poller()
        guard let index = try? poller.add(events) else { return false }
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            guard let ready = try? poller.poll(timeout: deadline - ContinuousClock.now), ready > 0,
                  poller.events(at: index).contains(.readable) else { return false }
            while let event = try? events.readEvent() {
                if event.kind == .connected { return true }
                if event.kind == .connectRetried { return false }
            }
        }
        return false
    }
}
