import Foundation

/// A quick scan for over-deep JSON, run before any parser sees the bytes.
enum JSONNesting {
    /// `true` when objects/arrays in `json` nest deeper than `limit`.
    /// Brackets inside strings do not count; the bytes need not be valid JSON.
    static func exceeds(_ limit: Int, in json: Data) -> Bool {
        json.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            var depth = 0
            var inString = false
            var escaped = false
            for byte in bytes {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    if depth > limit { return true }
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                default:
                    break
                }
            }
            return false
        }
    }
}
