import Foundation
@testable import RecipeProtocol
import TestThreads
import Testing

/// The envelope's fast path (`WireCodec.scanRequestHeader`) may only accept what the full path
/// (Foundation's decoder) reads the same way; everything else must fall through to it.
@Suite("The envelope's one-pass reader", .onOwnThread)
struct EnvelopeScannerTests {
    let decoder = WireCodec.makeDecoder()

    /// Foundation's scanner checks the whole document's syntax before it decodes a field, so the full path refusing
    /// is the oracle (a frame with another version must be refused for that reason alone).
    private func agrees(_ frame: Data) -> Bool {
        guard let fast = WireCodec.scanRequestHeader(frame) else { return true }
        do {
            return try WireCodec.decodeRequestHeaderFully(frame, using: decoder) == fast
        } catch {
            return fast.version != WireProtocol.version && error.error.code == .unsupportedVersion
        }
    }

    @Test("reads the common envelope, in any key order, with any body")
    func reads() {
        let cases = [
            #"{"v":1,"id":"r-1","op":"recipe.get","body":{"id":"x"}}"#,
            #" { "body" : [1, 2.5e-3, -0, true, false, null, "\u00e9\n"], "op":"a.b", "id":"é☃😀", "v" : 1 } "#,
            #"{"v":1,"id":"r","op":"system.echo"}"#,
            #"{"v":1,"id":"r","op":"cooklog.add","body":{"ratinngs":1e+700}}"#, // valid JSON; the number is the body's business
        ]
        for text in cases {
            let header = WireCodec.scanRequestHeader(Data(text.utf8))
            #expect(header != nil, "\(text)")
            #expect(agrees(Data(text.utf8)), "\(text)")
        }
        #expect(WireCodec.scanRequestHeader(Data(cases[1].utf8))?.id == "é☃😀")
    }

    @Test("leaves everything unusual to the full path", arguments: [
        #"{"v":1,"id":"r","op":"a","body":{}"#,              // unclosed
        #"{"v":1,"id":"r","op":"a"} x"#,                      // trailing bytes
        #"{"v":1.0,"id":"r","op":"a"}"#,                      // not a plain integer
        #"{"v":1,"id":"r\u0041","op":"a"}"#,                  // escape in the id
        #"{"v":1,"id":"r","id":"s","op":"a"}"#,               // the id twice
        #"{"v":1,"id":"","op":"a"}"#,                         // empty id
        #"{"v":1,"id":"r","op":"a","body":"\ud800"}"#,        // a lone surrogate
        #"{"v":1,"id":"r","op":"a","body":[01]}"#,            // leading zero
        #"{"v":1,"id":"r","op":"a","body":[1,]}"#,            // trailing comma
        "{\"v\":1,\"id\":\"r\",\"op\":\"a\",\"body\":\"tab\there\"}",  // raw control character
        #"{"v":1,"id":"r","op":"a","body":tru}"#,             // broken literal
        #"["v",1]"#, "", "{", "\u{FEFF}{\"v\":1,\"id\":\"r\",\"op\":\"a\"}",
    ])
    func fallsThrough(_ text: String) {
        #expect(WireCodec.scanRequestHeader(Data(text.utf8)) == nil)
    }

    @Test("nesting: up to the limit is read, one more level is left to the full path")
    func nesting() {
        let limit = WireProtocol.maxNestingDepth
        func frame(depth: Int) -> Data {
            // The envelope itself is one level; the body adds the rest.
            Data((#"{"v":1,"id":"r","op":"a","body":"# + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}").utf8)
        }
        #expect(WireCodec.scanRequestHeader(frame(depth: limit)) != nil)
        #expect(WireCodec.scanRequestHeader(frame(depth: limit + 1)) == nil)
        #expect((try? WireCodec.decodeRequestHeader(frame(depth: limit + 1), using: decoder)) == nil)
    }

    @Test("invalid UTF-8 inside a string is left to the full path")
    func badUTF8() {
        for bytes: [UInt8] in [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0xFF]] {
            let frame = Data(#"{"v":1,"id":"r","op":"a","body":""#.utf8) + Data(bytes) + Data(#""}"#.utf8)
            #expect(WireCodec.scanRequestHeader(frame) == nil, "\(bytes)")
        }
    }

    @Test("10,000 mutated envelopes: whatever the fast path accepts, the full path reads the same")
    func mutations() {
        var generator = SystemRandomNumberGenerator()
        let seeds = [
            #"{"v":1,"id":"0d5d8c4e-5b55","op":"recipe.create","body":{"id":"A","recipe":{"name":"Soup","servings":2.5,"keywords":["a","b"],"nutrition":null,"isFavorite":true}}}"#,
            #"{"body":{"text":"h\u00e9llo \"x\" \\ /"},"op":"system.echo","id":"é","v":1}"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[],:"\ 0123456789.eE+-truefalsnvidop"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xA9, 0xED, 0xF0, 0xFF]
        for _ in 0..<10_000 {
            var bytes = seeds.randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[index] = alphabet.randomElement(using: &generator)!
                case 1: bytes.insert(alphabet.randomElement(using: &generator)!, at: index)
                default: if bytes.count > 1 { bytes.remove(at: index) }
                }
            }
            let frame = Data(bytes)
            #expect(agrees(frame), "\(String(decoding: frame, as: UTF8.self))")
        }
    }
}
