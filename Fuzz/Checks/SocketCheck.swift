import Foundation
import Logging
import Messaging
import RecipeProtocol
import ZeroMQ

extension FuzzChecks {
    /// Messages to recipe-storage's request socket, as a stranger's client may send them: any frames, in any number,
    /// one message after another, to a real `MessageServer` over a real ZeroMQ socket (so the server loop's own work is
    /// reached: the delimiter, frame counts and limits, frame references, the remembered replies of writes, where a
    /// request runs). In the input, `\n==\n` separates messages and `\n--\n` the frames of one (a message that begins
    /// with an empty frame is a REQ-style client's, with the delimiter).
    ///
    /// Promise: each message gets exactly one reply within 5 s, a reply envelope that is not `internal_error`, and the
    /// server still answers `system.health` after the last.
    public static func storageSocket(_ data: Data) {
        let peer = SocketPeer.shared
        for frames in conversation(data) {
            peer.send(frames)
            guard let reply = peer.receive() else {
                broken("no reply within 5 s to a message of \(frames.count) frames: \(preview(frames))")
            }
            // The server answers a REQ-style client (an empty first frame, then more) with the delimiter too.
            let delimited = frames.count >= 2 && frames[0].isEmpty
            let json = delimited ? reply.frames.dropFirst().first : reply.frames.first
            if delimited && reply.frames.first?.isEmpty != true { broken("a delimited request's reply has no delimiter: \(preview(frames))") }
            guard let json, let header = try? WireCodec.decodeReplyHeader(json, using: WireCodec.makeDecoder()) else {
                broken("the reply is not a reply envelope: \(preview(reply.frames)) (to \(preview(frames)))")
            }
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

    /// The messages an input holds: at most 8, of at most 24 frames each (more than the server reads: 16).
    static func conversation(_ data: Data) -> [[Data]] {
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
        return split(bytes[...], on: messageMark).prefix(8).map { message in
            split(message, on: frameMark).prefix(24).map { Data($0) }
        }
    }

    private static func preview(_ frames: [Data]) -> String {
        frames.prefix(4).map { String(decoding: $0.prefix(120), as: UTF8.self).debugDescription }.joined(separator: " | ")
            + (frames.count > 4 ? " | … (\(frames.count) frames)" : "")
    }

    /// One storage server for the fuzzing process, served over `inproc://`, and the DEALER socket that talks to it
    /// (used from the fuzzing thread only).
    final class SocketPeer: @unchecked Sendable {
        static let shared = SocketPeer()
        let server: MessageServer
        let socket: Socket

        private init() {
            let context = try! Context()
            let configuration = MessageServer.Configuration(endpoint: "inproc://rv-fuzz-storage", serviceName: "recipe-storage")
            let server = try! MessageServer(configuration: configuration, routes: FuzzChecks.storage.routes, logger: FuzzChecks.quiet,
                                            context: context)
            Task.detached { try? await server.run() }
            let endpoint = FuzzChecks.blocking { (try? await server.boundEndpoint) ?? "" }
            precondition(!endpoint.isEmpty, "the fuzzing storage server did not bind")
            socket = try! Socket(context, .dealer)
            try! socket.connect(endpoint)
            self.server = server
        }

        func send(_ frames: [Data]) {
            guard (try? socket.send(Message(frames))) == true else { FuzzChecks.broken("the request could not be sent") }
        }

        func receive(timeout: Duration = .seconds(5)) -> Message? {
            try? socket.setReceiveTimeout(timeout)
            return try? socket.receive()
        }
    }
}
