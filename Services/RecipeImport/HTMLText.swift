import Foundation
import RecipeModel

/// Text out of HTML fragments: entities decoded, tags removed, white space collapsed.
enum HTMLText {
    /// "Mac &amp; <b>cheese</b>\n  bake" → "Mac & cheese bake".
    static func clean(_ text: String) -> String {
        collapse(withoutInvisibles(decodeEntities(stripTags(text)))).withinCombiningLimit
    }

    /// Soft hyphens, zero-width spaces, byte-order marks and control characters removed ("Berg&shy;käse" is "Bergkäse").
    static func withoutInvisibles(_ text: String) -> String {
        // Control characters mean nothing in a page's text (tab, line break and carriage return are white space, which
        // `collapse` handles): U+0000 no stored text may hold, and an escape sequence a terminal would obey.
        func isDropped(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x0D: false
            case 0xAD, 0x200B, 0x2060, 0xFEFF: true
            default: scalar.isTerminalControl
            }
        }
        guard text.utf8.contains(where: { $0 < 0x20 || $0 >= 0x7F }), text.unicodeScalars.contains(where: isDropped) else { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.filter { !isDropped($0) })
        return String(scalars)
    }

    static func collapse(_ text: String) -> String {
        // Byte by byte: ASCII white space (tab to carriage return, space), and the UTF-8 forms of Unicode's other white
        // space characters — what `Character.isWhitespace` reads as white space.
        let bytes = text.utf8
        // Already collapsed (single spaces between words, none at the ends, only ASCII): as it is.
        var previousSpace = true, clean = true
        for byte in bytes {
            let space = byte == 0x20
            if (space && previousSpace) || byte < 0x20 || byte >= 0x80 { clean = false; break }
            previousSpace = space
        }
        if clean && !previousSpace { return text }
        let input = Array(bytes)
        var result: [UInt8] = []
        result.reserveCapacity(input.count)
        var pendingSpace = false
        var index = 0
        while index < input.count {
            let byte = input[index]
            // How many bytes of white space start here (0: none).
            let width = byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) ? 1 : byte >= 0xC2 ? unicodeSpaceWidth(input, at: index) : 0
            if width > 0 {
                pendingSpace = !result.isEmpty
                index += width
            } else {
                if pendingSpace { result.append(0x20); pendingSpace = false }
                result.append(byte)
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The length of the white space character beyond ASCII (as `Character.isWhitespace` reads it) that starts at
    /// `index`, or 0: U+0085, U+00A0 (2 bytes); U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 (3 bytes).
    private static func unicodeSpaceWidth(_ bytes: [UInt8], at index: Int) -> Int {
        func at(_ offset: Int) -> UInt8 { index + offset < bytes.count ? bytes[index + offset] : 0 }
        switch bytes[index] {
        case 0xC2: return at(1) == 0x85 || at(1) == 0xA0 ? 2 : 0
        case 0xE1: return at(1) == 0x9A && at(2) == 0x80 ? 3 : 0
        case 0xE2:
            let second = at(1), third = at(2)
            return (second == 0x80 && ((0x80...0x8A).contains(third) || third == 0xA8 || third == 0xA9 || third == 0xAF))
                || (second == 0x81 && third == 0x9F) ? 3 : 0
        case 0xE3: return at(1) == 0x80 && at(2) == 0x80 ? 3 : 0
        default: return 0
        }
    }

    /// Tags removed; a block tag (`<p>`, `<br>`, `<li>`…) leaves a space, an inline one (`<a>`, `<span>`, `<b>`…) nothing,
    /// as a browser shows them ("carrots</a>, then" is "carrots, then").
    static func stripTags(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "<")) else { return text }
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count)
        var tagStart: Int?
        // Just after an inline element closed: another element starting right there is a separate piece ("<span>150 g</span><span>rice</span>").
        var afterInlineEnd = false
        let bytes = Array(text.utf8)
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "<"), tagStart == nil, opensTag(bytes, after: index) { tagStart = index + 1; continue }
            guard let start = tagStart else {
                result.append(byte)
                afterInlineEnd = false
                continue
            }
            guard byte == UInt8(ascii: ">") else { continue }
            tagStart = nil
            let closing = start < index && bytes[start] == UInt8(ascii: "/")
            var nameStart = start
            while nameStart < index, bytes[nameStart] == UInt8(ascii: "/") { nameStart += 1 }
            var nameEnd = nameStart
            while nameEnd < index, nameEnd - nameStart < 12, isNameByte(bytes[nameEnd]) { nameEnd += 1 }
            let inline = inlineKeys.contains(Microdata.key(bytes[nameStart..<nameEnd]))
            if !inline || (!closing && afterInlineEnd) { result.append(UInt8(ascii: " ")) }
            afterInlineEnd = inline && closing
        }
        // A "<" that never closed was text ("Use <b for bread"): kept, not dropped with the rest of the line.
        if let start = tagStart { result.append(contentsOf: bytes[(start - 1)...]) }
        return String(decoding: result, as: UTF8.self)
    }

    /// Whether the "<" at `index` opens a tag, as a browser's tokenizer reads it: a letter, "/" and a letter, "!" or
    /// "?" follows. Otherwise it is text: "< 5 minutes", "<180°C", "a <3 b" keep their "<" and what comes after it.
    private static func opensTag(_ bytes: [UInt8], after index: Int) -> Bool {
        func isLetter(_ byte: UInt8) -> Bool { (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) }
        guard index + 1 < bytes.count else { return false }
        let next = bytes[index + 1]
        if isLetter(next) || next == UInt8(ascii: "!") || next == UInt8(ascii: "?") { return true }
        return next == UInt8(ascii: "/") && index + 2 < bytes.count && isLetter(bytes[index + 2])
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
    }

    private static let inlineKeys = Set(inlineTags.map { Microdata.key(Array($0.utf8)) })

    static let inlineTags: Set<String> = [
        "a", "span", "b", "strong", "i", "em", "u", "small", "sup", "sub", "mark", "abbr", "font", "code", "s", "strike", "del",
        "ins", "q", "cite", "time", "data", "bdi", "bdo", "wbr",
    ]

    private static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "ndash": "–", "mdash": "—",
        "hellip": "…", "rsquo": "’", "lsquo": "‘", "rdquo": "”", "ldquo": "“", "deg": "°", "frac12": "½", "frac14": "¼",
        "frac34": "¾", "frac13": "⅓", "frac23": "⅔", "eacute": "é", "egrave": "è", "agrave": "à", "aacute": "á", "ccedil": "ç",
        "ouml": "ö", "uuml": "ü", "auml": "ä", "szlig": "ß", "ntilde": "ñ", "iacute": "í", "oacute": "ó", "uacute": "ú",
        "times": "×", "shy": "\u{AD}", "reg": "®", "copy": "©", "trade": "™", "euro": "€", "pound": "£", "ecirc": "ê", "acirc": "â", "ocirc": "ô",
    ]

    /// `&amp;`, `&#39;`, `&#x27;` and the common named entities (twice, for double-escaped text).
    static func decodeEntities(_ text: String) -> String {
        var current = text
        for _ in 0..<2 where current.utf8.contains(UInt8(ascii: "&")) {
            var result = ""
            var index = current.startIndex
            while index < current.endIndex {
                let character = current[index]
                if character == "&", let semicolon = current[index...].prefix(12).firstIndex(of: ";") {
                    let name = current[current.index(after: index)..<semicolon]
                    if let replacement = entity(String(name)) {
                        result += replacement
                        index = current.index(after: semicolon)
                        continue
                    }
                }
                result.append(character)
                index = current.index(after: index)
            }
            current = result
        }
        return current
    }

    private static func entity(_ name: String) -> String? {
        if name.hasPrefix("#x") || name.hasPrefix("#X"), let value = UInt32(name.dropFirst(2), radix: 16), let scalar = Unicode.Scalar(value) {
            return String(Character(scalar))
        }
        if name.hasPrefix("#"), let value = UInt32(name.dropFirst()), let scalar = Unicode.Scalar(value) {
            return String(Character(scalar))
        }
        return named[name] ?? named[name.lowercased()]
    }

    /// Every `<meta name|property="KEY" content="…">` of the page (the first 300 KB), by lower-case key, the first of each,
    /// cleaned, and its sharing images in order with the sizes declared for them; read once per page.
    static func metas(in html: String) -> PageMeta {
        var html = html
        let tags: [[String: String]] = html.withUTF8 { page in
            let window = UnsafeBufferPointer(rebasing: page[0..<min(page.count, 300_000)])
            var found: [[String: String]] = []
            var index = 0
            while let open = ByteScan.find("<meta", in: window, from: index) {
                guard let close = ByteScan.find(byte: UInt8(ascii: ">"), in: window, from: open + 5) else { break }
                let text = String(decoding: UnsafeBufferPointer(rebasing: window[(open + 1)..<close]), as: UTF8.self)
                found.append(ByteScan.attributes(of: Substring(text).utf8))
                index = close + 1
            }
            return found
        }
        var meta = PageMeta()
        for attributes in tags {
            guard let key = (attributes["name"] ?? attributes["property"])?.lowercased(), let content = attributes["content"] else { continue }
            let value = clean(content)
            guard !value.isEmpty, value.count <= 2_000 else { continue }
            if meta.values[key] == nil { meta.values[key] = value }
            switch attributes["property"]?.lowercased() ?? key {
            case "og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src":
                if meta.images.count < PageMeta.imageLimit { meta.images.append((value, ImageChoice.Size())) }
            case "og:image:width", "og:image:height":
                guard !meta.images.isEmpty, let number = Int(value.prefix { $0.isASCII && $0.isNumber }.prefix(6)) else { continue }
                if key.hasSuffix("width") { meta.images[meta.images.count - 1].size.width = number } else { meta.images[meta.images.count - 1].size.height = number }
            default: break
            }
        }
        return meta
    }
}

/// A page's `<meta>` values by lower-case name or property (the first of each), and its sharing images.
struct PageMeta {
    /// Sharing images read: a page listing more is hostile or broken.
    static let imageLimit = 16

    var values: [String: String] = [:]
    /// `og:image`, `og:image:url`, `og:image:secure_url`, `twitter:image`, in the page's order, each with the size
    /// `og:image:width`/`height` after it declare.
    var images: [(address: String, size: ImageChoice.Size)] = []

    subscript(key: String) -> String? { values[key] }
}
