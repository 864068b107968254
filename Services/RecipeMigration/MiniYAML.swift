import Foundation

/// The part of YAML that recipe front matter uses (Chowdown, Cooklang): `key: value`,
/// quoted strings, `[a, b]` lists, `- item` lists, `|` and `>` blocks, and one level of
/// nested maps (`source:` with `name:` and `url:` under it, read as `source.name`).
/// Anything else is read as plain text rather than refused.
enum MiniYAML {
    /// The front matter at the start of `text` (between `---` lines) and the body after it.
    static func frontMatter(_ text: String) -> (fields: [String: Any], body: String)? {
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, first.trimmingCharacters(in: .whitespaces) == "---" else { return nil }
        guard let end = lines.dropFirst().firstIndex(where: { ["---", "..."].contains($0.trimmingCharacters(in: .whitespaces)) }) else { return nil }
        let fields = parse(lines[1..<end].map(String.init))
        return (fields, lines[(end + 1)...].joined(separator: "\n"))
    }

    static func parse(_ lines: [String]) -> [String: Any] {
        var result: [String: Any] = [:]
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty, !line.hasPrefix("#"), !line.hasPrefix(" "), !line.hasPrefix("\t"),
                  let colon = keyColon(line) else { continue }
            let key = unquote(String(line[..<colon]).trimmingCharacters(in: .whitespaces))
            let rest = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            // What is indented under the key: a list, a block, or a nested map.
            var nested: [String] = []
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces).isEmpty || lines[index].hasPrefix(" ")
                    || lines[index].hasPrefix("\t") || (rest.isEmpty && lines[index].hasPrefix("- ")) {
                nested.append(lines[index])
                index += 1
            }
            while nested.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { nested.removeLast() }
            if rest.hasPrefix("|") || rest.hasPrefix(">") {
                let indent = nested.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0.prefix { $0 == " " || $0 == "\t" }.count }.min() ?? 0
                let body = nested.map { String($0.dropFirst(min(indent, $0.count))) }
                result[key] = rest.hasPrefix("|") ? body.joined(separator: "\n") : folded(body)
            } else if !rest.isEmpty {
                result[key] = scalar(rest)
            } else if nested.contains(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("- ") || $0.trimmingCharacters(in: .whitespaces) == "-" }) {
                result[key] = list(nested)
            } else if !nested.isEmpty {
                let indent = nested.map { $0.prefix { $0 == " " || $0 == "\t" }.count }.min() ?? 0
                let inner = parse(nested.map { String($0.dropFirst(indent)) })
                result[key] = inner
                for (innerKey, value) in inner { result["\(key).\(innerKey)"] = value }
            }
        }
        return result
    }

    /// "- a" items; an item may continue on more-indented lines.
    private static func list(_ lines: [String]) -> [Any] {
        var items: [String] = []
        for line in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("- ") || trimmed == "-" {
                items.append(String(trimmed.dropFirst(1)).trimmingCharacters(in: .whitespaces))
            } else if !trimmed.isEmpty, !items.isEmpty {
                items[items.count - 1] += " " + trimmed
            }
        }
        return items.map { item -> Any in
            // "- name: x" items of a list of maps: their text.
            scalar(item)
        }
    }

    private static func folded(_ lines: [String]) -> String {
        var paragraphs: [String] = [""]
        for line in lines {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { paragraphs.append("") } else {
                paragraphs[paragraphs.count - 1] += (paragraphs[paragraphs.count - 1].isEmpty ? "" : " ") + line.trimmingCharacters(in: .whitespaces)
            }
        }
        return paragraphs.filter { !$0.isEmpty }.joined(separator: "\n")
    }

    /// The colon that ends a key (not one inside quotes or a URL's "https:").
    private static func keyColon(_ line: String) -> String.Index? {
        var quote: Character?
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == ":" {
                let next = line.index(after: index)
                if next == line.endIndex || line[next] == " " || line[next] == "\t" { return index }
            }
            index = line.index(after: index)
        }
        return nil
    }

    static func scalar(_ text: String) -> Any {
        let value = stripComment(text)
        if value.hasPrefix("[") && value.hasSuffix("]") {
            return split(String(value.dropFirst().dropLast())).map { unquote($0.trimmingCharacters(in: .whitespaces)) }.filter { !$0.isEmpty }
        }
        return unquote(value)
    }

    private static func stripComment(_ text: String) -> String {
        guard !text.hasPrefix("\""), !text.hasPrefix("'"), let hash = text.range(of: " #") else { return text }
        return String(text[..<hash.lowerBound]).trimmingCharacters(in: .whitespaces)
    }

    /// Splits at commas outside quotes.
    private static func split(_ text: String) -> [String] {
        var parts: [String] = [], current = "", quote: Character?
        for character in text {
            if let open = quote {
                if character == open { quote = nil }
                current.append(character)
            } else if character == "\"" || character == "'" {
                quote = character
                current.append(character)
            } else if character == "," {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        return parts
    }

    static func unquote(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.count >= 2, let first = trimmed.first, first == trimmed.last, first == "\"" || first == "'" else { return trimmed }
        let inner = String(trimmed.dropFirst().dropLast())
        guard first == "\"" else { return inner.replacingOccurrences(of: "''", with: "'") }
        return inner.replacingOccurrences(of: "\\\"", with: "\"").replacingOccurrences(of: "\\n", with: "\n").replacingOccurrences(of: "\\\\", with: "\\")
    }
}
