import Foundation
import Logging
import RecipeProtocol

/// What a handler knows about the request besides its body.
public struct RequestContext: Sendable {
    /// The client's request id.
    public let requestID: String
    /// The operation's wire name.
    public let op: String
    /// The binary frames after the JSON: `frames[0]` is frame 1.
    public let frames: [Data]
    /// The service's logger; `logger` adds the request's tags to it when a handler logs.
    private let serviceLogger: Logger

    /// A logger tagged with the request id and operation (made when asked for: most requests log nothing).
    public var logger: Logger {
        var logger = serviceLogger
        logger[metadataKey: "request"] = "\(requestID)"
        logger[metadataKey: "op"] = "\(op)"
        return logger
    }

    /// A context for a request (the server builds these; tests may too). `logger` is the service's.
    public init(requestID: String, op: String, frames: [Data], logger: Logger) {
        self.requestID = requestID
        self.op = op
        self.frames = frames
        self.serviceLogger = logger
    }

    /// The bytes of the frame `reference` points to, or `invalid_body` saying which frames exist.
    public func frame(_ reference: FrameReference) throws(ServiceError) -> Data {
        guard let index = reference.index(among: frames.count) else {
            let available = frames.isEmpty ? "the message has no binary frames"
                : "the message has binary frames 1 to \(frames.count)"
            throw ServiceError(.invalidBody, "the body refers to frame \(reference.frame), but \(available)")
        }
        return frames[index]
    }
}

/// A reply body with binary frames to send after it.
public struct Reply<Body: Sendable>: Sendable {
    /// The JSON body.
    public var body: Body
    /// Frames 1…n of the reply.
    public var frames: [Data]

    /// A reply of `body` followed by `frames`.
    public init(_ body: Body, frames: [Data] = []) {
        self.body = body
        self.frames = frames
    }
}
