import Foundation

/// Reads a request envelope's `v`, `id` and `op` in one pass over the bytes, checking on the
/// way that the whole frame is JSON (RFC 8259, UTF-8) nested no deeper than the limit.
///
/// It is the fast path of `WireCodec.decodeRequestHeader`: it answers only for a well-formed
/// envelope whose three fields are plain (an integer `v`, `id` and `op` without escapes, each
/// given once) and says `nil` for anything else, which then takes the full path with its
/// exact error messages. So accepting is the only thing it must get right: what it accepts
/// is JSON that Foundation's decoder reads, with the same three values.
enum EnvelopeScanner {
    static func header(of frame: Data, maxDepth: Int) -> RequestHeader? {
        frame.withUnsafeBytes { raw -> RequestHeader? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, !raw.isEmpty else { return nil }
            var scanner = Scan(bytes: base, end: raw.count, maxDepth: maxDepth)
            return scanner.envelope()
        }
    }

    private struct Scan {
        let bytes: UnsafePointer<UInt8>
        let end: Int
        let maxDepth: Int
        var index = 0

        init(bytes: UnsafePointer<UInt8>, end: Int, maxDepth: Int) {
            self.bytes = bytes
            self.end = end
            self.maxDepth = maxDepth
        }

        mutating func envelope() -> RequestHeader? {
            skipSpace()
            guard peek == UInt8(ascii: "{") else { return nil }
            index += 1
            var version: Int?
            var id: String?
            var op: String?
            skipSpace()
            if peek == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipSpace()
                    guard let keyStart = stringStart() else { return nil }
                    guard let keyEnd = skipString(), let key = plainText(keyStart, keyEnd) else { return nil }
                    skipSpace()
                    guard peek == UInt8(ascii: ":") else { return nil }
                    index += 1
                    skipSpace()
                    switch key {
                    case "v":
                        guard version == nil, let value = integer() else { return nil }
                        version = value
                    case "id", "op":
                        guard let start = stringStart(), let stop = skipString(), let text = plainText(start, stop) else { return nil }
                        if key == "id" {
                            guard id == nil else { return nil }
                            id = text
                        } else {
                            guard op == nil else { return nil }
                            op = text
                        }
                    default:
                        guard skipValue(depth: 1) else { return nil }
                    }
                    skipSpace()
                    if peek == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    guard peek == UInt8(ascii: "}") else { return nil }
                    index += 1
                    break
                }
            }
            skipSpace()
            guard index == end, let version, let id, let op,
                  (1...WireProtocol.maxRequestIDLength).contains(id.utf8.count) else { return nil }
            return RequestHeader(version: version, id: id, op: op)
        }

        var peek: UInt8? { index < end ? bytes[index] : nil }

        mutating func skipSpace() {
            while index < end {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// At a `"`: steps past it and returns where the text starts.
        mutating func stringStart() -> Int? {
            guard peek == UInt8(ascii: "\"") else { return nil }
            index += 1
            return index
        }

        /// The text between `start` and the closing quote at `stop`, if it has no escapes.
        func plainText(_ start: Int, _ stop: Int) -> String? {
            let buffer = UnsafeBufferPointer(start: bytes + start, count: stop - start)
            if buffer.contains(UInt8(ascii: "\\")) { return nil }
            return String(decoding: buffer, as: UTF8.self)
        }

        /// Inside a string: steps past its closing quote and returns the quote's position.
        mutating func skipString() -> Int? {
            while index < end {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return index - 1
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < end else { return nil }
                    switch bytes[index] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                         UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 1
                    case UInt8(ascii: "u"):
                        guard index + 4 < end else { return nil }
                        var code: UInt32 = 0
                        for offset in 1...4 {
                            guard let digit = JSONTape.hexValue(bytes[index + offset]) else { return nil }
                            code = code << 4 | digit
                        }
                        // Surrogate pairs are left to the full path.
                        if (0xD800...0xDFFF).contains(code) { return nil }
                        index += 5
                    default:
                        return nil
                    }
                case 0..<0x20:
                    return nil
                case 0x80...:
                    guard skipUTF8Sequence() else { return nil }
                default:
                    index += 1
                }
            }
            return nil
        }

        /// One UTF-8 sequence of two to four bytes, well formed (no overlongs, surrogates or values past U+10FFFF).
        mutating func skipUTF8Sequence() -> Bool {
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
            guard index + count <= end else { return false }
            let second = bytes[index + 1]
            guard second >= low && second <= high else { return false }
            for offset in 2..<count where bytes[index + offset] & 0xC0 != 0x80 { return false }
            index += count
            return true
        }

        /// A plain integer (no fraction or exponent) that fits an `Int`; `nil` for any other value.
        mutating func integer() -> Int? {
            let start = index
            guard skipNumber() else { return nil }
            let text = UnsafeBufferPointer(start: bytes + start, count: index - start)
            guard !text.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else { return nil }
            return Int(String(decoding: text, as: UTF8.self))
        }

        /// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
        mutating func skipNumber() -> Bool {
            if peek == UInt8(ascii: "-") { index += 1 }
            guard let first = peek, Self.isDigit(first) else { return false }
            index += 1
            if first != UInt8(ascii: "0") { skipDigits() }
            if peek == UInt8(ascii: ".") {
                index += 1
                guard let next = peek, Self.isDigit(next) else { return false }
                skipDigits()
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard let next = peek, Self.isDigit(next) else { return false }
                skipDigits()
            }
            return true
        }

        mutating func skipDigits() {
            while let byte = peek, Self.isDigit(byte) { index += 1 }
        }

        static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        mutating func skipLiteral(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= end else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        /// Any JSON value; `depth` is the number of containers already open around it.
        mutating func skipValue(depth: Int) -> Bool {
            guard let byte = peek else { return false }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return skipString() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < maxDepth else { return false }
                let isObject = byte == UInt8(ascii: "{")
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index += 1
                skipSpace()
                if peek == close {
                    index += 1
                    return true
                }
                while true {
                    skipSpace()
                    if isObject {
                        guard stringStart() != nil, skipString() != nil else { return false }
                        skipSpace()
                        guard peek == UInt8(ascii: ":") else { return false }
                        index += 1
                        skipSpace()
                    }
                    guard skipValue(depth: depth + 1) else { return false }
                    skipSpace()
                    if peek == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    guard peek == close else { return false }
                    index += 1
                    return true
                }
            case UInt8(ascii: "t"): return skipLiteral("true")
            case UInt8(ascii: "f"): return skipLiteral("false")
            case UInt8(ascii: "n"): return skipLiteral("null")
            default: return skipNumber()
            }
        }
    }
}
