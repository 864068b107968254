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
            var found: (escape: String, offset: Int)?
            forEachHalf(in: bytes) { range in
                found = (String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self), range.lowerBound)
                return false
            }
            return found
        }
    }

    /// `json` without its escapes of half a surrogate pair (each is no character; what a browser would show as one
    /// broken glyph): how a page's JSON-LD that a site cut inside an emoji still reads. `json` itself when it has none.
    public static func removingHalves(from json: String) -> String {
        var json = json
        return json.withUTF8 { bytes -> String? in
            var halves: [Range<Int>] = []
            forEachHalf(in: bytes) { halves.append($0); return true }
            guard !halves.isEmpty else { return nil }
            var kept: [UInt8] = []
            kept.reserveCapacity(bytes.count)
            var from = 0
            for half in halves {
                kept.append(contentsOf: bytes[from..<half.lowerBound])
                from = half.upperBound
            }
            kept.append(contentsOf: bytes[from...])
            return String(decoding: kept, as: UTF8.self)
        } ?? json
    }

    /// Calls `body` with the byte range of each escape of half a surrogate pair in `bytes`, in order, while it
    /// returns true. Backslashes are only inside strings in JSON; an even run of them is that many halves of
    /// literal backslashes, after which no escape follows.
    private static func forEachHalf(in bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Bool) {
        guard let base = bytes.baseAddress else { return }
        /// The value of the escape (`\u` and four hex digits) whose `u` is at `index`, or nil.
        func unit(at index: Int) -> UInt32? {
            guard index + 5 <= bytes.count, bytes[index] == UInt8(ascii: "u") else { return nil }
            var value: UInt32 = 0
            for offset in 1...4 {
                guard let digit = JSONTape.hexValue(bytes[index + offset]) else { return nil }
                value = value << 4 | digit
            }
            return value
        }
        var index = 0
        while index < bytes.count {
            guard let found = memchr(base + index, Int32(UInt8(ascii: "\\")), bytes.count - index) else { return }
            let start = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            var end = start
            while end < bytes.count, bytes[end] == UInt8(ascii: "\\") { end += 1 }
            index = end
            guard (end - start) % 2 == 1, let value = unit(at: end) else { continue }
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
            index = end + 5
            guard body((end - 1)..<(end + 5)) else { return }
        }
    }

    /// The refusal of a frame that holds half a surrogate pair, or nil when `json` holds none.
    public static func problem(in json: Data, frame: String = "frame 0") -> String? {
        guard let found = first(in: json) else { return nil }
        return "\(frame) holds \(found.escape) at byte \(found.offset): half of a character written as a UTF-16 surrogate pair, "
            + "without its other half (text cut inside an emoji or a rare letter); send whole characters, as the character "
            + "itself or as both halves (🍅 is \\ud83c\\udf45)"
    }
}
