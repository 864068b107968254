import Foundation

/// Text on the wire may not hold U+0000 (`\u0000` in JSON). SQLite's text binding ends a value at it, so a stored
/// "a\u0000b" would read back as "a", and "\u0000x" as an empty name that validation never saw. A request that holds
/// it anywhere in its body is refused, naming where.
public enum NULText {
    /// Whether `json` escapes U+0000 in a string: `\u0000` after an odd run of backslashes (an even run is a literal
    /// backslash followed by the letters "u0000"). Valid JSON has backslashes only inside strings.
    public static func isEscaped(in json: Data) -> Bool {
        json.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = 0
            while index < bytes.count {
                guard let found = memchr(bytes.baseAddress! + index, Int32(UInt8(ascii: "\\")), bytes.count - index) else { return false }
                var end = bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                let start = end
                while end < bytes.count, bytes[end] == UInt8(ascii: "\\") { end += 1 }
                if (end - start) % 2 == 1, end + 5 <= bytes.count, bytes[end] == UInt8(ascii: "u"),
                   bytes[end + 1] == 0x30, bytes[end + 2] == 0x30, bytes[end + 3] == 0x30, bytes[end + 4] == 0x30 {
                    return true
                }
                index = end
            }
            return false
        }
    }

    /// Where the first text holding U+0000 is, as a JSON path ("body.recipe.ingredients[2].text"; a key holding it is
    /// named by the object it is in), or nil when no text holds it (or `json` is not JSON).
    public static func path(in json: Data) -> String? {
        guard let value = try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed]) else { return nil }
        return path(in: value, at: "", depth: 0)
    }

    private static func path(in value: Any, at path: String, depth: Int) -> String? {
        guard depth <= WireProtocol.maxNestingDepth + 1 else { return nil }
        switch value {
        case let text as String:
            return text.holdsNUL ? (path.isEmpty ? "the top level" : path) : nil
        case let object as [String: Any]:
            for key in object.keys.sorted() {
                if key.holdsNUL { return path.isEmpty ? "a key at the top level" : "a key in \(path)" }
                if let found = Self.path(in: object[key]!, at: path.isEmpty ? key : "\(path).\(key)", depth: depth + 1) { return found }
            }
            return nil
        case let list as [Any]:
            for (index, item) in list.enumerated() {
                if let found = Self.path(in: item, at: "\(path)[\(index)]", depth: depth + 1) { return found }
            }
            return nil
        default:
            return nil
        }
    }
}
