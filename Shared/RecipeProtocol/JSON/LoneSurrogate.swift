import Foundation

/// JSON may escape a character outside the Basic Multilingual Plane as a UTF-16 surrogate pair (🍅 as
/// `\ud83c\udf45`). Half a pair is no character: Foundation refuses the whole frame as not JSON, and a client that
/// cut text inside an emoji (a JavaScript `slice` by UTF-16 units does) was told its frame was not UTF-8 JSON. This
/// finds the half, so the refusal can say what it is and where.
public enum LoneSurrogate {
    /// The first `\uD800`–`\uDFFF` escape in `json` that is not half of a pair (a high one followed by a low one),
    /// as written, with the byte offset of its backslash; nil when there is none.
    public static func first(in json: Data) -> (escape: String, offset: Int)? {
        json.withUnsafeBytes { raw -> (escape: String, offset: Int)? in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let base = bytes.baseAddress else { return nil }
            /// The value of the `\uXXXX` escape whose `u` is at `index`, or nil.
            func unit(at index: Int) -> UInt32? {
                guard index + 5 <= bytes.count, bytes[index] == UInt8(ascii: "u") else { return nil }
                var value: UInt32 = 0
                for offset in 1...4 {
                    guard let digit = hexValue(bytes[index + offset]) else { return nil }
                    value = value << 4 | digit
                }
                return value
            }
            var index = 0
            while index < bytes.count {
                guard let found = memchr(base + index, Int32(UInt8(ascii: "\\")), bytes.count - index) else { return nil }
                let start = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                var end = start
                while end < bytes.count, bytes[end] == UInt8(ascii: "\\") { end += 1 }
                index = end
                // An even run of backslashes is that many halves of literal backslashes: no escape follows.
                guard (end - start) % 2 == 1, let value = unit(at: end) else { continue }
                let escapeStart = end - 1
                switch value {
                case 0xD800...0xDBFF:
                    if end + 6 < bytes.count, bytes[end + 5] == UInt8(ascii: "\\"), let low = unit(at: end + 6), (0xDC00...0xDFFF).contains(low) {
                        index = end + 11
                        continue
                    }
                case 0xDC00...0xDFFF:
                    break
                default:
                    index = end + 5
                    continue
                }
                return (String(decoding: UnsafeBufferPointer(rebasing: bytes[escapeStart..<(end + 5)]), as: UTF8.self), escapeStart)
            }
            return nil
        }
    }

    /// The refusal of a frame that holds half a surrogate pair, or nil when `json` holds none.
    public static func problem(in json: Data, frame: String = "frame 0") -> String? {
        guard let found = first(in: json) else { return nil }
        return "\(frame) holds \(found.escape) at byte \(found.offset): half of a character written as a UTF-16 surrogate pair, "
            + "without its other half (text cut inside an emoji or a rare letter); send whole characters, as the character "
            + "itself or as both halves (🍅 is \\ud83c\\udf45)"
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}
