import Foundation
import Logging
import Messaging
import RecipeProtocol
import Synchronization
import WebFetch
import WorkerService
import ZeroMQ

extension FuzzChecks {
    /// Messages to recipe-storage's request socket, as a stranger's client may send them: any frames, in any number,
    /// one message after another, to a real `MessageServer` over a real ZeroMQ socket (so the server loop's own work is
    /// reached: the delimiter, frame counts and limits, frame references, the remembered replies of writes, where a
    /// request runs). In the input, `\n==\n` separates messages and `\n--\n` the frames of one (a message that begins
    /// with an empty frame is a REQ-style client's, with the delimiter).
    ///
    /// Promise: each message gets exactly one reply within 10 s (while fuzzing), a reply envelope that is not `internal_error`, and the
    /// server still answers `system.health` after the last.
    public static func storageSocket(_ data: Data) {
        blocking { await Fixtures.ensure(storage.store) } // the records the seeds name, as for `storageRequest`
        converse(data, with: SocketPeer.storage)
        discardBackups()
    }

    /// Messages to recipe-worker's request socket, framed as for `storageSocket`: imports of saved pages, photos to fit
    /// and add, migration entries, batch jobs, sync requests — to a real `WorkerService` whose storage is the
    /// fuzzing process's real recipe-storage server (over `ipc://`). It fetches nothing: every host is off its
    /// allow-list. Promise: as for `storageSocket`, each message gets exactly one reply within 10 s, never
    /// `internal_error`, and health answers after.
    public static func workerSocket(_ data: Data) {
        blocking { await Fixtures.ensure(storage.store) }
        converse(data, with: SocketPeer.worker)
    }

    /// How long a conversation waits for each reply (see `SocketPeer.replyWait`).
    static let replyWait = Mutex(Duration.seconds(10))

    /// Waits up to two minutes for each reply from here on: for replaying inputs beside other work (the test suite),
    /// where a reply can wait its turn on a busy machine; a server that hangs is still caught.
    public static func patientReplies() {
        replyWait.withLock { $0 = .seconds(120) }
    }

    private static func converse(_ data: Data, with peer: SocketPeer) {
        for frames in conversation(data) {
            peer.send(frames)
            guard let reply = peer.receive() else {
                broken("no reply within \(SocketPeer.replyWait) to a message of \(frames.count) frames: \(preview(frames))")
            }
            // The server answers a REQ-style client (an empty first frame, then more) with the delimiter too.
            let delimited = frames.count >= 2 && frames[0].isEmpty
            let json = delimited ? reply.frames.dropFirst().first : reply.frames.first
            if delimited && reply.frames.first?.isEmpty != true { broken("a delimited request's reply has no delimiter: \(preview(frames))") }
            guard let json, let header = try? WireCodec.decodeReplyHeader(json, using: WireCodec.makeDecoder()) else {
                broken("the reply is not a reply envelope: \(preview(reply.frames)) (to \(preview(frames)))")
            }
            if trace { FileHandle.standardError.write(Data("\(preview(frames).prefix(100)) → \(header.error.map { "\($0.code.rawValue): \($0.message.prefix(160))" } ?? "ok")\n".utf8)) }
            if let error = header.error, error.code == .internalError {
                broken("internal_error for a client's message: \(error.message) (to \(preview(frames)))")
            }
            if let extra = peer.receive(timeout: .zero) { broken("a second reply to one message: \(preview(extra.frames)) (to \(preview(frames)))") }
        }
        peer.send([Data(#"{"v":1,"id":"fuzz-health","op":"system.health"}"#.utf8)])
        guard let health = peer.receive(), let json = health.frames.first,
              let header = try? WireCodec.decodeReplyHeader(json, using: WireCodec.makeDecoder()), header.error == nil,
              header.id == "fuzz-health" else {
            broken("the server did not answer system.health after the input")
        }
    }

    /// `RECIPES_FUZZ_TRACE=1`: each message and what its reply said, on standard error (to look at an input).
    private static let trace = ProcessInfo.processInfo.environment["RECIPES_FUZZ_TRACE"] == "1"

    /// The messages an input holds: at most `limit` (8 unless told), of at most 24 frames each (more than the server reads: 16).
    static func conversation(_ data: Data, limit: Int = 8) -> [[Data]] {
        let bytes = [UInt8](data)
        let messageMark = Array("\n==\n".utf8), frameMark = Array("\n--\n".utf8)
        func split(_ part: ArraySlice<UInt8>, on mark: [UInt8]) -> [ArraySlice<UInt8>] {
            var pieces: [ArraySlice<UInt8>] = [], start = part.startIndex, index = part.startIndex
            while index + mark.count <= part.endIndex {
                if part[index..<(index + mark.count)].elementsEqual(mark) {
                    pieces.append(part[start..<index])
                    index += mark.count
                    start = index
                } else {
                    index += 1
                }
            }
            pieces.append(part[start..<part.endIndex])
            return pieces
        }
        return split(bytes[...], on: messageMark).prefix(limit).map { message in
            split(message, on: frameMark).prefix(24).map { Data($0) }
        }
    }

    private static func preview(_ frames: [Data]) -> String {
        frames.prefix(4).map { String(decoding: $0.prefix(120), as: UTF8.self).debugDescription }.joined(separator: " | ")
            + (frames.count > 4 ? " | … (\(frames.count) frames)" : "")
    }

    /// The fuzzing process's servers — a recipe-storage and a recipe-worker that uses it, each on an `ipc://`
    /// endpoint of its own — and a DEALER socket that talks to one of them (used from the fuzzing thread only).
    final class SocketPeer: @unchecked Sendable {
        /// How long one reply is waited for: 10 s while fuzzing, where a longer wait is a finding. The test suite's
        /// replay waits longer (`FuzzChecks.patientReplies()`): the suites beside it can hold Swift's shared pool —
        /// where the servers make their large replies — for longer than that.
        static var replyWait: Duration { FuzzChecks.replyWait.withLock { $0 } }
        static let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-fuzz-sockets-\(UUID().uuidString)")
        static let context = try! Context()

        static let storage: SocketPeer = {
            try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            atexit { try? FileManager.default.removeItem(at: SocketPeer.folder) }
            let configuration = MessageServer.Configuration(endpoint: "ipc://\(folder.path)/storage", serviceName: "recipe-storage")
            let server = try! MessageServer(configuration: configuration, routes: FuzzChecks.storage.routes, logger: FuzzChecks.quiet,
                                            context: context)
            return SocketPeer(running: server)
        }()

        static let worker: SocketPeer = {
            var configuration = WorkerConfiguration()
            configuration.bindEndpoint = "ipc://\(folder.path)/worker"
            configuration.storageEndpoint = storage.endpoint
            configuration.fetchPolicy = FetchPolicy(connectTimeout: 1, readTimeout: 1, overallTimeout: 2, onlyAllowList: true)
            configuration.storageTimeout = .seconds(3)
            configuration.syncAutomatically = false
            let service = try! WorkerService(configuration: configuration, logger: FuzzChecks.quiet)
            return SocketPeer(running: service.server)
        }()

        let endpoint: String
        let socket: Socket

        private init(running server: MessageServer) {
            Task.detached { try? await server.run() }
            endpoint = FuzzChecks.blocking { (try? await server.boundEndpoint) ?? "" }
            precondition(!endpoint.isEmpty, "a fuzzing server did not bind")
            socket = try! Socket(Self.context, .dealer)
            try! socket.connect(endpoint)
        }

        func send(_ frames: [Data]) {
            guard (try? socket.send(Message(frames))) == true else { FuzzChecks.broken("the request could not be sent") }
        }

        func receive(timeout: Duration = SocketPeer.replyWait) -> Message? {
            try? socket.setReceiveTimeout(timeout)
            return try? socket.receive()
        }
    }
}
