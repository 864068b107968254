import Foundation
import RecipeModel
@testable import RecipeProtocol
import TestRandom
import TestThreads
import Testing

/// `WireJSONEncoder` and `WireJSONDecoder` are held to Foundation's coders set up as the wire's
/// (`WireCodec.makeEncoder()`/`makeDecoder()`): the same JSON value written for every value, the same
/// value read from every document the fast path accepts, and everything else left to Foundation.
@Suite("The wire's own JSON coder", .onOwnThread)
struct WireJSONTests {
    let encoder = WireJSONEncoder()
    let decoder = WireJSONDecoder()
    let foundationEncoder = WireCodec.makeEncoder()
    let foundationDecoder = WireCodec.makeDecoder()

    // MARK: Writing

    @Test("writes the JSON Foundation writes for random recipes, drafts and sync records (keys in any order)")
    func writesWhatFoundationWrites() throws {
        var random = Generator(seed: 0x5EED_0001)
        for _ in 0..<400 {
            let recipe = random.recipe()
            try expectSameJSON(recipe)
            try expectSameJSON(RecipeDraft(recipe))
            try expectSameJSON(random.syncRecord())
            try expectSameJSON([random.text(): random.jsonValue(depth: 0)])
            try expectSameJSON(random.text())
        }
    }

    @Test("writes envelopes as Foundation does: requests, replies and errors")
    func writesEnvelopes() throws {
        var random = Generator(seed: 0x5EED_0002)
        for _ in 0..<100 {
            let recipe = random.recipe()
            let id = random.text()
            let ours = try WireCodec.encodeReply(id: id, body: recipe, using: encoder)
            let theirs = try WireCodec.encodeReply(id: id, body: recipe, using: foundationEncoder)
            #expect(Self.canonical(ours) == Self.canonical(theirs))
            let error = ServiceError(.invalidBody, random.text())
            #expect(Self.canonical(WireCodec.encodeError(id: nil, error: error, using: encoder))
                == Self.canonical(WireCodec.encodeError(id: nil, error: error, using: foundationEncoder)))
            let request = try WireCodec.encodeRequest(id: id, op: "recipe.create", body: RecipeDraft(recipe), using: encoder)
            #expect(Self.canonical(request) == Self.canonical(try WireCodec.encodeRequest(
                id: id, op: "recipe.create", body: RecipeDraft(recipe), using: foundationEncoder)))
        }
    }

    @Test("numbers: the shortest text that reads back, without a trailing .0, as Foundation writes them")
    func numbers() throws {
        var random = Generator(seed: 0x5EED_0003)
        var values: [Double] = [0, -0.0, 1, -1, 0.1, 1e15, 1e16, 1e20, 1e-5, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 123_456.789]
        for _ in 0..<5_000 {
            let bits = UInt64.random(in: .min ... .max, using: &random)
            let value = Double(bitPattern: bits)
            if value.isFinite { values.append(value) }
        }
        let ours = try #require(encoder.fastEncode(values))
        #expect(String(decoding: ours, as: UTF8.self) == String(decoding: try foundationEncoder.encode(values), as: UTF8.self))
        let integers: [Int64] = [0, 9, 10, -1, .min, .max]
        #expect(try encoder.encode(integers) == foundationEncoder.encode(integers))
    }

    @Test("strings: quotes, backslashes and control characters escaped as Foundation does; slashes, DEL and U+2028 not")
    func strings() throws {
        let texts = ["", "a/b", "\"\\", "\u{0}\u{1}\u{8}\u{9}\u{A}\u{C}\u{D}\u{1F}\u{7F}", "é☃😀\u{2028}\u{FEFF}", String(repeating: "x\n", count: 300)]
        for text in texts {
            #expect(try encoder.encode([text]) == foundationEncoder.encode([text]), "\(text.debugDescription)")
        }
    }

    @Test("what it cannot stream is written by Foundation, with Foundation's errors")
    func leavesTheUnusualToFoundation() throws {
        #expect(encoder.fastEncode([Float(0.1)]) == nil)
        #expect(try encoder.encode([Float(0.1)]) == foundationEncoder.encode([Float(0.1)]))
        #expect(encoder.fastEncode([Double.nan]) == nil)
        #expect(throws: EncodingError.self) { try encoder.encode([Double.infinity]) }
        #expect(encoder.fastEncode(Interleaved()) == nil) // writes to a container after opening a later one
        #expect(Self.canonical(try encoder.encode(Interleaved())) == Self.canonical(try foundationEncoder.encode(Interleaved())))
        #expect(Self.canonical(try encoder.encode(Empty())) == "{}")
    }

    // MARK: Reading

    @Test("reads random recipes, drafts and sync records as Foundation does, in one pass")
    func readsWhatFoundationReads() throws {
        var random = Generator(seed: 0x5EED_0004)
        for _ in 0..<300 {
            let recipe = random.recipe()
            let frame = try foundationEncoder.encode(recipe)
            let fast = try #require(decoder.fastDecode(Recipe.self, from: frame))
            #expect(fast == (try foundationDecoder.decode(Recipe.self, from: frame)))
            let draft = try foundationEncoder.encode(RecipeDraft(recipe))
            #expect(decoder.fastDecode(RecipeDraft.self, from: draft) == (try foundationDecoder.decode(RecipeDraft.self, from: draft)))
            let record = try foundationEncoder.encode(random.syncRecord())
            let fastRecord = try #require(decoder.fastDecode(SyncRecord.self, from: record))
            #expect(fastRecord == (try foundationDecoder.decode(SyncRecord.self, from: record)))
        }
    }

    @Test("whatever the fast path accepts from mangled frames, Foundation reads the same; the rest is Foundation's")
    func mangledFrames() throws {
        var random = Generator(seed: 0x5EED_0005)
        var accepted = 0
        for round in 0..<6_000 {
            let recipe = random.recipe()
            let value: AnyEncodable = switch round % 3 {
            case 0: AnyEncodable(recipe)
            case 1: AnyEncodable(RecipeDraft(recipe))
            default: AnyEncodable(random.syncRecord())
            }
            var bytes = Array(try foundationEncoder.encode(value))
            random.mangle(&bytes)
            let frame = Data(bytes)
            accepted += try agree(Recipe.self, frame) + agree(RecipeDraft.self, frame) + agree(JSONValue.self, frame)
                + agree([String: Int64].self, frame) + agree(Probe.self, frame) + agree(SyncRecord.self, frame)
        }
        #expect(accepted > 1_000) // the mangling leaves many frames readable: the comparison is not vacuous
    }

    /// 1 when the fast path accepted `frame` (and Foundation agreed), 0 when it left it to Foundation.
    private func agree<T: Decodable & Equatable>(_: T.Type, _ frame: Data) throws -> Int {
        guard let fast = decoder.fastDecode(T.self, from: frame) else { return 0 }
        let full: T
        do {
            full = try foundationDecoder.decode(T.self, from: frame)
        } catch {
            Issue.record("the fast path read \(T.self) from a frame Foundation refuses (\(error)): \(String(decoding: frame.prefix(300), as: UTF8.self))")
            return 1
        }
        #expect(fast == full, "\(T.self) from \(String(decoding: frame.prefix(300), as: UTF8.self))")
        return 1
    }

    @Test("leaves Foundation's own rules to it: repeated keys (also when escaped), 1.0 as a whole number, numbers past Double's range either way, byte-order marks, lone surrogates",
          arguments: [
              #"{"a":1,"a":2}"#, #"{"a":1,"\u0061":2}"#, #"[1.0]"#, #"[1e2]"#, #"[99999999999999999999]"#, "\u{FEFF}[1]",
              #"["\ud800"]"#, #"[1e400]"#, #"[1e-700]"#, #"[-0.5e-400]"#, #"{"a":[1,2],"b":{"c":null}} x"#, "[1,]", #"{"a" 1}"#, "[01]", "[-]", "\"\u{1}\"",
              #"["abcdefgh"#, #"["abcdefghabcdefgh"#, // unterminated, ending where eight bytes are read at once
          ])
    func leavesRulesToFoundation(_ text: String) throws {
        let frame = Data(text.utf8)
        #expect(decoder.fastDecode([String: Int].self, from: frame) == nil)
        #expect(decoder.fastDecode([Int].self, from: frame) == nil)
        #expect(decoder.fastDecode([String].self, from: frame) == nil)
        if let value = decoder.fastDecode(JSONValue.self, from: frame) { #expect(value == (try foundationDecoder.decode(JSONValue.self, from: frame))) }
        #expect((try? decoder.decode(JSONValue.self, from: frame)) == (try? foundationDecoder.decode(JSONValue.self, from: frame)))
        if let doubles = decoder.fastDecode([Double].self, from: frame) { #expect(doubles == (try foundationDecoder.decode([Double].self, from: frame))) }
        // …and the answer is Foundation's, success or error alike.
        #expect((try? decoder.decode([String: Int].self, from: frame)) == (try? foundationDecoder.decode([String: Int].self, from: frame)))
        #expect((try? decoder.decode([Int].self, from: frame)) == (try? foundationDecoder.decode([Int].self, from: frame)))
        #expect(throws: Never.self) { _ = try? decoder.decode([String].self, from: frame) }
    }

    @Test("every spelling of a number reads as Foundation reads it, which refuses some zeros with an exponent (0e4, 0.00e4) and underflows (1e-400): one answer either way")
    func numberSpellings() throws {
        var spellings: [String] = []
        for sign in ["", "-"] {
            for whole in ["0", "1", "10"] {
                for fraction in ["", ".0", ".00", ".000", ".0000", ".05", ".5", ".0000000"] {
                    spellings.append(sign + whole + fraction)
                    for mark in ["e", "E", "e+", "e-", "E-"] {
                        for exponent in ["0", "1", "4", "00", "04", "10", "400", "0004", "99999"] {
                            spellings.append(sign + whole + fraction + mark + exponent)
                        }
                    }
                }
            }
        }
        var refused = Set<String>()
        for number in spellings {
            for text in [number, "[\(number)]", #"{"a":\#(number),"b":1}"#] {
                let frame = Data(text.utf8)
                let foundation = try? foundationDecoder.decode(JSONValue.self, from: frame)
                if foundation == nil, text == number { refused.insert(number) }
                #expect((try? decoder.decode(JSONValue.self, from: frame)) == foundation, "\(text)")
                if let fast = decoder.fastDecode(JSONValue.self, from: frame) { #expect(fast == foundation, "\(text)") }
                if let fast = decoder.fastDecode([String: Double].self, from: frame) {
                    #expect(fast == (try? foundationDecoder.decode([String: Double].self, from: frame)), "\(text)")
                }
            }
        }
        // The grid reaches both kinds of refusal, and the zeros Foundation does read.
        #expect(["0e4", "0.00e4", "-0.0e1", "0.000e4", "1e-400", "0.05e-99999"].allSatisfy(refused.contains))
        #expect(["0.0e4", "0e10", "0e0", "-0e4", "0.0000e4"].allSatisfy { !refused.contains($0) })
        #expect((try? decoder.decode([Double].self, from: Data("[0e10, 0e0, 0.0e+4]".utf8))) == [0, 0, 0])
    }

    @Test("recipe drafts and recipes, whose text fields are coded from one list, stay on the fast path both ways")
    func draftsStayFast() throws {
        var draft = RecipeDraft(name: "Fast", ingredients: [.init(text: "1 egg")], keywords: ["quick"])
        for field in RecipeTextField.all { draft[keyPath: field.draft] = field.kind == .duration ? "PT5M" : "\(field.name) text" }
        let bytes = try #require(encoder.fastEncode(draft), "the draft's encoding left the fast path")
        #expect(decoder.fastDecode(RecipeDraft.self, from: Data(bytes)) == draft, "the draft's decoding left the fast path")
        #expect(try foundationDecoder.decode(RecipeDraft.self, from: Data(bytes)) == draft)
    }

    @Test("an error is Foundation's error, with its path")
    func errorsAreFoundations() throws {
        let frame = Data(#"{"v":1,"id":"x","op":"recipe.create","body":{"name":42}}"#.utf8)
        #expect(throws: ServiceError(.invalidBody, "body.name must be a string, found a number")) {
            _ = try WireCodec.decodeRequestBody(RecipeDraft.self, from: frame, using: decoder)
        }
        #expect(throws: ServiceError(.invalidBody, "body.name must be a string, found a number")) {
            _ = try WireCodec.decodeRequestBody(RecipeDraft.self, from: frame, using: foundationDecoder)
        }
    }

    @Test("a value that catches a mismatch and tries another type reads as it does with Foundation")
    func triesAnotherType() throws {
        for text in [#"[1, 1.5, "x", true, null, [], {"a": 1e300}]"#, #"[1.0]"#, #"[123456789012345678901234567890]"#] {
            let frame = Data(text.utf8)
            #expect(try decoder.decode(JSONValue.self, from: frame) == foundationDecoder.decode(JSONValue.self, from: frame))
        }
    }

    @Test("any JSON value (a synced field's) is read and written on the fast path, as Foundation reads and writes it")
    func jsonValuesStayFast() throws {
        var generator = Generator(seed: 0x5EED_0009)
        for _ in 0..<300 {
            let value = generator.jsonValue(depth: 0)
            let bytes = try #require(encoder.fastEncode(value), "a JSON value left the fast path when written")
            #expect(try foundationDecoder.decode(JSONValue.self, from: Data(bytes)) == value)
            let foundationBytes = try WireCodec.makeEncoder().encode(value)
            #expect(decoder.fastDecode(JSONValue.self, from: foundationBytes) == value, "a JSON value left the fast path when read")
        }
        // A repeated key is Foundation's to decide, also inside a JSON value.
        #expect(decoder.fastDecode(JSONValue.self, from: Data(#"{"a":1,"a":2}"#.utf8)) == nil)
        #expect(decoder.fastDecode(JSONValue.self, from: Data(#"[{"b":{"a":1,"\u0061":2}}]"#.utf8)) == nil)
        // Escaped keys and text read as Foundation reads them.
        let escaped = Data(#"{"\u0061b":"\u00e9\n","c\"d":[true,false,null,-0.25,1e3]}"#.utf8)
        #expect(try #require(decoder.fastDecode(JSONValue.self, from: escaped)) == foundationDecoder.decode(JSONValue.self, from: escaped))
    }

    // MARK: Dates

    @Test("dates: the same text as Foundation's ISO 8601 style for 100,000 random instants, and the same instant read back")
    func dates() throws {
        var random = Generator(seed: 0x5EED_0006)
        for round in 0..<100_000 {
            let time: Double = switch round % 3 {
            case 0: Double.random(in: -11_676_096_000 ..< 253_402_300_800, using: &random)
            case 1: Double(Int64.random(in: 1_600_000_000_000 ..< 1_900_000_000_000, using: &random)) / 1_000
            default: Double(Int64.random(in: -11_676_096_000 ..< 253_402_300_800, using: &random)) + Double(Int.random(in: 0..<1_000, using: &random)) / 1_000
            }
            let date = Date(timeIntervalSince1970: time)
            let text = date.formatted(WireDates.withMilliseconds)
            #expect(WireDateText.format(date) == text, "\(time)")
            let read = Array(text.utf8).withUnsafeBufferPointer { WireDateText.parse($0) }
            #expect(read == (try WireDates.withMilliseconds.parse(text)), "\(text)")
            let whole = String(text.prefix(19)) + "Z"
            #expect(Array(whole.utf8).withUnsafeBufferPointer { WireDateText.parse($0) } == (try WireDates.wholeSeconds.parse(whole)), "\(whole)")
        }
        // Outside the years it is sure of, and any text not in the canonical form: the style decides.
        #expect(WireDateText.format(Date(timeIntervalSince1970: -12_000_000_000)) == nil)
        for text in ["2026-02-30T10:00:00Z", "2026-11-21T19:32:53+01:00", "2026-11-21T19:32:53.1Z", "1500-01-01T00:00:00Z", "2026-11-21t19:32:53Z"] {
            #expect(Array(text.utf8).withUnsafeBufferPointer { WireDateText.parse($0) } == nil, "\(text)")
        }
        let lenient = Data(#"["2026-02-30T10:00:00Z","2026-11-21T19:32:53+01:00"]"#.utf8)
        #expect(try decoder.decode([Date].self, from: lenient) == foundationDecoder.decode([Date].self, from: lenient))
    }

    @Test("UUIDs: written as uuidString writes them, read as UUID(uuidString:) reads them, in either case; anything else is Foundation's")
    func uuids() throws {
        var random = Generator(seed: 0x5EED_0007)
        for _ in 0..<2_000 {
            var bytes: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            let id = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                 bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
            bytes.removeAll()
            UUIDText.write(id, into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == id.uuidString)
            #expect(UUIDText.uuid(id.uuidString) == id)
            #expect(UUIDText.uuid(id.uuidString.lowercased()) == UUID(uuidString: id.uuidString.lowercased()))
            #expect(try encoder.encode([id]) == foundationEncoder.encode([id]))
        }
        for text in ["", "E621E1F8C36C495A93FC0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "G621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                     "E621E1F8-C36C-495A-93FC-0C247A3E6E5F ", "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}", "E621E1F8_C36C-495A-93FC-0C247A3E6E5F"] {
            #expect(UUIDText.uuid(text) == nil, "\(text)")
            #expect(UUID(uuidString: text) == nil, "\(text)")
            let frame = Data("[\"\(text)\"]".utf8)
            #expect(decoder.fastDecode([UUID].self, from: frame) == nil)
            #expect((try? decoder.decode([UUID].self, from: frame)) == (try? foundationDecoder.decode([UUID].self, from: frame)))
        }
        let escaped = Data(#"["E621E1F8-C36C-495A-93FC-0C247A3E6E5\u0046"]"#.utf8)
        #expect(try decoder.decode([UUID].self, from: escaped) == foundationDecoder.decode([UUID].self, from: escaped))
    }

    // MARK: Helpers

    private func expectSameJSON<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ours = try #require(encoder.fastEncode(value), sourceLocation: sourceLocation)
        let theirs = try foundationEncoder.encode(value)
        #expect(Self.canonical(Data(ours)) == Self.canonical(theirs), sourceLocation: sourceLocation)
    }

    /// The document with every object's keys sorted and every string re-escaped one way; numbers as written.
    static func canonical(_ data: Data) -> String {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let tape = JSONTape(bytes) else { return "not JSON: " + String(decoding: data, as: UTF8.self) }
            var index = 0
            return canonical(tape.nodes, &index, bytes)
        }
    }

    private static func canonical(_ nodes: [JSONTape.Node], _ index: inout Int, _ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let node = nodes[index]
        index += 1
        switch node.kind {
        case .null: return "null"
        case .true: return "true"
        case .false: return "false"
        case .number: return String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)]), as: UTF8.self)
        case .string: return JSONValue.string(JSONTape.text(of: node, in: bytes)).canonicalText
        case .array:
            var items: [String] = []
            while index < Int(node.next) { items.append(canonical(nodes, &index, bytes)) }
            return "[" + items.joined(separator: ",") + "]"
        case .object:
            var members: [String] = []
            while index < Int(node.next) {
                let key = canonical(nodes, &index, bytes)
                members.append(key + ":" + canonical(nodes, &index, bytes))
            }
            return "{" + members.sorted().joined(separator: ",") + "}"
        }
    }
}

// MARK: - Values for the comparisons

private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

/// Every primitive a wire type may hold.
private struct Probe: Codable, Equatable {
    var name: String?
    var version: Int?
    var servings: Double?
    var isFavorite: Bool?
    var createdAt: Date?
    var id: UUID?
    var keywords: [String]?
}

private struct Empty: Encodable {
    func encode(to _: any Encoder) throws {}
}

/// Writes to an outer container after a nested one: legal, and not something a stream can do.
private struct Interleaved: Encodable {
    enum Keys: String, CodingKey { case a, b, c }
    func encode(to encoder: any Encoder) throws {
        var outer = encoder.container(keyedBy: Keys.self)
        var inner = outer.nestedContainer(keyedBy: Keys.self, forKey: .a)
        try outer.encode(1, forKey: .b)
        try inner.encode(2, forKey: .c)
    }
}

/// Seeded values with the characters, numbers and dates that trip coders up.
private struct Generator: RandomNumberGenerator {
    private var random: SplitMix
    init(seed: UInt64) { random = SplitMix(seed: seed) }

    mutating func next() -> UInt64 { random.next() }

    private static let pieces: [String] = ["a", "Z", "7", " ", "/", "\"", "\\", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "ß",
                                           "☃", "😀", "\u{2028}", "\u{FEFF}", "{", "}", "[", ":", ",", "1/2 cup", "Crème brûlée"]

    mutating func text() -> String {
        (0..<Int.random(in: 0...12, using: &self)).map { _ in Self.pieces.randomElement(using: &self)! }.joined()
    }

    mutating func maybe<T>(_ make: (inout Generator) -> T) -> T? {
        Bool.random(using: &self) ? make(&self) : nil
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<4, using: &self) {
        case 0: return Double(Int.random(in: -1_000...1_000, using: &self))
        case 1: return Double(Int.random(in: 1...40, using: &self)) / 4
        case 2: return Double.random(in: -1e6...1e6, using: &self)
        default:
            let value = Double(bitPattern: next())
            return value.isFinite ? value : 0.5
        }
    }

    mutating func date() -> Date {
        Bool.random(using: &self)
            ? Date(timeIntervalSince1970: Double(Int64.random(in: 1_600_000_000_000 ..< 1_900_000_000_000, using: &self)) / 1_000)
            : Date(timeIntervalSince1970: Double.random(in: -11_000_000_000 ..< 250_000_000_000, using: &self))
    }

    mutating func recipe() -> Recipe {
        Recipe(
            name: text() + "x", description: maybe { $0.text() },
            ingredients: (0..<Int.random(in: 0...4, using: &self)).map { _ in IngredientLine(text: text()) },
            instructions: (0..<Int.random(in: 0...3, using: &self)).map { _ in Instruction(text: text()) },
            recipeYield: maybe { $0.text() }, servings: maybe { $0.double() }, prepTime: maybe { _ in "PT15M" },
            keywords: (0..<Int.random(in: 0...3, using: &self)).map { _ in text() }, author: maybe { $0.text() },
            notes: maybe { $0.text() }, website: maybe { _ in "https://example.com/a/b?c=d" },
            sourcePageNumber: maybe { Int.random(in: -5...5_000, using: &$0) }, isFavorite: Bool.random(using: &self),
            rating: Int.random(in: 0...5, using: &self), createdAt: date(), updatedAt: date(), version: Int.random(in: 1...Int.max, using: &self))
    }

    mutating func jsonValue(depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth < 3 ? 6 : 4), using: &self) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &self))
        case 2: return .number(double())
        case 3: return .string(text())
        case 4: return .array((0..<Int.random(in: 0...3, using: &self)).map { _ in jsonValue(depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &self) { members[text()] = jsonValue(depth: depth + 1) }
            return .object(members)
        }
    }

    mutating func syncRecord() -> SyncRecord {
        var fields: [String: JSONValue] = [:]
        var fieldClocks: [String: Int] = [:]
        for index in 0..<Int.random(in: 0...6, using: &self) {
            let name = "f\(index)" + text()
            fields[name] = jsonValue(depth: 0)
            fieldClocks[name] = 0
        }
        let clock = SyncClock(vv: ["r1": Int64.random(in: 1...Int64.max, using: &self), text(): 2], stamp: text())
        return SyncRecord(kind: .recipe, id: UUID().uuidString, seq: Int.random(in: 0...1_000_000, using: &self),
                          fields: fields, clocks: [clock], fieldClocks: fieldClocks)
    }

    /// A few edits that keep a frame close to JSON: replaced, removed and inserted bytes and tokens.
    mutating func mangle(_ bytes: inout [UInt8]) {
        let tokens = ["1.0", "1e2", "-0", "null", "true", "\"\\u0041\"", "\"\\ud83d\\ude00\"", ",\"name\":\"b\"", "{}", "[]", "\"", ",",
                      "99999999999999999999", "\u{FEFF}", "\"2026-02-30T10:00:00Z\"", " "]
        for _ in 0..<Int.random(in: 1...3, using: &self) {
            guard !bytes.isEmpty else { return }
            let at = Int.random(in: 0..<bytes.count, using: &self)
            switch Int.random(in: 0..<4, using: &self) {
            case 0: bytes[at] = UInt8.random(in: 0...255, using: &self)
            case 1: bytes.remove(at: at)
            case 2: bytes.insert(contentsOf: Array(tokens.randomElement(using: &self)!.utf8), at: at)
            default:
                // Replace a value-ish run (up to the next comma or bracket) with a token.
                var end = at
                while end < bytes.count, !",]}".utf8.contains(bytes[end]) { end += 1 }
                bytes.replaceSubrange(at..<end, with: Array(tokens.randomElement(using: &self)!.utf8))
            }
        }
    }
}

@Suite("Fields a request does not have", .onOwnThread)
struct UnknownFieldTests {
    struct Inner: Codable, Equatable { var c: Int; var note: String? }
    struct Outer: Codable, Equatable { var a: Int; var inner: Inner; var tags: [String: Int]; var list: [Inner] }
    struct Body: Codable, Equatable { var body: Outer }

    static let refusing = WireJSONDecoder(userInfo: [WireJSONDecoder.refusesUnknownFields: true])

    func refusal(_ json: String) -> String? {
        do {
            _ = try Self.refusing.decode(Body.self, from: Data(json.utf8))
            return nil
        } catch let error as DecodingError {
            return error.wireDescription
        } catch {
            return "\(error)"
        }
    }

    @Test("a member no one asked for is refused with its path and the fields there; a near name is suggested")
    func refused() {
        let good = #"{"v": 1, "op": "x", "body": {"a": 1, "inner": {"c": 2}, "tags": {"any": 1, "name": 2}, "list": [{"c": 3, "note": "n"}]}}"#
        #expect(refusal(good) == nil, "the envelope's own members and a dictionary's keys are not fields")
        #expect(refusal(#"{"body": {"a": 1, "inner": {"c": 2, "notes": "x"}, "tags": {}, "list": []}}"#)
                == "body.inner.notes is not valid: there is no such field here; did you mean note? (the fields here: c, note)")
        #expect(refusal(#"{"body": {"a": 1, "inner": {"c": 2}, "tags": {}, "list": [{"c": 1}, {"c": 2, "C": 3}]}}"#)?
                    .hasPrefix("body.list[1].C is not valid: there is no such field here; did you mean c?") == true)
        #expect(refusal(#"{"body": {"a": 1, "b": 2, "inner": {"c": 2}, "tags": {}, "list": []}}"#)
                == "body.b is not valid: there is no such field here (the fields here: a, inner, list, tags)")
        // Without the setting, nothing is refused: replies, files and peers are read as before.
        let lenient = try? WireJSONDecoder().decode(Body.self, from: Data(#"{"body": {"a": 1, "b": 2, "inner": {"c": 2}, "tags": {}, "list": []}}"#.utf8))
        #expect(lenient?.body.a == 1)
    }
}

@Suite("Numbers that do not fit their field", .onOwnThread)
struct NumberFitTests {
    struct Fields: Codable, Equatable { var count: Int?; var small: Int8?; var amount: Double? }
    struct Body: Codable, Equatable { var body: Fields }

    enum Read: Equatable {
        case success(Fields)
        case failure(String)
    }

    func read(_ json: String) -> Read {
        do {
            return .success(try WireJSONDecoder().decode(Body.self, from: Data(json.utf8)).body)
        } catch let error as DecodingError {
            return .failure(error.wireDescription)
        } catch {
            return .failure("\(error)")
        }
    }

    @Test("are refused naming the field and what it takes (Foundation on Linux called them not valid JSON, saying nowhere); whole values written otherwise still read")
    func refusedWhereTheyAre() {
        #expect(read(#"{"body": {"count": 5.5}}"#) == .failure("body.count is not valid: it must be a whole number from -9223372036854775808 to 9223372036854775807; found 5.5"))
        #expect(read(#"{"body": {"count": 99999999999999999999999}}"#)
                == .failure("body.count is not valid: it must be a whole number from -9223372036854775808 to 9223372036854775807; found 99999999999999999999999"))
        #expect(read(#"{"body": {"small": 300}}"#) == .failure("body.small is not valid: it must be a whole number from -128 to 127; found 300"))
        #expect(read(#"{"body": {"amount": 1e400}}"#)
                == .failure("body.amount is not valid: it must be a number no larger than 1.8e308 either side of zero, and 0 or no smaller than 2.2e-308; found 1e400"))
        #expect(read(#"{"body": {"amount": -1e-700}}"#)
                == .failure("body.amount is not valid: it must be a number no larger than 1.8e308 either side of zero, and 0 or no smaller than 2.2e-308; found -1e-700"))
        #expect(read(#"{"body": {"amount": 0.00e4}}"#)
                == .failure("body.amount is not valid: it must be zero written without an exponent (0 or 0.0); found 0.00e4"))
        #expect(read(#"{"body": {"amount": 0.0e4, "count": 0.00e4}}"#) == .success(Fields(count: 0, amount: 0)))
        #expect(read(#"{"body": {"count": 1.0, "small": 1e2, "amount": 2.5}}"#) == .success(Fields(count: 1, small: 100, amount: 2.5)))
        // Bytes that are not JSON are still said to be so.
        #expect(read(#"{"body": {"count": 5.5"#) == .failure("not valid JSON"))
    }
}
