import CZeroMQ
import Foundation

/// The baseline: a REQ/REP echo written straight against libzmq's C API, with
/// no wrapper, no JSON and no task hops — the floor our protocol is compared to.
public enum BareEcho {
    /// Round-trip times of `count` echoes of `payload` after `warmup` untimed ones.
    ///
    /// Each side has its own context (its own libzmq I/O thread), as the client and
    /// the service do in separate processes, and as the envelope measurement does.
    public static func measure(endpoint: String, payload: Data, count: Int, warmup: Int) throws -> [Duration] {
        guard let serverContext = zmq_ctx_new(), let clientContext = zmq_ctx_new() else { throw BenchmarkError("zmq_ctx_new failed") }
        defer {
            zmq_ctx_term(clientContext)
            zmq_ctx_term(serverContext)
        }
        guard let reply = zmq_socket(serverContext, ZMQ_REP), let request = zmq_socket(clientContext, ZMQ_REQ) else {
            throw BenchmarkError("zmq_socket failed")
        }
        var zero: Int32 = 0
        zmq_setsockopt(reply, ZMQ_LINGER, &zero, 4)
        zmq_setsockopt(request, ZMQ_LINGER, &zero, 4)
        guard zmq_bind(reply, endpoint) == 0 else { throw BenchmarkError("bind \(endpoint): \(String(cString: zmq_strerror(zmq_errno())))") }
        var buffer = [UInt8](repeating: 0, count: 1_024)
        var size = buffer.count
        zmq_getsockopt(reply, ZMQ_LAST_ENDPOINT, &buffer, &size)
        let bound = String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
        guard zmq_connect(request, bound) == 0 else { throw BenchmarkError("connect \(bound) failed") }

        let total = warmup + count
        // The REP socket moves to the echo thread; starting a thread is a full memory barrier.
        let replyAddress = Int(bitPattern: reply)
        let server = Thread {
            let reply = UnsafeMutableRawPointer(bitPattern: replyAddress)
            var message = zmq_msg_t()
            zmq_msg_init(&message)
            for _ in 0..<total {
                guard zmq_msg_recv(&message, reply, 0) >= 0, zmq_msg_send(&message, reply, 0) >= 0 else { break }
            }
            zmq_msg_close(&message)
        }
        server.start()

        var receive = [UInt8](repeating: 0, count: payload.count + 1)
        var samples: [Duration] = []
        samples.reserveCapacity(count)
        let clock = ContinuousClock()
        for index in 0..<total {
            let start = clock.now
            let sent = payload.withUnsafeBytes { zmq_send(request, $0.baseAddress, $0.count, 0) }
            let got = zmq_recv(request, &receive, receive.count, 0)
            let elapsed = clock.now - start
            guard sent == payload.count, got == payload.count else { throw BenchmarkError("bare echo failed at \(index)") }
            if index >= warmup { samples.append(elapsed) }
        }
        zmq_close(request)
        zmq_close(reply)
        return samples
    }
}

/// A benchmark could not run.
public struct BenchmarkError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
