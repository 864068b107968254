import Foundation
import RecipeProtocol

/// Every `application/ld+json` block of a page, read as tolerantly as real sites need.
enum JSONLD {
    /// The largest block read (real recipe blocks are tens of kilobytes): a larger one is skipped,
    /// so a hostile page cannot make the parser build millions of objects.
    static let maxBlockBytes = 2_000_000
    /// The most blocks read from one page.
    static let maxBlocks = 64

    /// The JSON values of the page's JSON-LD blocks (blocks that cannot be read even after repair are skipped).
    static func blocks(in html: String) -> [Any] {
        var html = html
        let bodies: [String] = html.withUTF8 { page in
            var found: [String] = []
            eachBlock(in: page) { block in
                if block.count <= maxBlockBytes { found.append(String(decoding: UnsafeBufferPointer(rebasing: page[block]), as: UTF8.self)) }
                return found.count < maxBlocks
            }
            return found
        }
        return bodies.compactMap(parse)
    }

    /// The sizes in bytes of the page's JSON-LD blocks that `blocks` skips as past `maxBlockBytes`: what to tell a
    /// person whose page gave no recipe, when the page does hold one.
    static func oversizedBlocks(in html: String) -> [Int] {
        var html = html
        return html.withUTF8 { page in
            var sizes: [Int] = []
            var read = 0
            eachBlock(in: page) { block in
                if block.count > maxBlockBytes { sizes.append(block.count) } else { read += 1 }
                return read < maxBlocks
            }
            return sizes
        }
    }

    /// Calls `body` with the bytes of each `application/ld+json` script of `page`, in order, while it returns true.
    private static func eachBlock(in page: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Bool) {
        var index = 0
        while let open = ByteScan.find("<script", in: page, from: index) {
            guard let tagEnd = ByteScan.find(byte: UInt8(ascii: ">"), in: page, from: open + 7) else { break }
            guard let close = ByteScan.find("</script", in: page, from: tagEnd + 1) else { break }
            if ByteScan.find("ld+json", in: page, from: open + 7, to: tagEnd) != nil, !body((tagEnd + 1)..<close) { break }
            index = close + 8
        }
    }

    /// Parses a block, repairing what sites get wrong: CDATA and comment wrappers, quotes written as HTML entities,
    /// half surrogate pairs, what a script engine reads and JSON does not (`repairSyntax`), trailing commas.
    static func parse(_ text: String) -> Any? {
        var body = trimmed(text)
        for (prefix, suffix) in [("<![CDATA[", "]]>"), ("/*<![CDATA[*/", "/*]]>*/"), ("<!--", "-->"), ("//<![CDATA[", "//]]>")] {
            if body.hasPrefix(prefix) { body.removeFirst(prefix.count) }
            if body.hasSuffix(suffix) { body.removeLast(suffix.count) }
            body = trimmed(body)
        }
        if let value = try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed]) { return value }
        // Any other wrapper ("// <![CDATA[", "/* … */"): without CDATA marks, from the first bracket to the last.
        if body.contains("<![CDATA[") {
            body = body.replacingOccurrences(of: "<![CDATA[", with: "").replacingOccurrences(of: "]]>", with: "")
        }
        if let open = body.firstIndex(where: { $0 == "{" || $0 == "[" }), let close = body.lastIndex(where: { $0 == "}" || $0 == "]" }),
           open < close, open != body.startIndex || body.index(after: close) != body.endIndex {
            body = String(body[open...close])
            if let value = try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed]) { return value }
        }
        // Half a surrogate pair (`\ud83c` where a site cut an emoji) is no character: browsers read past it, Foundation
        // refused the whole block, and the page's recipe was not found.
        let repaired = removeTrailingCommas(repairSyntax(LoneSurrogate.removingHalves(from: decodingQuoteEntities(body))))
        if let value = try? JSONSerialization.jsonObject(with: Data(repaired.utf8), options: [.fragmentsAllowed]) { return value }
        // Several values one after another (or junk after the first): read each balanced value.
        // Also the values as written (trailing commas only): junk between two values that the script reading took for
        // a string's start (a stray apostrophe) must not hide the second.
        let values = (topLevelValues(repaired) + topLevelValues(removeTrailingCommas(body)))
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
        return values.isEmpty ? nil : values
    }

    /// `text` without ASCII white space at either end (no trip through Foundation: blocks can be large).
    static func trimmed(_ text: String) -> String {
        let utf8 = text.utf8
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C }
        guard let first = utf8.firstIndex(where: { !isSpace($0) }), let last = utf8.lastIndex(where: { !isSpace($0) }) else { return "" }
        if first == utf8.startIndex && utf8.index(after: last) == utf8.endIndex { return text }
        return String(text[first...last])
    }

    /// The balanced `{…}` / `[…]` values at the top level of `text`, in order.
    static func topLevelValues(_ text: String) -> [String] {
        var values: [String] = []
        var depth = 0
        var start: String.Index?
        var inString = false
        var escaped = false
        for index in text.indices {
            let character = text[index]
            if inString {
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
                continue
            }
            switch character {
            case "\"": inString = true
            case "{", "[":
                if depth == 0 { start = index }
                depth += 1
            case "}", "]":
                guard depth > 0 else { continue }
                depth -= 1
                if depth == 0, let first = start { values.append(String(text[first...index])) }
            default: break
            }
        }
        return values
    }

    /// What a browser's script engine reads in a block that JSON does not allow, made JSON. Outside strings: comments
    /// (`// …`, `/* … */`) go, `NaN`, `Infinity` and `undefined` become `null`, a key without quotes gets them, a value a
    /// template left out (`"recipeYield": ,`) becomes `null`, and a string in single quotes gets double ones. Inside
    /// strings: raw newlines and tabs become escapes, and escapes JSON does not have are read as a script reads them:
    /// `\'` (PHP's addslashes) and `\-` as the character, `\x27` as `\u0027`. Any one of these made the whole block
    /// unreadable, and the page's recipe was not found.
    static func repairSyntax(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        var index = 0
        /// The quote of the string being read (nil: outside strings), and whether the last scalar was its backslash.
        var quote: Unicode.Scalar?
        var escaped = false
        /// The last scalar written outside strings that is not white space.
        var lastOutside: Unicode.Scalar?
        /// Whether a quote before `position` ends its string: what follows it (past white space) is what follows a
        /// key or a value — a colon, a closing bracket, the end, or a comma and then the start of a value or key.
        func closesString(at position: Int) -> Bool {
            func nextVisible(from start: Int) -> Int {
                var next = start
                while next < scalars.count, scalars[next].properties.isWhitespace { next += 1 }
                return next
            }
            let next = nextVisible(from: position)
            guard next < scalars.count else { return true }
            switch scalars[next] {
            case ":", "}", "]", "/": return true // a comment after a value
            case ",":
                let after = nextVisible(from: next + 1)
                guard after < scalars.count else { return true }
                let start = scalars[after]
                // Anything but a word (a quote, a bracket, a number, a comment) starts what follows a value.
                guard isIdentifier(start, first: true) else { return true }
                // A word: a literal as a value, or a key without quotes (a colon after it).
                var end = after
                while end < scalars.count, isIdentifier(scalars[end], first: false) { end += 1 }
                let word = String(String.UnicodeScalarView(scalars[after..<end]))
                let colon = nextVisible(from: end)
                return ["true", "false", "null", "NaN", "Infinity", "undefined"].contains(word) || (colon < scalars.count && scalars[colon] == ":")
            default: return false
            }
        }
        func isIdentifier(_ scalar: Unicode.Scalar, first: Bool) -> Bool {
            scalar == "_" || scalar == "$" || scalar.properties.isAlphabetic || (!first && ("0"..."9").contains(scalar))
        }
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if let open = quote {
                if escaped {
                    escaped = false
                    switch scalar {
                    case "\"", "\\", "/", "b", "f", "n", "r", "t", "u":
                        result.append(scalar)
                        continue
                    case "x" where index + 1 < scalars.count && scalars[index].properties.isASCIIHexDigit
                                   && scalars[index + 1].properties.isASCIIHexDigit:
                        result.append(contentsOf: "u00".unicodeScalars)
                        continue
                    default:
                        // Not an escape JSON has: the backslash goes, the character stays.
                        result.removeLast()
                    }
                } else if scalar == "\\" {
                    escaped = true
                    result.append(scalar)
                    continue
                } else if scalar == open, !closesString(at: index) {
                    // A quote inside the text that was not escaped ("The "Best" Pie"): what follows is not what
                    // follows the end of a string.
                    result.append(contentsOf: (scalar == "\"" ? "\\\"" : "'").unicodeScalars)
                    continue
                } else if scalar == open {
                    quote = nil
                    result.append("\"")
                    lastOutside = "\""
                    continue
                } else if scalar == "\"" {
                    // A double quote inside a string in single quotes.
                    result.append(contentsOf: "\\\"".unicodeScalars)
                    continue
                }
                switch scalar {
                case "\n": result.append(contentsOf: "\\n".unicodeScalars)
                case "\r": result.append(contentsOf: "\\r".unicodeScalars)
                case "\t": result.append(contentsOf: "\\t".unicodeScalars)
                case _ where scalar.value < 0x20: result.append(contentsOf: String(format: "\\u%04x", scalar.value).unicodeScalars)
                default: result.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"", "'":
                quote = scalar
                result.append("\"")
                lastOutside = "\""
            case "/" where index < scalars.count && scalars[index] == "/":
                while index < scalars.count, scalars[index] != "\n" { index += 1 }
            case "/" where index < scalars.count && scalars[index] == "*":
                index += 1
                while index < scalars.count, !(scalars[index] == "*" && index + 1 < scalars.count && scalars[index + 1] == "/") { index += 1 }
                index = min(index + 2, scalars.count)
            case ",", "}", "]":
                if lastOutside == ":" { result.append(contentsOf: "null".unicodeScalars) }
                result.append(scalar)
                lastOutside = scalar
            case _ where isIdentifier(scalar, first: true):
                var end = index
                while end < scalars.count, isIdentifier(scalars[end], first: false) { end += 1 }
                let word = String(String.UnicodeScalarView(scalars[(index - 1)..<end]))
                index = end
                var next = index
                while next < scalars.count, scalars[next].properties.isWhitespace { next += 1 }
                if next < scalars.count, scalars[next] == ":", lastOutside == "{" || lastOutside == "," {
                    result.append(contentsOf: "\"\(word)\"".unicodeScalars)
                } else if ["NaN", "Infinity", "undefined"].contains(word) {
                    if lastOutside == "-" { result.removeLast() }
                    result.append(contentsOf: "null".unicodeScalars)
                } else {
                    result.append(contentsOf: word.unicodeScalars)
                }
                lastOutside = "a"
            default:
                result.append(scalar)
                if !scalar.properties.isWhitespace { lastOutside = scalar }
            }
        }
        return String(result)
    }

    /// A block whose every quote was written as an HTML entity (`{&quot;@type&quot;: …}`, a template that escaped it
    /// for an attribute) with its entities read; `text` itself when it has raw quotes or none of those.
    static func decodingQuoteEntities(_ text: String) -> String {
        guard !text.contains("\""), text.contains("&quot;") || text.contains("&#34;") else { return text }
        var decoded = text
        for (entity, character) in [("&quot;", "\""), ("&#34;", "\""), ("&#39;", "'"), ("&apos;", "'"), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")] {
            decoded = decoded.replacingOccurrences(of: entity, with: character)
        }
        return decoded
    }

    /// `[1, 2,]` → `[1, 2]`, `{"a": 1,}` → `{"a": 1}` (outside strings).
    static func removeTrailingCommas(_ text: String) -> String {
        var result: [Character] = []
        var inString = false
        var escaped = false
        for character in text {
            if inString {
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
                result.append(character)
                continue
            }
            if character == "\"" { inString = true }
            if character == "}" || character == "]" {
                var index = result.count - 1
                while index >= 0, result[index].isWhitespace { index -= 1 }
                if index >= 0, result[index] == "," { result.remove(at: index) }
            }
            result.append(character)
        }
        return String(result)
    }

    /// The first schema.org Recipe among `values`: at the top, in lists, in `@graph`, or as
    /// `mainEntity`; failing that, a HowTo with steps (some sites mark recipes up as one).
    static func recipe(in values: [Any]) -> [String: Any]? {
        for value in values {
            if let found = findRecipe(value, depth: 0, type: "Recipe") { return found }
        }
        for value in values {
            if let howTo = findRecipe(value, depth: 0, type: "HowTo"), howTo["step"] != nil || howTo["recipeInstructions"] != nil {
                var recipe = howTo
                recipe["recipeInstructions"] = howTo["recipeInstructions"] ?? howTo["step"]
                recipe["recipeIngredient"] = howTo["recipeIngredient"] ?? howTo["supply"]
                return recipe
            }
        }
        return nil
    }

    /// The node with `@id` `id` anywhere in `values` (Yoast-style graphs name their authors by reference).
    static func node(withID id: String, in values: [Any]) -> [String: Any]? {
        func search(_ value: Any, depth: Int) -> [String: Any]? {
            guard depth < 8 else { return nil }
            if let list = value as? [Any] {
                for item in list { if let found = search(item, depth: depth + 1) { return found } }
                return nil
            }
            guard let object = value as? [String: Any] else { return nil }
            if object["@id"] as? String == id, object.count > 1 { return object }
            for key in ["@graph", "author", "publisher", "creator"] {
                if let inner = object[key], let found = search(inner, depth: depth + 1) { return found }
            }
            return nil
        }
        for value in values { if let found = search(value, depth: 0) { return found } }
        return nil
    }

    /// `value` with references (`{"@id": …}` alone) replaced by the nodes they name.
    static func resolvingReferences(_ value: Any?, in values: [Any]) -> Any? {
        switch value {
        case let list as [Any]:
            return list.map { resolvingReferences($0, in: values) ?? $0 }
        case let object as [String: Any]:
            guard object["name"] == nil, let id = object["@id"] as? String else { return object }
            return node(withID: id, in: values) ?? object
        default:
            return value
        }
    }

    private static func findRecipe(_ value: Any, depth: Int, type: String) -> [String: Any]? {
        guard depth < 8 else { return nil }
        if let list = value as? [Any] {
            for item in list { if let found = findRecipe(item, depth: depth + 1, type: type) { return found } }
            return nil
        }
        guard let object = value as? [String: Any] else { return nil }
        if isType(object, type) { return object }
        for key in ["@graph", "mainEntity", "mainEntityOfPage", "itemListElement", "item"] {
            if let inner = object[key], let found = findRecipe(inner, depth: depth + 1, type: type) { return found }
        }
        return nil
    }

    /// `@type` is `type`, a list holding it, or it with a schema.org prefix ("schema:Recipe", "http://schema.org/Recipe").
    static func isType(_ object: [String: Any], _ wanted: String) -> Bool {
        let types = (object["@type"] as? [Any])?.compactMap { $0 as? String } ?? [(object["@type"] as? String) ?? ""]
        return types.contains { type in
            let bare = type.split(separator: "/").last.map(String.init)?.split(separator: ":").last.map(String.init) ?? type
            return bare.caseInsensitiveCompare(wanted) == .orderedSame
        }
    }
}
