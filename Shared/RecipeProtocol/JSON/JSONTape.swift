/// A JSON document read in one pass into a flat list of nodes (a "tape"): what `WireJSONDecoder`
/// decodes from without reading the bytes twice.
///
/// Strict RFC 8259 over UTF-8: the only whitespace is space, tab, CR and LF; strings are valid
/// UTF-8 without raw control characters; escapes are the eight short ones and `\uXXXX` (a
/// surrogate only as a well-formed pair); numbers follow the grammar. Anything else — and any
/// document nested deeper than `maxDepth` — is refused with `nil`, and the caller then lets
/// Foundation's decoder give the answer (and the error message) it always gave.
struct JSONTape {
    enum Kind: UInt8 {
        case null, `true`, `false`, number, string, array, object
    }

    /// One value. For a container, its members follow it (an object's as key, value, key, value…),
    /// and `next` is the index just past its last member.
    struct Node {
        var kind: Kind
        /// For a string: whether it has escapes. For a number: whether it has a fraction or exponent.
        var flag: Bool
        /// Strings: the text between the quotes; numbers: the literal.
        var start: Int32
        var end: Int32
        /// Containers: how many values (an object's members, not counting keys).
        var count: Int32
        /// The index just past this value and everything inside it.
        var next: Int32
    }

    private(set) var nodes: [Node] = []

    /// The tape of `bytes`, or `nil` when they are not a JSON document this reader takes.
    init?(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) {
        guard bytes.count < Int(Int32.max) else { return nil }
        var reader = Reader(bytes: bytes, maxDepth: maxDepth)
        nodes.reserveCapacity(max(8, bytes.count / 8))
        reader.skipSpace()
        guard reader.value(into: &nodes, depth: 0) else { return nil }
        reader.skipSpace()
        guard reader.index == bytes.count else { return nil }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let maxDepth: Int
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        var peek: UInt8 { index < bytes.count ? bytes[index] : 0 }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value(into nodes: inout [Node], depth: Int) -> Bool {
            let start = index
            switch peek {
            case UInt8(ascii: "\""):
                index += 1
                guard let escaped = string() else { return false }
                nodes.append(Node(kind: .string, flag: escaped, start: Int32(start + 1), end: Int32(index - 1), count: 0,
                                  next: Int32(nodes.count + 1)))
                return true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < maxDepth else { return false }
                let isObject = peek == UInt8(ascii: "{")
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                let at = nodes.count
                nodes.append(Node(kind: isObject ? .object : .array, flag: false, start: Int32(start), end: 0, count: 0, next: 0))
                index += 1
                skipSpace()
                var count: Int32 = 0
                if peek == close {
                    index += 1
                } else {
                    while true {
                        skipSpace()
                        if isObject {
                            guard peek == UInt8(ascii: "\"") else { return false }
                            let keyStart = index + 1
                            index += 1
                            guard let escaped = string() else { return false }
                            nodes.append(Node(kind: .string, flag: escaped, start: Int32(keyStart), end: Int32(index - 1), count: 0,
                                              next: Int32(nodes.count + 1)))
                            skipSpace()
                            guard peek == UInt8(ascii: ":") else { return false }
                            index += 1
                            skipSpace()
                        }
                        guard value(into: &nodes, depth: depth + 1) else { return false }
                        count += 1
                        skipSpace()
                        if peek == UInt8(ascii: ",") {
                            index += 1
                            continue
                        }
                        guard peek == close else { return false }
                        index += 1
                        break
                    }
                }
                nodes[at].end = Int32(index)
                nodes[at].count = count
                nodes[at].next = Int32(nodes.count)
                return true
            case UInt8(ascii: "t"):
                guard literal("true") else { return false }
                nodes.append(Node(kind: .true, flag: false, start: Int32(start), end: Int32(index), count: 0, next: Int32(nodes.count + 1)))
                return true
            case UInt8(ascii: "f"):
                guard literal("false") else { return false }
                nodes.append(Node(kind: .false, flag: false, start: Int32(start), end: Int32(index), count: 0, next: Int32(nodes.count + 1)))
                return true
            case UInt8(ascii: "n"):
                guard literal("null") else { return false }
                nodes.append(Node(kind: .null, flag: false, start: Int32(start), end: Int32(index), count: 0, next: Int32(nodes.count + 1)))
                return true
            default:
                guard let fractional = number() else { return false }
                nodes.append(Node(kind: .number, flag: fractional, start: Int32(start), end: Int32(index), count: 0,
                                  next: Int32(nodes.count + 1)))
                return true
            }
        }

        /// Inside a string: steps past the closing quote; whether it had escapes, or `nil` when it is not valid.
        mutating func string() -> Bool? {
            var escaped = false
            while index < bytes.count {
                // Eight plain bytes at a time (no quote, backslash, control or non-ASCII byte among them).
                while index + 8 <= bytes.count, JSONTape.plainASCII(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)) {
                    index += 8
                }
                guard index < bytes.count else { return nil } // no closing quote
                let byte = bytes[index]
                if byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return escaped
                case UInt8(ascii: "\\"):
                    escaped = true
                    index += 1
                    guard index < bytes.count else { return nil }
                    switch bytes[index] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                         UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 1
                    case UInt8(ascii: "u"):
                        guard let code = hex4(at: index + 1) else { return nil }
                        index += 5
                        if code >= 0xDC00 && code <= 0xDFFF { return nil }
                        if code >= 0xD800 && code <= 0xDBFF {
                            // Only as the first half of a pair.
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u"),
                                  let low = hex4(at: index + 2), low >= 0xDC00 && low <= 0xDFFF else { return nil }
                            index += 6
                        }
                    default:
                        return nil
                    }
                case 0..<0x20:
                    return nil
                default:
                    guard utf8Sequence() else { return nil }
                }
            }
            return nil
        }

        func hex4(at position: Int) -> UInt32? {
            guard position + 4 <= bytes.count else { return nil }
            var code: UInt32 = 0
            for offset in 0..<4 {
                guard let digit = JSONTape.hexValue(bytes[position + offset]) else { return nil }
                code = code << 4 | digit
            }
            return code
        }

        /// One well-formed UTF-8 sequence of two to four bytes (no overlongs, surrogates or values past U+10FFFF).
        mutating func utf8Sequence() -> Bool {
            let lead = bytes[index]
            let count: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: count = 2
            case 0xE0: count = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: count = 3
            case 0xED: count = 3; high = 0x9F
            case 0xF0: count = 4; low = 0x90
            case 0xF1...0xF3: count = 4
            case 0xF4: count = 4; high = 0x8F
            default: return false
            }
            guard index + count <= bytes.count else { return false }
            let second = bytes[index + 1]
            guard second >= low && second <= high else { return false }
            for offset in 2..<count where bytes[index + offset] & 0xC0 != 0x80 { return false }
            index += count
            return true
        }

        /// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? — whether it has a fraction or exponent; `nil` if not a number.
        mutating func number() -> Bool? {
            var fractional = false
            if peek == UInt8(ascii: "-") { index += 1 }
            guard JSONTape.isDigit(peek) else { return nil }
            let first = peek
            index += 1
            if first != UInt8(ascii: "0") { skipDigits() }
            if peek == UInt8(ascii: ".") {
                fractional = true
                index += 1
                guard JSONTape.isDigit(peek) else { return nil }
                skipDigits()
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                fractional = true
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard JSONTape.isDigit(peek) else { return nil }
                skipDigits()
            }
            return fractional
        }

        mutating func skipDigits() {
            while JSONTape.isDigit(peek) { index += 1 }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }
    }

    /// Whether none of the eight bytes needs a look inside a string: each is ASCII, at least 0x20, and
    /// neither `"` nor `\` (bit tricks from "Bit Twiddling Hacks": a byte is flagged when it is below a bound).
    @inline(__always)
    static func plainASCII(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let control = (word &- ones &* 0x20) & ~word & highs
        let quote = hasZeroByte(word ^ (ones &* 0x22))
        let backslash = hasZeroByte(word ^ (ones &* 0x5C))
        return (control | quote | backslash | (word & highs)) == 0
    }

    /// Like `plainASCII`, but bytes of 0x80 and above count as plain (what a writer copies as they are).
    @inline(__always)
    static func plainText(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let control = (word &- ones &* 0x20) & ~word & highs
        let quote = hasZeroByte(word ^ (ones &* 0x22))
        let backslash = hasZeroByte(word ^ (ones &* 0x5C))
        return (control | quote | backslash) == 0
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// The text of a string node: its bytes when it has no escapes, otherwise with the escapes resolved.
    static func text(of node: Node, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        let raw = UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)])
        guard node.flag else { return String(decoding: raw, as: UTF8.self) }
        var utf8: [UInt8] = []
        utf8.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                index += 1
                continue
            }
            let escape = raw[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                var code = hex(raw, index)
                index += 4
                if code >= 0xD800 && code <= 0xDBFF {
                    let low = hex(raw, index + 2)
                    index += 6
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                // Checked by the reader: never a lone surrogate.
                utf8.append(contentsOf: String(Character(Unicode.Scalar(code)!)).utf8)
            default: utf8.append(escape) // " \ /
            }
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    private static func hex(_ raw: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt32 {
        var code: UInt32 = 0
        for offset in 0..<4 { code = code << 4 | (hexValue(raw[at + offset]) ?? 0) }
        return code
    }
}
