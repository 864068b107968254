import Foundation

/// Encodes values as the wire's JSON by writing bytes as `encode(to:)` goes, with no tree in between.
///
/// The output is what Foundation's `JSONEncoder` (set up as `WireCodec.makeEncoder()`) writes, value
/// for value: the same number and string texts (slashes unescaped), dates as ISO 8601 with
/// milliseconds, `Data` as base64, URLs as their absolute string, `nil` properties left out. Only the
/// order of an object's keys differs: the order they were encoded in, where Foundation's follows its
/// hash table (JSON objects are unordered). An `encode(to:)` that writes to a container after a
/// later one was opened, or asks for a super-encoder, is encoded by Foundation instead, as is a value
/// that fails (its error is Foundation's).
public struct WireJSONEncoder: Sendable {
    private let fallback: JSONEncoder

    /// An encoder with the wire's rules.
    public init() {
        fallback = WireCodec.makeEncoder()
    }

    /// The JSON text of `value`.
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        if let bytes = fastEncode(value) { return Data(bytes) }
        return try fallback.encode(value)
    }

    /// The fast path alone: the bytes, or `nil` when Foundation's encoder has to do it (tests compare the two).
    public func fastEncode<T: Encodable>(_ value: T) -> [UInt8]? {
        let sink = JSONSink()
        do {
            try sink.value(value, path: [])
            sink.close(above: 0)
        } catch {
            return nil
        }
        return sink.bytes
    }
}

/// Thrown where Foundation's encoder must do the work.
private struct LeftToFoundationEncoder: Error {}

/// The bytes written so far and the containers still open.
private final class JSONSink {
    @exclusivity(unchecked) var bytes: [UInt8] = []
    /// The open containers, outermost first: whether each is an object, how many values it has, and
    /// its identity (so a container used after a later one was opened is noticed).
    @exclusivity(unchecked) private var open: [(isObject: Bool, count: Int, id: Int)] = []
    private var nextID = 0

    init() {
        bytes.reserveCapacity(256)
    }

    var depth: Int { open.count }

    /// Opens a container at `level` (the depth of the encoder asking); returns its identity.
    func begin(object: Bool, level: Int) throws -> Int {
        guard open.count == level else { throw LeftToFoundationEncoder() }
        nextID += 1
        open.append((object, 0, nextID))
        bytes.append(object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        return nextID
    }

    /// Closes every container deeper than `level`.
    func close(above level: Int) {
        while open.count > level {
            bytes.append(open.removeLast().isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        }
    }

    /// Before a container at `level` with identity `id` writes its next value (and key).
    func prepare(level: Int, id: Int) throws {
        close(above: level + 1)
        guard open.count == level + 1, open[level].id == id else { throw LeftToFoundationEncoder() }
        if open[level].count > 0 { bytes.append(UInt8(ascii: ",")) }
        open[level].count += 1
    }

    func key(_ key: String) {
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    // MARK: Scalars

    func null() { bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C]) }

    func bool(_ value: Bool) {
        if value { bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65]) } else { bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65]) }
    }

    func integer<I: BinaryInteger>(_ value: I) {
        if let small = Int(exactly: value), small >= 0 && small < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(small))
        } else {
            bytes.append(contentsOf: String(value).utf8)
        }
    }

    func double(_ value: Double) throws {
        guard value.isFinite else { throw LeftToFoundationEncoder() }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            var index = 0
            while index < utf8.count {
                // Non-ASCII bytes are written as they are; only quotes, backslashes and controls need a look.
                while index + 8 <= utf8.count, JSONTape.plainText(UnsafeRawPointer(utf8.baseAddress! + index).loadUnaligned(as: UInt64.self)) {
                    index += 8
                }
                guard index < utf8.count else { break }
                let byte = utf8[index]
                index += 1
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<(index - 1)]))
                runStart = index
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
                case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
                case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                              Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 0xF)]])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    // MARK: Any value

    /// Writes `value` where a value is expected (after a key, a comma, or at the top).
    func value<T: Encodable>(_ value: T, path: @autoclosure () -> [any CodingKey]) throws {
        if T.self == String.self { return string(value as! String) }
        if T.self == Int.self { return integer(value as! Int) }
        if T.self == Bool.self { return bool(value as! Bool) }
        if T.self == Double.self { return try double(value as! Double) }
        if T.self == Int64.self { return integer(value as! Int64) }
        if T.self == Date.self {
            let date = value as! Date
            return string(WireDateText.format(date) ?? date.formatted(WireDates.withMilliseconds))
        }
        if T.self == UUID.self {
            bytes.append(UInt8(ascii: "\""))
            UUIDText.write(value as! UUID, into: &bytes)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        if T.self == Data.self { return string((value as! Data).base64EncodedString()) }
        if T.self == URL.self { return string((value as! URL).absoluteString) }
        if T.self == Float.self || T.self == Decimal.self { throw LeftToFoundationEncoder() }
        if T.self == JSONValue.self { return try jsonValue(value as! JSONValue) }
        let level = depth
        let mark = bytes.count
        try value.encode(to: SinkEncoder(sink: self, level: level, codingPath: path()))
        if bytes.count == mark { bytes.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")]) } // encoded nothing: {}
        close(above: level)
    }
}

extension JSONSink {
    /// Writes a `JSONValue` as its `encode(to:)` does through the containers (an object's members in the
    /// dictionary's order), without a container per value.
    func jsonValue(_ value: JSONValue) throws {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let number): try double(number)
        case .string(let text): string(text)
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in values.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                try jsonValue(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (name, member) in members {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                key(name)
                try jsonValue(member)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}

private struct SinkEncoder: Encoder {
    let sink: JSONSink
    /// The depth at which this encoder's container opens.
    let level: Int
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy _: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(SinkKeyedContainer<Key>(sink: sink, level: level, id: openOrReuse(object: true), codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        SinkUnkeyedContainer(sink: sink, level: level, id: openOrReuse(object: false), codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SinkSingleValueContainer(sink: sink, level: level, codingPath: codingPath)
    }

    /// The container's identity; 0 (never valid) when it cannot be opened here, so its first write fails.
    private func openOrReuse(object: Bool) -> Int {
        (try? sink.begin(object: object, level: level)) ?? 0
    }
}

private struct SinkKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: JSONSink
    let level: Int
    let id: Int
    let codingPath: [any CodingKey]

    private func start(_ key: Key) throws {
        try sink.prepare(level: level, id: id)
        sink.key(key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws { try start(key); sink.null() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try start(key); sink.bool(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { try start(key); sink.string(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try start(key); try sink.double(value) }
    mutating func encode(_: Float, forKey _: Key) throws { throw LeftToFoundationEncoder() }
    mutating func encode(_ value: Int, forKey key: Key) throws { try start(key); sink.integer(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try start(key); sink.integer(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try start(key); sink.integer(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try start(key); sink.integer(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try start(key); sink.integer(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try start(key); sink.integer(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try start(key); sink.integer(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try start(key); sink.integer(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try start(key); sink.integer(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try start(key); sink.integer(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try start(key)
        try sink.value(value, path: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let id = (try? start(key)).flatMap { try? sink.begin(object: true, level: level + 1) } ?? 0
        return KeyedEncodingContainer(SinkKeyedContainer<NestedKey>(sink: sink, level: level + 1, id: id, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let id = (try? start(key)).flatMap { try? sink.begin(object: false, level: level + 1) } ?? 0
        return SinkUnkeyedContainer(sink: sink, level: level + 1, id: id, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { Unsupported.encoder(sink) }
    mutating func superEncoder(forKey _: Key) -> any Encoder { Unsupported.encoder(sink) }
}

private struct SinkUnkeyedContainer: UnkeyedEncodingContainer {
    let sink: JSONSink
    let level: Int
    let id: Int
    let codingPath: [any CodingKey]
    private(set) var count = 0

    init(sink: JSONSink, level: Int, id: Int, codingPath: [any CodingKey]) {
        self.sink = sink
        self.level = level
        self.id = id
        self.codingPath = codingPath
    }

    private mutating func start() throws {
        try sink.prepare(level: level, id: id)
        count += 1
    }

    mutating func encodeNil() throws { try start(); sink.null() }
    mutating func encode(_ value: Bool) throws { try start(); sink.bool(value) }
    mutating func encode(_ value: String) throws { try start(); sink.string(value) }
    mutating func encode(_ value: Double) throws { try start(); try sink.double(value) }
    mutating func encode(_: Float) throws { throw LeftToFoundationEncoder() }
    mutating func encode(_ value: Int) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: Int8) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: Int16) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: Int32) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: Int64) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: UInt) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: UInt8) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: UInt16) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: UInt32) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: UInt64) throws { try start(); sink.integer(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try start()
        try sink.value(value, path: codingPath + [WireIndexKey(count - 1)])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let id = (try? start()).flatMap { try? sink.begin(object: true, level: level + 1) } ?? 0
        return KeyedEncodingContainer(SinkKeyedContainer<NestedKey>(sink: sink, level: level + 1, id: id, codingPath: codingPath + [WireIndexKey(count - 1)]))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let id = (try? start()).flatMap { try? sink.begin(object: false, level: level + 1) } ?? 0
        return SinkUnkeyedContainer(sink: sink, level: level + 1, id: id, codingPath: codingPath + [WireIndexKey(count - 1)])
    }

    mutating func superEncoder() -> any Encoder { Unsupported.encoder(sink) }
}

private struct SinkSingleValueContainer: SingleValueEncodingContainer {
    let sink: JSONSink
    let level: Int
    let codingPath: [any CodingKey]

    /// A single value is written once, where the encoder's value goes, with nothing open inside it.
    private func start() throws {
        guard sink.depth == level else { throw LeftToFoundationEncoder() }
    }

    mutating func encodeNil() throws { try start(); sink.null() }
    mutating func encode(_ value: Bool) throws { try start(); sink.bool(value) }
    mutating func encode(_ value: String) throws { try start(); sink.string(value) }
    mutating func encode(_ value: Double) throws { try start(); try sink.double(value) }
    mutating func encode(_: Float) throws { throw LeftToFoundationEncoder() }
    mutating func encode(_ value: Int) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: Int8) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: Int16) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: Int32) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: Int64) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: UInt) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: UInt8) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: UInt16) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: UInt32) throws { try start(); sink.integer(value) }
    mutating func encode(_ value: UInt64) throws { try start(); sink.integer(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try start()
        try sink.value(value, path: codingPath)
    }
}

/// An encoder whose every write fails: what a super-encoder request gets, so Foundation takes over.
private enum Unsupported {
    static func encoder(_ sink: JSONSink) -> any Encoder {
        SinkEncoder(sink: sink, level: -1, codingPath: [])
    }
}

struct WireIndexKey: CodingKey {
    var stringValue: String { "Index \(intValue!)" }
    var intValue: Int?
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}
