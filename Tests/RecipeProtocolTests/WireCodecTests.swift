import Foundation
@testable import RecipeProtocol
import TestThreads
import Testing

@Suite("Request and reply envelopes", .onOwnThread)
struct WireCodecTests {
    let encoder = WireCodec.makeEncoder()
    let decoder = WireCodec.makeDecoder()

    private func reject(_ json: String) -> RejectedRequest? {
        do {
            _ = try WireCodec.decodeRequestHeader(Data(json.utf8), using: decoder)
            return nil
        } catch {
            return error
        }
    }

    @Test("a request encodes to the documented envelope and reads back")
    func requestRoundTrip() throws {
        let frame = try WireCodec.encodeRequest(id: "r-1", op: "system.echo", body: System.Echo.Request(text: "hi"), using: encoder)
        let object = try #require(try JSONSerialization.jsonObject(with: frame) as? [String: Any])
        #expect(Set(object.keys) == ["v", "id", "op", "body"])
        #expect(object["v"] as? Int == 1)
        let header = try WireCodec.decodeRequestHeader(frame, using: decoder)
        #expect(header == RequestHeader(version: 1, id: "r-1", op: "system.echo"))
        let body = try WireCodec.decodeRequestBody(System.Echo.Request.self, from: frame, using: decoder)
        #expect(body == System.Echo.Request(text: "hi"))
    }

    @Test("replies: success carries ok and body, failure carries the code and a null id when unknown")
    func replies() throws {
        let success = try WireCodec.encodeReply(id: "r-2", body: System.Echo.Response(text: "x"), using: encoder)
        let header = try WireCodec.decodeReplyHeader(success, using: decoder)
        #expect(header.id == "r-2" && header.error == nil)
        #expect(try WireCodec.decodeReplyBody(System.Echo.Response.self, from: success, using: decoder).text == "x")

        let failure = WireCodec.encodeError(id: nil, error: ServiceError(.malformedJSON, "bad"), using: encoder)
        let object = try #require(try JSONSerialization.jsonObject(with: failure) as? [String: Any])
        #expect(object["id"] is NSNull, "the id key is present and null")
        #expect(object["ok"] as? Bool == false)
        let decoded = try WireCodec.decodeReplyHeader(failure, using: decoder)
        #expect(decoded.error == ServiceError(.malformedJSON, "bad"))
    }

    @Test("an error code from a newer service is read as internal_error, keeping the code")
    func unknownErrorCode() throws {
        let frame = Data(#"{"v":1,"id":"x","ok":false,"error":{"code":"quota_exceeded","message":"too many recipes"}}"#.utf8)
        let header = try WireCodec.decodeReplyHeader(frame, using: decoder)
        #expect(header.error == ServiceError(.internalError, "too many recipes (quota_exceeded)"))
    }

    @Test("bytes that are not JSON are malformed_json")
    func notJSON() {
        #expect(reject("hello")?.error.code == .malformedJSON)
        #expect(reject("{\"v\":1,")?.error.code == .malformedJSON)
        #expect(reject(String(decoding: [0xff, 0xfe, 0x7b], as: UTF8.self))?.error.code == .malformedJSON)
    }

    struct Named: Decodable { var recipe: [String: String] }

    @Test("half a surrogate pair (text cut inside an emoji) is named with where it is; whole pairs and literal backslashes read")
    func loneSurrogate() throws {
        let envelope = { (name: String) in #"{"v":1,"id":"r-1","op":"recipe.create","body":{"recipe":{"name":"\#(name)"}}}"# }
        for (name, escape) in [(#"Tomato \ud83c"#, #"\ud83c"#), (#"\udf45 soup"#, #"\udf45"#), (#"\udf45\ud83c"#, #"\udf45"#),
                               (#"\\\ud83c"#, #"\ud83c"#), (#"\ud83c\u0041"#, #"\ud83c"#)] {
            let frame = envelope(name)
            let offset = try #require(frame.range(of: escape).map { frame.utf8.distance(from: frame.startIndex, to: $0.lowerBound) })
            // The envelope reads (its fields are whole); the body is where Foundation stops.
            #expect(reject(frame) == nil, "\(name)")
            let rejected = #expect(throws: ServiceError.self) { try WireCodec.decodeRequestBody(Named.self, from: Data(frame.utf8), using: decoder) }
            #expect(rejected?.code == .malformedJSON, "\(name)")
            #expect(rejected?.message == "frame 0 holds \(escape) at byte \(offset): half of a character written as a UTF-16 surrogate "
                    + "pair, without its other half (text cut inside an emoji or a rare letter); send whole characters, as the character "
                    + #"itself or as both halves (🍅 is \ud83c\udf45)"#, "\(name): \(rejected?.message ?? "accepted")")
        }
        // A whole pair is a character; an escaped backslash before "ud83c" is a backslash and letters.
        for name in [#"Tomato \ud83c\udf45"#, #"\\ud83c"#, #"\\\\ud83c"#, "🍅"] {
            let body = try WireCodec.decodeRequestBody(Named.self, from: Data(envelope(name).utf8), using: decoder)
            #expect(body.recipe["name"]?.isEmpty == false, "\(name)")
            #expect(LoneSurrogate.first(in: Data(envelope(name).utf8)) == nil, "\(name)")
        }
        // The envelope's own fields are read on the same terms.
        let inID = #"{"v":1,"id":"r-\ud83c","op":"recipe.create","body":{}}"#
        #expect(reject(inID)?.error.message.hasPrefix(#"frame 0 holds \ud83c at byte 15: half of a character"#) == true,
                "\(reject(inID)?.error.message ?? "accepted")")
        // Other frames that are not JSON keep the general answer.
        #expect(reject(#"{"v":1,"#)?.error.message.hasPrefix("frame 0 is not valid UTF-8 JSON") == true)
    }

    @Test("JSON that is not an envelope is invalid_envelope, naming the field")
    func notAnEnvelope() throws {
        #expect(reject("[1, 2]")?.error.code == .invalidEnvelope)
        let missingID = try #require(reject(#"{"v":1,"op":"system.echo","body":{}}"#))
        #expect(missingID.error.code == .invalidEnvelope)
        #expect(missingID.error.message.contains("id is missing"))
        let textVersion = try #require(reject(#"{"v":"1","id":"a","op":"system.echo"}"#))
        #expect(textVersion.error.code == .invalidEnvelope)
        #expect(textVersion.error.message.contains("v must be a whole number, found a string"))
        #expect(textVersion.id == "a", "the id is still echoed back")
        #expect(reject(#"{"v":1,"id":"","op":"x"}"#)?.error.code == .invalidEnvelope)
        #expect(reject(#"{"v":1,"id":"\#(String(repeating: "a", count: 129))","op":"x"}"#)?.error.code == .invalidEnvelope)
    }

    @Test("another protocol version is unsupported_version, with the id")
    func wrongVersion() throws {
        let rejected = try #require(reject(#"{"v":2,"id":"abc","op":"system.health"}"#))
        #expect(rejected.error.code == .unsupportedVersion)
        #expect(rejected.id == "abc")
        #expect(rejected.error.message.contains("version 2") && rejected.error.message.contains("version 1"))
    }

    @Test("nesting past the limit is nesting_too_deep; at the limit it is fine; brackets in strings do not count")
    func nesting() throws {
        func nested(_ depth: Int) -> String {
            // The envelope itself is one level; the body adds depth - 1 more.
            let inner = String(repeating: "[", count: depth - 2) + String(repeating: "]", count: depth - 2)
            return #"{"v":1,"id":"n","op":"system.echo","body":{"text":"x","deep":\#(inner)}}"#
        }
        #expect(reject(nested(WireProtocol.maxNestingDepth)) == nil)
        #expect(reject(nested(WireProtocol.maxNestingDepth + 1))?.error.code == .nestingTooDeep)
        #expect(reject(String(repeating: "[", count: 100_000))?.error.code == .nestingTooDeep)
        let bracketsInText = #"{"v":1,"id":"s","op":"x","body":{"text":"\#(String(repeating: "[{", count: 100))\"]"}}"#
        #expect(reject(bracketsInText) == nil)
    }

    @Test("body problems are invalid_body with the field's path and what is allowed")
    func bodyErrors() throws {
        func bodyError(_ json: String) -> ServiceError? {
            do {
                _ = try WireCodec.decodeRequestBody(System.Echo.Request.self, from: Data(json.utf8), using: decoder)
                return nil
            } catch {
                return error
            }
        }
        let wrongType = try #require(bodyError(#"{"v":1,"id":"a","op":"system.echo","body":{"text":5,"frames":[]}}"#))
        #expect(wrongType.code == .invalidBody)
        #expect(wrongType.message == "body.text must be a string, found a number")
        let missing = try #require(bodyError(#"{"v":1,"id":"a","op":"system.echo","body":{"frames":[]}}"#))
        #expect(missing.message == "body.text is missing")
        let noBody = try #require(bodyError(#"{"v":1,"id":"a","op":"system.echo"}"#))
        #expect(noBody.message.contains("text is missing"))
        let nested = try #require(bodyError(#"{"v":1,"id":"a","op":"system.echo","body":{"text":"t","frames":[{"frame":"one"}]}}"#))
        #expect(nested.message == "body.frames[0].frame must be a whole number, found a string")
        let nullText = try #require(bodyError(#"{"v":1,"id":"a","op":"system.echo","body":{"text":null,"frames":[]}}"#))
        #expect(nullText.message.contains("body.text must be a string, not null"))
    }

    @Test("a body-less operation accepts a missing body")
    func emptyBody() throws {
        let frame = Data(#"{"v":1,"id":"a","op":"system.health"}"#.utf8)
        #expect(try WireCodec.decodeRequestBody(Empty.self, from: frame, using: decoder) == Empty())
    }
}

@Suite("Error codes", .onOwnThread)
struct ErrorCodeTests {
    @Test("every error code is snake_case and documented in docs/PROTOCOL.md")
    func documented() throws {
        let docs = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/PROTOCOL.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        for code in ErrorCode.allCases {
            #expect(code.rawValue.allSatisfy { $0.isLowercase || $0 == "_" }, "\(code.rawValue)")
            #expect(text.contains("| `\(code.rawValue)` |"), "docs/PROTOCOL.md has no row for \(code.rawValue)")
        }
    }
}

@Suite("U+0000 in a request's text")
struct NULTextScanTests {
    @Test("found after an odd run of backslashes only; its path names the field, the list position, or the object of a key")
    func scan() {
        #expect(NULText.isEscaped(in: Data(#"{"a":"x\u0000y"}"#.utf8)))
        #expect(NULText.isEscaped(in: Data(#"{"a":"\\\u0000"}"#.utf8)), "an escaped backslash, then the escape")
        #expect(!NULText.isEscaped(in: Data(#"{"a":"\\u0000"}"#.utf8)), "an escaped backslash, then the letters")
        #expect(NULText.isEscaped(in: Data(#"{"a":"\u00001"}"#.utf8)), "followed by a digit")
        #expect(!NULText.isEscaped(in: Data(#"{"a":"\u0001 \u1000 \u00a0"}"#.utf8)))
        #expect(!NULText.isEscaped(in: Data(#"{"a":"\"#.utf8)), "a backslash at the end")
        #expect(!NULText.isEscaped(in: Data(#"{"a":"\u000"}"#.utf8)), "cut short")
        #expect(NULText.path(in: Data(#"{"body":{"recipe":{"ingredients":[{"text":"ok"},{"text":"a\u0000"}]}}}"#.utf8)) == "body.recipe.ingredients[1].text")
        #expect(NULText.path(in: Data(#"{"body":{"x\u0000":1}}"#.utf8)) == "a key in body")
        #expect(NULText.path(in: Data(#""\u0000""#.utf8)) == "the top level")
        #expect(NULText.path(in: Data(#"{"body":{"name":"fine"}}"#.utf8)) == nil)
    }
}
