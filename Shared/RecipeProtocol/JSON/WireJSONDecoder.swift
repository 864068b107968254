import Foundation

/// Decodes the wire's JSON from one pass over the bytes (`JSONTape`) and hands the values to
/// `init(from:)` straight from it.
///
/// It answers only where it is sure to give what Foundation's `JSONDecoder` (set up as
/// `WireCodec.makeDecoder()`) gives. Every error, and every case it leaves alone — duplicate keys,
/// escaped keys, a whole number written as `1.0` or too large for its type, `Float`, `Decimal`, a
/// byte-order mark — is decided again by Foundation's decoder, so error messages and edge cases
/// are what they were, but one: a number Foundation refuses as "not valid JSON" is said where it is
/// (`decode`). Checked against Foundation by `WireJSONTests` and the fuzz targets.
public struct WireJSONDecoder: Sendable {
    private let fallback: JSONDecoder
    private let userInfo: [CodingUserInfoKey: any Sendable]

    /// A decoder with the wire's rules (ISO 8601 dates, with or without milliseconds); `userInfo` is what every
    /// `init(from:)` sees as `decoder.userInfo` (`RecipeDraft.checksFields`).
    public init(userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        fallback = WireCodec.makeDecoder()
        fallback.userInfo = userInfo
        self.userInfo = userInfo
    }

    /// Set to `true` in `userInfo` to refuse a member of an object that its type reads field by field and never asked
    /// for (a misspelt or unknown field of a request: `{"limt": 5}`), rather than pass over it. Objects read whole (a
    /// dictionary, a `JSONValue`) and the outermost object (the envelope) are not checked; nor, when Foundation's
    /// decoder has to decide (a repeated key), is anything.
    public static let refusesUnknownFields = CodingUserInfoKey(rawValue: "WireJSONDecoder.refusesUnknownFields")!

    /// The value of type `T` in `data`, or the error Foundation's decoder gives for it.
    ///
    /// Foundation on Linux refuses a number that does not fit its field (`5.5` or `1e30` for a whole number, `1e400`)
    /// as "not valid JSON", without saying where; when the bytes are JSON, the field and what it takes are said
    /// instead (the fast path saw the number and why it could not take it).
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        var refusal: DecodingError?
        switch try fastRead(type, from: data, refusal: &refusal) {
        case .value(let value): return value
        case .unknownField(let error): throw error
        case nil:
            do {
                return try fallback.decode(type, from: data)
            } catch let error as DecodingError where error.isNotJSON {
                throw refusal ?? error
            }
        }
    }

    /// The fast path alone: the value, or `nil` when Foundation's decoder has to decide (tests compare the two).
    public func fastDecode<T: Decodable>(_ type: T.Type, from data: Data) -> T? {
        var refusal: DecodingError?
        if case .value(let value)? = try? fastRead(type, from: data, refusal: &refusal) { return value }
        return nil
    }

    private enum FastRead<T> {
        case value(T)
        case unknownField(DecodingError)
    }

    private func fastRead<T: Decodable>(_ type: T.Type, from data: Data, refusal: inout DecodingError?) throws -> FastRead<T>? {
        data.withUnsafeBytes { raw -> FastRead<T>? in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let tape = JSONTape(bytes) else { return nil }
            let session = TapeSession(bytes: bytes, nodes: tape.nodes, userInfo: userInfo)
            defer { refusal = session.numberRefusal }
            guard let value = try? session.decode(type, at: 0, path: []), !session.unsure else { return nil }
            if let unknown = session.unknownField() { return .unknownField(unknown) }
            return .value(value)
        }
    }
}

/// Thrown where Foundation's decoder must decide; the whole document is then decoded again by it.
private struct LeftToFoundation: Error {}

/// One decode: the bytes, their tape, and whether anything was left to Foundation.
private final class TapeSession {
    let bytes: UnsafeBufferPointer<UInt8>
    let nodes: [JSONTape.Node]
    /// Set when a value was left to Foundation, even if the caller caught the error (as `try?` in an
    /// `init(from:)` does): the result could differ from Foundation's, so it is not used.
    @exclusivity(unchecked) var unsure = false

    let userInfo: [CodingUserInfoKey: Any]
    /// Whether the keys each object was asked for are kept (`WireJSONDecoder.refusesUnknownFields`).
    let tracksFields: Bool
    // What tracking keeps, flat (a request of 300 ingredient lines opens 300 objects): the objects read field by field
    // with where they stand, every name asked of each (present or not), the members found, and the objects read whole.
    @exclusivity(unchecked) private var openedObjects: [(object: Int, path: [any CodingKey])] = []
    @exclusivity(unchecked) private var askedNames: [(object: Int, name: String)] = []
    @exclusivity(unchecked) private var foundKeys: [Bool] = []
    @exclusivity(unchecked) private var wholeObjects: Set<Int> = []

    init(bytes: UnsafeBufferPointer<UInt8>, nodes: [JSONTape.Node], userInfo: [CodingUserInfoKey: Any]) {
        self.bytes = bytes
        self.nodes = nodes
        self.userInfo = userInfo
        tracksFields = userInfo[WireJSONDecoder.refusesUnknownFields] as? Bool == true
        if tracksFields { foundKeys = Array(repeating: false, count: nodes.count) }
    }

    func opened(_ object: Int, path: [any CodingKey]) {
        guard tracksFields, !path.isEmpty else { return }
        openedObjects.append((object, path))
    }

    /// `name` was asked of `object`; `keyNode` is its member's key node when the object has it.
    func asked(_ name: String, of object: Int, found keyNode: Int?) {
        guard tracksFields else { return }
        askedNames.append((object, name))
        if let keyNode { foundKeys[keyNode] = true }
    }

    func askedAll(of object: Int) {
        guard tracksFields else { return }
        wholeObjects.insert(object)
    }

    /// The first member (in the order of the bytes) of an object read field by field that its type never asked for.
    func unknownField() -> DecodingError? {
        guard tracksFields else { return nil }
        for (object, path) in openedObjects.sorted(by: { $0.object < $1.object }) where !wholeObjects.contains(object) {
            var member = object + 1
            while member < Int(nodes[object].next) {
                if !foundKeys[member] {
                    let key = JSONTape.text(of: nodes[member], in: bytes)
                    let fields = Set(askedNames.filter { $0.object == object }.map(\.name)).sorted()
                    let near = fields.first { Self.isNear(key, $0) }.map { "; did you mean \($0)?" } ?? ""
                    return .dataCorrupted(.init(
                        codingPath: path + [NameKey(stringValue: key)],
                        debugDescription: "there is no such field here\(near) (the fields here: \(fields.joined(separator: ", ")))"))
                }
                member = Int(nodes[member + 1].next)
            }
        }
        return nil
    }

    /// Whether `a` is a likely misspelling of `b`: the same but for case, or one edit apart (for names of 4 or more).
    private static func isNear(_ a: String, _ b: String) -> Bool {
        if a.lowercased() == b.lowercased() { return true }
        let x = Array(a.lowercased()), y = Array(b.lowercased())
        guard min(x.count, y.count) >= 4, abs(x.count - y.count) <= 1 else { return false }
        var previous = Array(0...y.count)
        for i in 1...x.count {
            var current = [i] + Array(repeating: 0, count: y.count)
            for j in 1...y.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[y.count] <= 1
    }

    func leave() -> LeftToFoundation {
        unsure = true
        return LeftToFoundation()
    }

    /// The first number left to Foundation, with what its field takes: said if Foundation refuses the bytes as
    /// "not valid JSON" (its word on Linux for a number that does not fit), which does not say where.
    @exclusivity(unchecked) private(set) var numberRefusal: DecodingError?

    /// Leaves the number at `node` to Foundation, noting what its field takes (`takes`) if it is the first.
    private func leave(number node: JSONTape.Node, path: [any CodingKey], takes: String) -> LeftToFoundation {
        if numberRefusal == nil {
            let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)]), as: UTF8.self)
            let shown = literal.count > 40 ? "\(literal.prefix(40))…" : literal
            numberRefusal = .dataCorrupted(.init(codingPath: path, debugDescription: "it must be \(takes); found \(shown)"))
        }
        return leave()
    }

    func mismatch(_ type: Any.Type, at index: Int, path: @autoclosure () -> [any CodingKey]) -> DecodingError {
        let found: String
        switch nodes[index].kind {
        case .null:
            return DecodingError.valueNotFound(type, .init(codingPath: path(), debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        case .true, .false: found = "bool"
        case .number: found = "number"
        case .string: found = "string"
        case .array: found = "array"
        case .object: found = "dictionary"
        }
        return DecodingError.typeMismatch(type, .init(codingPath: path(), debugDescription: "Expected to decode \(type) but found \(found) instead."))
    }

    // MARK: Values

    func bool(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        switch nodes[index].kind {
        case .true: return true
        case .false: return false
        default: throw mismatch(Bool.self, at: index, path: path())
        }
    }

    func string(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> String {
        let node = nodes[index]
        guard node.kind == .string else { throw mismatch(String.self, at: index, path: path()) }
        return JSONTape.text(of: node, in: bytes)
    }

    func double(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> Double {
        let node = nodes[index]
        guard node.kind == .number else { throw mismatch(Double.self, at: index, path: path()) }
        if !node.flag, node.end - node.start <= 15, let whole = wholeNumber(node) {
            return Double(whole) // exact: at most 15 digits
        }
        let literal = UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)])
        let takes = "a number no larger than 1.8e308 either side of zero, and 0 or no smaller than 2.2e-308"
        guard let value = Double(String(decoding: literal, as: UTF8.self)), value.isFinite else {
            throw leave(number: node, path: path(), takes: takes)
        }
        if value == 0, !Self.foundationReadsAsZero(literal) {
            // A literal that underflows to zero (`1e-700`), or a zero Foundation's scan takes for one (`0.00e4`).
            let mantissa = literal.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
            let underflows = mantissa.contains { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }
            throw leave(number: node, path: path(), takes: underflows ? takes : "zero written without an exponent (0 or 0.0)")
        }
        return value
    }

    /// Whether Foundation's decoder (swift-foundation's `JSONDecoderImpl.isTrueZero`) takes a literal that parsed to
    /// zero as a true zero rather than as an underflow, which it refuses. It looks for a digit 1 to 9 before the
    /// first `e`, reading four bytes at a time from the front and then the last `count % 4` bytes from the back, so
    /// a nonzero exponent digit among those last bytes counts too: `0e4`, `0.00e4` and `-0.0e1` are refused while
    /// `0.0e4` and `0e10` are read. Mirrored exactly, so a body reads alike on either path.
    static func foundationReadsAsZero(_ literal: UnsafeBufferPointer<UInt8>) -> Bool {
        func verdict(_ byte: UInt8) -> Bool? {
            switch byte {
            case UInt8(ascii: "1")...UInt8(ascii: "9"): false
            case UInt8(ascii: "e"), UInt8(ascii: "E"): true
            default: nil
            }
        }
        let whole = literal.count - literal.count % 4
        for byte in literal[..<whole] { if let answer = verdict(byte) { return answer } }
        for byte in literal[whole...].reversed() { if let answer = verdict(byte) { return answer } }
        return true
    }

    func integer<I: FixedWidthInteger>(_: I.Type, at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> I {
        let node = nodes[index]
        guard node.kind == .number else { throw mismatch(I.self, at: index, path: path()) }
        // `1.0`, `1e2` and numbers past the type's range: Foundation's rules decide.
        guard !node.flag, let whole = wholeNumber(node), let value = I(exactly: whole) else {
            // Foundation takes `1.0` and `1e2` (whole values written otherwise); what it refuses is noted.
            let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)]), as: UTF8.self)
            if let written = Double(literal), written.rounded() == written, abs(written) < 0x1p53, I(exactly: written) != nil { throw leave() }
            throw leave(number: node, path: path(), takes: "a whole number from \(I.min) to \(I.max)")
        }
        return value
    }

    /// A number literal without fraction or exponent, when it fits an `Int64`.
    private func wholeNumber(_ node: JSONTape.Node) -> Int64? {
        var index = Int(node.start)
        let end = Int(node.end)
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var value: Int64 = 0
        while index < end {
            let digit = Int64(bytes[index] &- UInt8(ascii: "0"))
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = sum
            index += 1
        }
        return value
    }

    func date(at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> Date {
        let node = nodes[index]
        guard node.kind == .string else { throw mismatch(String.self, at: index, path: path()) }
        if !node.flag, let date = WireDateText.parse(UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)])) {
            return date
        }
        let text = JSONTape.text(of: node, in: bytes)
        if let date = try? WireDates.withMilliseconds.parse(text) { return date }
        if let date = try? WireDates.wholeSeconds.parse(text) { return date }
        throw leave()
    }

    func decode<T: Decodable>(_ type: T.Type, at index: Int, path: @autoclosure () -> [any CodingKey]) throws -> T {
        if T.self == String.self { return try string(at: index, path: path()) as! T }
        if T.self == Int.self { return try integer(Int.self, at: index, path: path()) as! T }
        if T.self == Bool.self { return try bool(at: index, path: path()) as! T }
        if T.self == Double.self { return try double(at: index, path: path()) as! T }
        if T.self == Int64.self { return try integer(Int64.self, at: index, path: path()) as! T }
        if T.self == Date.self { return try date(at: index, path: path()) as! T }
        if T.self == UUID.self {
            let node = nodes[index]
            if node.kind == .string, !node.flag,
               let id = UUIDText.parse(UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)])) {
                return id as! T
            }
            return try T(from: TapeDecoder(session: self, index: index, codingPath: path()))
        }
        if T.self == Data.self {
            guard let data = Data(base64Encoded: try string(at: index, path: path())) else { throw leave() }
            return data as! T
        }
        if T.self == URL.self {
            guard let url = URL(string: try string(at: index, path: path())) else { throw leave() }
            return url as! T
        }
        if T.self == Float.self || T.self == Decimal.self { throw leave() }
        if T.self == JSONValue.self { return try jsonValue(at: index) as! T }
        return try T(from: TapeDecoder(session: self, index: index, codingPath: path()))
    }

    /// A `JSONValue` read from the tape as it stands: what its `init(from:)` makes through the containers, without
    /// trying each type in turn (every type that did not match built a `DecodingError` first; a sync record's
    /// values are hundreds of them).
    func jsonValue(at index: Int) throws -> JSONValue {
        let node = nodes[index]
        switch node.kind {
        case .null: return .null
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .number: return .number(try double(at: index, path: []))
        case .string: return .string(JSONTape.text(of: node, in: bytes))
        case .array:
            var values: [JSONValue] = []
            values.reserveCapacity(Int(node.count))
            var member = index + 1
            while member < Int(node.next) {
                values.append(try jsonValue(at: member))
                member = Int(nodes[member].next)
            }
            return .array(values)
        case .object:
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(Int(node.count))
            var member = index + 1
            while member < Int(node.next) {
                let key = JSONTape.text(of: nodes[member], in: bytes)
                // A repeated key: which one counts is Foundation's rule (as in `TapeKeyedContainer`).
                guard members.updateValue(try jsonValue(at: member + 1), forKey: key) == nil else { throw leave() }
                member = Int(nodes[member + 1].next)
            }
            return .object(members)
        }
    }
}

private struct TapeDecoder: Decoder {
    let session: TapeSession
    let index: Int
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { session.userInfo }

    func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(try TapeKeyedContainer<Key>(session: session, index: index, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try TapeUnkeyedContainer(session: session, index: index, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        TapeSingleValueContainer(session: session, index: index, codingPath: codingPath)
    }
}

/// A member's name, for an error's path.
private struct NameKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

private struct IndexKey: CodingKey {
    var stringValue: String { "Index \(intValue!)" }
    var intValue: Int?
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct TapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let session: TapeSession
    let codingPath: [any CodingKey]
    /// The object's node.
    private let object: Int
    /// Each member's key node (its value node is the next one).
    private let keys: [Int32]
    /// For objects of many members or escaped keys: key text → value node.
    private let lookup: [String: Int]?

    init(session: TapeSession, index: Int, codingPath: [any CodingKey]) throws {
        self.session = session
        self.codingPath = codingPath
        self.object = index
        let nodes = session.nodes
        let object = nodes[index]
        guard object.kind == .object else { throw session.mismatch([String: Any].self, at: index, path: codingPath) }
        session.opened(index, path: codingPath)
        var keys: [Int32] = []
        keys.reserveCapacity(Int(object.count))
        var member = index + 1
        var escaped = false
        while member < Int(object.next) {
            escaped = escaped || nodes[member].flag
            keys.append(Int32(member))
            member = Int(nodes[member + 1].next)
        }
        self.keys = keys
        // Many keys, or keys with escapes (compared by their text): a table of the texts.
        if keys.count > 12 || escaped {
            var lookup: [String: Int] = [:]
            lookup.reserveCapacity(keys.count)
            for key in keys {
                let text = JSONTape.text(of: nodes[Int(key)], in: session.bytes)
                // A repeated key: which one counts is Foundation's rule.
                guard lookup.updateValue(Int(key) + 1, forKey: text) == nil else { throw session.leave() }
            }
            self.lookup = lookup
        } else {
            for (position, key) in keys.enumerated() {
                for other in keys[(position + 1)...] where Self.sameText(nodes[Int(key)], nodes[Int(other)], session.bytes) {
                    throw session.leave()
                }
            }
            self.lookup = nil
        }
    }

    private static func sameText(_ a: JSONTape.Node, _ b: JSONTape.Node, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = Int(a.end - a.start)
        guard count == Int(b.end - b.start) else { return false }
        return memcmp(bytes.baseAddress! + Int(a.start), bytes.baseAddress! + Int(b.start), count) == 0
    }

    /// The value node of `key`, if present.
    private func find(_ key: Key) -> Int? {
        let value = lookUp(key)
        if session.tracksFields { session.asked(key.stringValue, of: object, found: value.map { $0 - 1 }) }
        return value
    }

    private func lookUp(_ key: Key) -> Int? {
        if let lookup { return lookup[key.stringValue] }
        var name = key.stringValue
        return name.withUTF8 { utf8 -> Int? in
            for keyIndex in keys {
                let node = session.nodes[Int(keyIndex)]
                let count = Int(node.end - node.start)
                if count == utf8.count && (count == 0 || memcmp(session.bytes.baseAddress! + Int(node.start), utf8.baseAddress!, count) == 0) {
                    return Int(keyIndex) + 1
                }
            }
            return nil
        }
    }

    private func require(_ key: Key) throws -> Int {
        guard let index = find(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)."))
        }
        return index
    }

    var allKeys: [Key] {
        session.askedAll(of: object)
        return keys.compactMap { Key(stringValue: JSONTape.text(of: session.nodes[Int($0)], in: session.bytes)) }
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { session.nodes[try require(key)].kind == .null }

    func decode(_: Bool.Type, forKey key: Key) throws -> Bool { try session.bool(at: require(key), path: codingPath + [key]) }
    func decode(_: String.Type, forKey key: Key) throws -> String { try session.string(at: require(key), path: codingPath + [key]) }
    func decode(_: Double.Type, forKey key: Key) throws -> Double { try session.double(at: require(key), path: codingPath + [key]) }
    func decode(_: Float.Type, forKey key: Key) throws -> Float { throw session.leave() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try session.integer(type, at: require(key), path: codingPath + [key]) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try session.integer(type, at: require(key), path: codingPath + [key]) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try session.integer(type, at: require(key), path: codingPath + [key]) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try session.integer(type, at: require(key), path: codingPath + [key]) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try session.integer(type, at: require(key), path: codingPath + [key]) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try session.integer(type, at: require(key), path: codingPath + [key]) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try session.integer(type, at: require(key), path: codingPath + [key]) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try session.integer(type, at: require(key), path: codingPath + [key]) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try session.integer(type, at: require(key), path: codingPath + [key]) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try session.integer(type, at: require(key), path: codingPath + [key]) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try session.decode(type, at: require(key), path: codingPath + [key]) }

    /// The value node of `key` unless it is missing or null.
    private func present(_ key: Key) -> Int? {
        guard let index = find(key), session.nodes[index].kind != .null else { return nil }
        return index
    }

    func decodeIfPresent(_: Bool.Type, forKey key: Key) throws -> Bool? {
        try present(key).map { try session.bool(at: $0, path: codingPath + [key]) }
    }
    func decodeIfPresent(_: String.Type, forKey key: Key) throws -> String? {
        try present(key).map { try session.string(at: $0, path: codingPath + [key]) }
    }
    func decodeIfPresent(_: Double.Type, forKey key: Key) throws -> Double? {
        try present(key).map { try session.double(at: $0, path: codingPath + [key]) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try present(key).map { try session.integer(type, at: $0, path: codingPath + [key]) }
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try present(key).map { try session.integer(type, at: $0, path: codingPath + [key]) }
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try present(key).map { try session.decode(type, at: $0, path: codingPath + [key]) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(try TapeKeyedContainer<NestedKey>(session: session, index: require(key), codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try TapeUnkeyedContainer(session: session, index: require(key), codingPath: codingPath + [key])
    }

    func superDecoder() throws -> any Decoder { throw session.leave() }
    func superDecoder(forKey _: Key) throws -> any Decoder { throw session.leave() }
}

private struct TapeUnkeyedContainer: UnkeyedDecodingContainer {
    let session: TapeSession
    let codingPath: [any CodingKey]
    let count: Int?
    private(set) var currentIndex = 0
    /// The node of the next element.
    private var node: Int

    init(session: TapeSession, index: Int, codingPath: [any CodingKey]) throws {
        let array = session.nodes[index]
        guard array.kind == .array else { throw session.mismatch([Any].self, at: index, path: codingPath) }
        self.session = session
        self.codingPath = codingPath
        self.count = Int(array.count)
        self.node = index + 1
    }

    var isAtEnd: Bool { currentIndex >= count! }

    private var elementPath: [any CodingKey] { codingPath + [IndexKey(currentIndex)] }

    /// Decodes the next element with `read`, moving on only when it succeeds.
    private mutating func next<T>(_ type: T.Type, _ read: (TapeSession, Int, () -> [any CodingKey]) throws -> T) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: elementPath, debugDescription: "Unkeyed container is at end."))
        }
        let (path, position) = (codingPath, currentIndex)
        let value = try read(session, node) { path + [IndexKey(position)] }
        node = Int(session.nodes[node].next)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any?.self, .init(codingPath: elementPath, debugDescription: "Unkeyed container is at end."))
        }
        guard session.nodes[node].kind == .null else { return false }
        node += 1
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try $0.bool(at: $1, path: $2()) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try $0.string(at: $1, path: $2()) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try $0.double(at: $1, path: $2()) } }
    mutating func decode(_: Float.Type) throws -> Float { throw session.leave() }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try $0.integer(type, at: $1, path: $2()) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try $0.integer(type, at: $1, path: $2()) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try $0.integer(type, at: $1, path: $2()) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try $0.integer(type, at: $1, path: $2()) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try $0.integer(type, at: $1, path: $2()) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try $0.integer(type, at: $1, path: $2()) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try $0.integer(type, at: $1, path: $2()) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try $0.integer(type, at: $1, path: $2()) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try $0.integer(type, at: $1, path: $2()) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try $0.integer(type, at: $1, path: $2()) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type) { try $0.decode(type, at: $1, path: $2()) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) {
            KeyedDecodingContainer(try TapeKeyedContainer<NestedKey>(session: $0, index: $1, codingPath: $2()))
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try TapeUnkeyedContainer(session: $0, index: $1, codingPath: $2()) }
    }

    mutating func superDecoder() throws -> any Decoder { throw session.leave() }
}

private struct TapeSingleValueContainer: SingleValueDecodingContainer {
    let session: TapeSession
    let index: Int
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { session.nodes[index].kind == .null }
    func decode(_: Bool.Type) throws -> Bool { try session.bool(at: index, path: codingPath) }
    func decode(_: String.Type) throws -> String { try session.string(at: index, path: codingPath) }
    func decode(_: Double.Type) throws -> Double { try session.double(at: index, path: codingPath) }
    func decode(_: Float.Type) throws -> Float { throw session.leave() }
    func decode(_ type: Int.Type) throws -> Int { try session.integer(type, at: index, path: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try session.integer(type, at: index, path: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try session.integer(type, at: index, path: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try session.integer(type, at: index, path: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try session.integer(type, at: index, path: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try session.integer(type, at: index, path: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try session.integer(type, at: index, path: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try session.integer(type, at: index, path: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try session.integer(type, at: index, path: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try session.integer(type, at: index, path: codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try session.decode(type, at: index, path: codingPath) }
}
