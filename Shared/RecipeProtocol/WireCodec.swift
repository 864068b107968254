import Foundation

/// The first three fields of a request envelope: enough to route it.
public struct RequestHeader: Sendable, Equatable {
    /// The protocol version the client speaks.
    public var version: Int
    /// The client's request id; a retried request keeps it.
    public var id: String
    /// The operation's wire name.
    public var op: String
}

/// A request refused before any handler ran: the id (when it could be read) and why.
public struct RejectedRequest: Error, Sendable, Equatable {
    /// The request id, or `nil` when frame 0 did not yield one.
    public var id: String?
    /// Why the request was refused.
    public var error: ServiceError
}

/// The reply fields every reply has.
public struct ReplyHeader: Sendable, Equatable {
    /// The protocol version of the reply.
    public var version: Int
    /// The id of the request this answers (`nil` when the request's id was unreadable).
    public var id: String?
    /// The error, for a failed request; `nil` for success.
    public var error: ServiceError?
}

/// What encodes a frame: `WireJSONEncoder` on the wire, Foundation's `JSONEncoder` in tests and files.
public protocol WireEncoding {
    func encode<T: Encodable>(_ value: T) throws -> Data
}

/// What decodes a frame: `WireJSONDecoder` on the wire, Foundation's `JSONDecoder` in tests and files.
public protocol WireDecoding {
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension JSONEncoder: WireEncoding {}
extension JSONDecoder: WireDecoding {}
extension WireJSONEncoder: WireEncoding {}
extension WireJSONDecoder: WireDecoding {}

/// Encoding and decoding of the JSON frame of requests and replies (docs/PROTOCOL.md).
public enum WireCodec {
    /// Foundation's encoder set up as the wire's: ISO 8601 dates in UTC with milliseconds, unescaped
    /// slashes. `WireJSONEncoder` writes the same JSON faster; this one is for files and pretty output.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(WireDates.withMilliseconds))
        }
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }

    /// Foundation's decoder set up as the wire's: ISO 8601 dates, with or without fractional seconds.
    /// `WireJSONDecoder` reads the same JSON faster (and leaves errors and edge cases to this one).
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = try? WireDates.withMilliseconds.parse(text) { return date }
            if let date = try? WireDates.wholeSeconds.parse(text) { return date }
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text)\" is not an ISO 8601 date-time such as 2026-11-21T19:32:53Z")
        }
        return decoder
    }

    // MARK: Requests

    /// Frame 0 of a request.
    public static func encodeRequest<Body: Encodable>(id: String, op: String, body: Body, using encoder: some WireEncoding) throws -> Data {
        try encoder.encode(RequestEnvelope(v: WireProtocol.version, id: id, op: op, body: body))
    }

    /// Reads and checks the envelope of a request: JSON, nesting, fields, version.
    /// The common case in one pass over the bytes; anything unusual (and every error) takes the full path.
    public static func decodeRequestHeader(_ frame: Data, using decoder: some WireDecoding) throws(RejectedRequest) -> RequestHeader {
        if let header = scanRequestHeader(frame), header.version == WireProtocol.version { return header }
        return try decodeRequestHeaderFully(frame, using: decoder)
    }

    /// The fast path alone: the envelope's fields when the frame is well-formed JSON within the nesting
    /// limit and `v`, `id` and `op` are plain values given once; `nil` for anything else (no reason given).
    public static func scanRequestHeader(_ frame: Data) -> RequestHeader? {
        EnvelopeScanner.header(of: frame, maxDepth: WireProtocol.maxNestingDepth)
    }

    /// The full path alone: every check with its reason (Foundation's decoder).
    public static func decodeRequestHeaderFully(_ frame: Data, using decoder: some WireDecoding) throws(RejectedRequest) -> RequestHeader {
        if JSONNesting.exceeds(WireProtocol.maxNestingDepth, in: frame) {
            throw RejectedRequest(id: nil, error: ServiceError(.nestingTooDeep,
                "the request nests objects or arrays more than \(WireProtocol.maxNestingDepth) levels deep; that is the most allowed"))
        }
        let header: EnvelopeHeader
        do {
            header = try decoder.decode(EnvelopeHeader.self, from: frame)
        } catch let error as DecodingError {
            if error.isNotJSON {
                throw RejectedRequest(id: nil, error: ServiceError(.malformedJSON, notJSON(frame)))
            }
            let id = (try? decoder.decode(IDProbe.self, from: frame))?.id
            throw RejectedRequest(id: id, error: ServiceError(.invalidEnvelope,
                "the request envelope is not valid: \(error.wireDescription); it must be {\"v\": number, \"id\": string, \"op\": string, \"body\": object}"))
        } catch {
            throw RejectedRequest(id: nil, error: ServiceError(.malformedJSON, "frame 0 could not be read as JSON"))
        }
        guard (1...WireProtocol.maxRequestIDLength).contains(header.id.utf8.count) else {
            throw RejectedRequest(id: nil, error: ServiceError(.invalidEnvelope,
                "id must be 1 to \(WireProtocol.maxRequestIDLength) characters (a UUID is best); it has \(header.id.utf8.count)"))
        }
        guard header.v == WireProtocol.version else {
            throw RejectedRequest(id: header.id, error: ServiceError(.unsupportedVersion,
                "protocol version \(header.v) is not supported; this service speaks version \(WireProtocol.version)"))
        }
        return RequestHeader(version: header.v, id: header.id, op: header.op)
    }

    /// Why frame 0, which Foundation did not read as JSON, is refused: half a surrogate pair named where it is, or
    /// the envelope's shape.
    static func notJSON(_ frame: Data) -> String {
        LoneSurrogate.problem(in: frame)
            ?? "frame 0 is not valid UTF-8 JSON; it must be a JSON object {\"v\", \"id\", \"op\", \"body\"}"
    }

    /// Reads the body of a request as `Body`. A missing `body` reads as `{}`.
    public static func decodeRequestBody<Body: Decodable>(_: Body.Type, from frame: Data, using decoder: some WireDecoding) throws(ServiceError) -> Body {
        if NULText.isEscaped(in: frame), let path = NULText.path(in: frame) {
            throw ServiceError(.invalidBody, "\(path) holds the NUL character (\\u0000), which no text may contain; remove it")
        }
        do {
            if let body = try decoder.decode(BodyEnvelope<Body>.self, from: frame).body { return body }
            return try decoder.decode(Body.self, from: Data("{}".utf8))
        } catch let error as DecodingError {
            if error.isNotJSON {
                // Only reached when the envelope was read on the fast path: the same answer the full path gives.
                throw ServiceError(.malformedJSON, notJSON(frame))
            }
            var message = error.wireDescription
            if !message.hasPrefix("body") { message = "body: " + message }
            throw ServiceError(.invalidBody, message)
        } catch {
            throw ServiceError(.invalidBody, "the body could not be read")
        }
    }

    // MARK: Replies

    /// Frame 0 of a successful reply.
    public static func encodeReply<Body: Encodable>(id: String, body: Body, using encoder: some WireEncoding) throws -> Data {
        try encoder.encode(SuccessEnvelope(v: WireProtocol.version, id: id, body: body))
    }

    /// Frame 0 of a failed reply. Never fails: the error is plain text and a code.
    public static func encodeError(id: String?, error: ServiceError, using encoder: some WireEncoding) -> Data {
        (try? encoder.encode(ErrorEnvelope(v: WireProtocol.version, id: id, error: error)))
            ?? Data(#"{"v":1,"id":null,"ok":false,"error":{"code":"internal_error","message":"the reply could not be encoded"}}"#.utf8)
    }

    /// Reads the fields every reply has.
    public static func decodeReplyHeader(_ frame: Data, using decoder: some WireDecoding) throws -> ReplyHeader {
        let header = try decoder.decode(ReplyEnvelopeHeader.self, from: frame)
        return ReplyHeader(version: header.v, id: header.id, error: header.ok ? nil : (header.error ?? ServiceError(.internalError, "the service failed without saying why")))
    }

    /// Reads a whole reply in one pass: its header and, for a success, its body as `Body`.
    public static func decodeReply<Body: Decodable>(_: Body.Type, from frame: Data, using decoder: some WireDecoding) throws -> (header: ReplyHeader, body: Body?) {
        let reply = try decoder.decode(WholeReply<Body>.self, from: frame)
        let error = reply.ok ? nil : (reply.error ?? ServiceError(.internalError, "the service failed without saying why"))
        var body = reply.body
        if reply.ok && body == nil { body = try decoder.decode(Body.self, from: Data("{}".utf8)) }
        return (ReplyHeader(version: reply.v, id: reply.id, error: error), body)
    }

    /// Reads the body of a successful reply as `Body`.
    public static func decodeReplyBody<Body: Decodable>(_: Body.Type, from frame: Data, using decoder: some WireDecoding) throws -> Body {
        if let body = try decoder.decode(BodyEnvelope<Body>.self, from: frame).body { return body }
        return try decoder.decode(Body.self, from: Data("{}".utf8))
    }
}

/// The date formats of the wire.
enum WireDates {
    static let withMilliseconds = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
    static let wholeSeconds = Date.ISO8601FormatStyle(timeZone: .gmt)
}

// MARK: - Wire shapes

private struct EnvelopeHeader: Decodable {
    var v: Int
    var id: String
    var op: String
}

private struct IDProbe: Decodable {
    var id: String
}

private struct BodyEnvelope<Body: Decodable>: Decodable {
    var body: Body?
}

private struct RequestEnvelope<Body: Encodable>: Encodable {
    var v: Int
    var id: String
    var op: String
    var body: Body
}

private struct SuccessEnvelope<Body: Encodable>: Encodable {
    var v: Int
    var id: String
    var ok = true
    var body: Body
}

private struct ErrorEnvelope: Encodable {
    var v: Int
    var id: String?
    var error: ServiceError

    enum CodingKeys: String, CodingKey { case v, id, ok, error }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(v, forKey: .v)
        try container.encode(id, forKey: .id) // null when unknown, never left out
        try container.encode(false, forKey: .ok)
        try container.encode(error, forKey: .error)
    }
}

private struct WholeReply<Body: Decodable>: Decodable {
    var v: Int
    var id: String?
    var ok: Bool
    var body: Body?
    var error: ServiceError?
}

private struct ReplyEnvelopeHeader: Decodable {
    var v: Int
    var id: String?
    var ok: Bool
    var error: ServiceError?
}
