import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A small real HTTP/1.1 server on 127.0.0.1 for the worker's tests: saved recipe
/// pages from a folder, plus the awkward servers the worker must survive (slow,
/// huge, redirecting, bot walls). It counts connections and remembers request
/// paths, so a test can prove a refused address was never connected to.
public final class TestHTTPServer: Sendable {
    /// What the server answers for one path.
    public enum Response: Sendable {
        /// `status` with `body` and headers.
        case fixed(status: Int, body: [UInt8], headers: [(String, String)])
        /// A redirect to `location`.
        case redirect(String, status: Int = 302)
        /// `total` bytes, one per `interval`, headers first: a server that never quite finishes.
        case drip(total: Int, interval: TimeAmount)
        /// `total` bytes of HTML-ish filler, in 64 KB chunks, with or without a Content-Length.
        case stream(total: Int, declareLength: Bool)
        /// `response` after `delay`.
        indirect case delayed(TimeAmount, Response)
        /// `response` once `gate` is opened (at once if it already is): a fetch a test holds for as long as it needs,
        /// however slow or fast the machine.
        indirect case held(Gate, Response)

        public static func html(_ text: String, status: Int = 200) -> Response {
            .fixed(status: status, body: Array(text.utf8), headers: [("Content-Type", "text/html; charset=utf-8")])
        }

        public static func bytes(_ bytes: [UInt8], contentType: String) -> Response {
            .fixed(status: 200, body: bytes, headers: [("Content-Type", contentType)])
        }
    }

    /// The port it listens on (127.0.0.1).
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    private let channel: any Channel
    private let state: Mutex<State>
    private let pagesFolder: URL?

    struct State {
        var routes: [String: Response] = [:]
        var connections = 0
        var requests: [String] = []
    }

    /// Starts a server; `/pages/<relative path>` serves files under `pagesFolder`.
    public init(pagesFolder: URL? = nil) async throws {
        let state = Mutex(State())
        self.state = state
        self.pagesFolder = pagesFolder
        let box = ServerBox()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(box: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
        box.server.withLock { $0 = WeakServer(server: self) }
    }

    /// Serves `response` at `path` (exact path, query ignored).
    public func route(_ path: String, _ response: Response) {
        state.withLock { $0.routes[path] = response }
    }

    /// Connections accepted so far.
    public var connectionCount: Int { state.withLock { $0.connections } }
    /// Request paths seen so far, in order.
    public var requestPaths: [String] { state.withLock { $0.requests } }

    /// How many requests asked for `path`.
    public func requests(to path: String) -> Int { state.withLock { $0.requests.filter { $0 == path }.count } }

    public func shutdown() async {
        try? await channel.close()
    }

    func connected() { state.withLock { $0.connections += 1 } }

    func response(for uri: String) -> Response {
        let path = String(uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
        let route = state.withLock { state -> Response? in
            state.requests.append(path)
            return state.routes[path]
        }
        if let route { return route }
        if path.hasPrefix("/pages/"), let pagesFolder {
            let relative = String(path.dropFirst("/pages/".count)).removingPercentEncoding ?? ""
            guard !relative.split(separator: "/").contains("..") else { return .html("no", status: 403) }
            let file = pagesFolder.appendingPathComponent(relative)
            if let data = FileManager.default.contents(atPath: file.path) {
                let type = file.pathExtension == "json" ? "application/ld+json" : "text/html; charset=utf-8"
                return .fixed(status: 200, body: Array(data), headers: [("Content-Type", type)])
            }
        }
        if path.hasPrefix("/redirect/"), let count = Int(path.dropFirst("/redirect/".count)) {
            return count == 0 ? .html("<html><body>arrived</body></html>") : .redirect("/redirect/\(count - 1)")
        }
        return .html("<html><body>not found</body></html>", status: 404)
    }
}

/// Holds `.held` responses until a test opens it; opened, it stays open.
public final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiting: [@Sendable () -> Void])>((false, []))

    public init() {}

    /// Runs `send` now if the gate is open, else when it opens.
    func whenOpen(_ send: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.open { return true }
            state.waiting.append(send)
            return false
        }
        if now { send() }
    }

    /// Lets every held response go, and every later one at once.
    public func open() {
        let waiting = state.withLock { state -> [@Sendable () -> Void] in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for send in waiting { send() }
    }
}

/// The server as the handlers see it (set once the channel is bound).
final class ServerBox: Sendable {
    let server = Mutex<WeakServer?>(nil)
    var current: TestHTTPServer? { server.withLock { $0?.server } }
}

struct WeakServer: @unchecked Sendable {
    weak var server: TestHTTPServer?
}

/// One connection: reads a request, writes the route's answer.
private final class Handler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let box: ServerBox
    private var uri = "/"

    init(box: ServerBox) { self.box = box }

    func channelActive(context: ChannelHandlerContext) {
        box.current?.connected()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): uri = head.uri
        case .body: break
        case .end:
            let response = box.current?.response(for: uri) ?? .html("gone", status: 503)
            Self.send(response, on: NIOLoopBound(context, eventLoop: context.eventLoop))
        }
    }

    private static func head(_ status: Int, _ headers: [(String, String)]) -> HTTPServerResponsePart {
        var fields = HTTPHeaders(headers)
        if !fields.contains(name: "content-length") && !fields.contains(name: "transfer-encoding") {
            fields.add(name: "Transfer-Encoding", value: "chunked")
        }
        return .head(HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: fields))
    }

    private static func send(_ response: TestHTTPServer.Response, on bound: NIOLoopBound<ChannelHandlerContext>) {
        let context = bound.value
        switch response {
        case .fixed(let status, let body, let headers):
            context.write(NIOAny(head(status, headers + [("Content-Length", "\(body.count)")])), promise: nil)
            context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
        case .redirect(let location, let status):
            context.write(NIOAny(head(status, [("Location", location), ("Content-Length", "0")])), promise: nil)
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
        case .drip(let total, let interval):
            context.writeAndFlush(NIOAny(head(200, [("Content-Type", "text/html"), ("Content-Length", "\(total)")])), promise: nil)
            drip(remaining: total, interval: interval, on: bound)
        case .stream(let total, let declareLength):
            let headers = [("Content-Type", "text/html")] + (declareLength ? [("Content-Length", "\(total)")] : [])
            context.write(NIOAny(head(200, headers)), promise: nil)
            stream(remaining: total, on: bound)
        case .delayed(let delay, let inner):
            context.eventLoop.scheduleTask(in: delay) { send(inner, on: bound) }
        case .held(let gate, let inner):
            let loop = context.eventLoop
            gate.whenOpen { loop.execute { send(inner, on: bound) } }
        }
    }

    private static func drip(remaining: Int, interval: TimeAmount, on bound: NIOLoopBound<ChannelHandlerContext>) {
        let context = bound.value
        guard remaining > 0, context.channel.isActive else {
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
            return
        }
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: "<")))), promise: nil)
        context.eventLoop.scheduleTask(in: interval) { drip(remaining: remaining - 1, interval: interval, on: bound) }
    }

    private static func stream(remaining: Int, on bound: NIOLoopBound<ChannelHandlerContext>) {
        let context = bound.value
        guard remaining > 0 else {
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
            return
        }
        let size = min(remaining, 64 * 1024)
        let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: size)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(chunk)))).whenComplete { result in
            guard case .success = result else { return }
            stream(remaining: remaining - size, on: bound)
        }
    }
}
