#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Searching a page's UTF-8 bytes: ASCII case-insensitive, no Foundation bridging,
/// no regular expressions — the importer's hot path runs on these.
enum ByteScan {
    /// The offset of the first match of `needle` (lower-case ASCII) in `bytes` at or after `start`,
    /// comparing ASCII letters without case.
    static func find(_ needle: StaticString, in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int? = nil) -> Int? {
        let limit = min(end ?? bytes.count, bytes.count)
        return needle.withUTF8Buffer { pattern -> Int? in
            guard let first = pattern.first, limit - pattern.count >= start else { return nil }
            var index = start
            let last = limit - pattern.count
            // A first byte that is not a letter has one form: jump to it with memchr.
            let exact = !((first >= 0x61 && first <= 0x7A) || (first >= 0x41 && first <= 0x5A))
            while index <= last {
                if exact {
                    guard let base = bytes.baseAddress,
                          let found = memchr(base + index, Int32(first), last - index + 1) else { return nil }
                    index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                }
                if lower(bytes[index]) == first {
                    var matched = 1
                    while matched < pattern.count && lower(bytes[index + matched]) == pattern[matched] { matched += 1 }
                    if matched == pattern.count { return index }
                }
                index += 1
            }
            return nil
        }
    }

    /// The index of the first ASCII case-insensitive match of `needle` in `text` at or after `start`.
    static func find(_ needle: StaticString, in text: String, from start: String.Index) -> String.Index? {
        let utf8 = text.utf8
        let offset = utf8.distance(from: utf8.startIndex, to: start)
        let found = utf8.withContiguousStorageIfAvailable { bytes in find(needle, in: bytes, from: offset) }
        if let found { return found.map { utf8.index(utf8.startIndex, offsetBy: $0) } }
        // Not contiguous (a bridged string): copy once.
        return Array(utf8).withUnsafeBufferPointer { find(needle, in: $0, from: offset) }.map { utf8.index(utf8.startIndex, offsetBy: $0) }
    }

    /// The offset of the first `byte` at or after `start`.
    static func find(byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress, let found = memchr(base + start, Int32(byte), bytes.count - start) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// The attributes of a tag's text (`meta name="x" content='y'`), names in lower case.
    static func attributes(of tag: Substring.UTF8View) -> [String: String] {
        if let found = tag.withContiguousStorageIfAvailable({ attributes(of: $0) }) { return found }
        return Array(tag).withUnsafeBufferPointer { attributes(of: $0) }
    }

    /// The attributes of a tag's bytes, read in place.
    static func attributes(of bytes: UnsafeBufferPointer<UInt8>) -> [String: String] {
        var result: [String: String] = [:]
        var index = 0
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x2F }
        // Skip the tag name.
        while index < bytes.count && !isSpace(bytes[index]) { index += 1 }
        while index < bytes.count {
            while index < bytes.count && isSpace(bytes[index]) { index += 1 }
            let nameStart = index
            while index < bytes.count && !isSpace(bytes[index]) && bytes[index] != UInt8(ascii: "=") { index += 1 }
            let name = String(decoding: bytes[nameStart..<index].lazy.map(lower), as: UTF8.self)
            while index < bytes.count && isSpace(bytes[index]) && bytes[index] != 0x2F { index += 1 }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                if !name.isEmpty { result[name] = "" }
                continue
            }
            index += 1
            while index < bytes.count && (bytes[index] == 0x20 || bytes[index] == 0x09) { index += 1 }
            guard index < bytes.count else { break }
            let quote = bytes[index]
            let value: Slice<UnsafeBufferPointer<UInt8>>
            if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                let valueStart = index + 1
                var valueEnd = valueStart
                while valueEnd < bytes.count && bytes[valueEnd] != quote { valueEnd += 1 }
                value = bytes[valueStart..<min(valueEnd, bytes.count)]
                index = valueEnd + 1
            } else {
                let valueStart = index
                while index < bytes.count && bytes[index] != 0x20 && bytes[index] != 0x09 { index += 1 }
                value = bytes[valueStart..<index]
            }
            if !name.isEmpty && result[name] == nil { result[name] = String(decoding: value, as: UTF8.self) }
        }
        return result
    }
}
