import Foundation

/// schema.org items written as HTML microdata (`itemscope`, `itemtype`, `itemprop`),
/// turned into the same dictionaries JSON-LD gives.
///
/// Pages are untrusted, so the reader is one pass over the page's bytes with bounded
/// state: a closing tag finds its element through a per-name index (never a scan of
/// the open elements), property text is one shared buffer that each open property
/// remembers its start in (never a copy per open element), nesting deeper than
/// `maxDepth` is read as flat, and every value is cut at `maxValueBytes`.
enum Microdata {
    /// Open elements beyond this depth are not tracked (their text still counts).
    static let maxDepth = 256
    /// The longest value kept for one property.
    static let maxValueBytes = 20_000
    /// The most values kept for one property of one item.
    static let maxValuesPerProperty = 1_000

    /// The first item of type Recipe on the page; else, when the page marks up a recipe's ingredients and steps
    /// with no item around them (older themes do), those properties as a recipe.
    /// (`orphans`: whether to look for those properties at all; a page with a JSON-LD recipe needs no such guess.)
    static func recipe(in html: String, orphans: Bool = true) -> [String: Any]? {
        // Written with "//" before it ("https://schema.org/Recipe"): the search jumps from slash to slash.
        guard ByteScan.find("//schema.org/recipe", in: html, from: html.startIndex) != nil
            || ByteScan.find("//www.schema.org/recipe", in: html, from: html.startIndex) != nil
            || (orphans && ByteScan.find("recipeinstructions", in: html, from: html.startIndex) != nil) else { return nil }
        var html = html
        return html.withUTF8 { page in
            var reader = Reader(page: page)
            return reader.recipe()
        }
    }

    /// A tag name as a number, so reading a tag allocates nothing: up to 8 lower-case bytes
    /// packed, or a hash of a longer name with the top bit set.
    typealias TagKey = UInt64

    static func key<Bytes: Collection>(_ name: Bytes) -> TagKey where Bytes.Element == UInt8 {
        if name.count <= 8 {
            return name.reduce(0) { $0 << 8 | TagKey(ByteScan.lower($1)) }
        }
        return name.reduce(0xcbf2_9ce4_8422_2325 as TagKey) { ($0 ^ TagKey(ByteScan.lower($1))) &* 0x100_0000_01b3 } | (1 << 63)
    }

    static func key(_ name: StaticString) -> TagKey {
        name.withUTF8Buffer { key($0) }
    }

    private static let voidElements: Set<TagKey> = Set(["img", "meta", "link", "br", "hr", "input", "source", "area", "base", "col", "embed", "wbr"]
        .map { key(Array($0.utf8)) })
    private static let scriptKey = key("script"), styleKey = key("style"), brKey = key("br"), pKey = key("p"), liKey = key("li")
    private static let imageKeys: Set<TagKey> = [key("img"), key("source")], linkKeys: Set<TagKey> = [key("a"), key("link")]
    private static let timeKey = key("time"), metaKey = key("meta")

    private final class Scope {
        var properties: [String: [Any]] = [:]
        init(type: String?) {
            if let type { properties["@type"] = [type.split(separator: "/").last.map(String.init) ?? type] }
        }
        var dictionary: [String: Any] {
            properties.mapValues { values in values.count == 1 ? values[0] : values }
        }
    }

    private struct Element {
        var name: TagKey
        var property: String?
        /// The value taken from an attribute (content, src, href, datetime), if any.
        var attributeValue: String?
        /// Index into `scopes` when this element starts an item.
        var scope: Int?
        /// The nearest enclosing item when the element opened: where its value goes.
        var owner: Int?
        /// Where its text starts in the shared text buffer.
        var textStart: Int
        /// Whether it collects text (a property that is not an item itself).
        var collectsText: Bool { property != nil && scope == nil }
    }

    private struct Reader {
        let page: UnsafeBufferPointer<UInt8>
        var stack: [Element] = []
        /// Tag name → positions in `stack` of the open elements of that name, innermost last.
        var openByName: [TagKey: [Int]] = [:]
        var scopes: [Scope] = []
        var recipeScope: Int?
        /// Where properties outside any item go.
        let pageScope = Scope(type: nil)
        /// The text of the page since the outermost open property began.
        var text: [UInt8] = []
        var collecting = 0
        /// Where the text ended when an element last closed: an element opening right there is a separate piece
        /// ("<span>150 g</span><span>rice</span>" reads "150 g rice").
        var closedAt = -1

        init(page: UnsafeBufferPointer<UInt8>) { self.page = page }

        mutating func recipe() -> [String: Any]? {
            var index = 0
            while index < page.count {
                guard let open = ByteScan.find(byte: UInt8(ascii: "<"), in: page, from: index) else {
                    appendText(index..<page.count)
                    break
                }
                appendText(index..<open)
                if ByteScan.find("<!--", in: page, from: open, to: open + 4) == open {
                    guard let end = ByteScan.find("-->", in: page, from: open + 4) else { break }
                    index = end + 3
                    continue
                }
                guard let close = ByteScan.find(byte: UInt8(ascii: ">"), in: page, from: open + 1) else { break }
                index = close + 1
                let tag = UnsafeBufferPointer(rebasing: page[(open + 1)..<close])
                guard let first = tag.first, first != UInt8(ascii: "!"), first != UInt8(ascii: "?") else { continue }
                if first == UInt8(ascii: "/") {
                    closeElement(named: Self.name(of: UnsafeBufferPointer(rebasing: tag.dropFirst())))
                    continue
                }
                let name = Self.name(of: tag)
                if name == scriptKey || name == styleKey {
                    // A script or style that never closes runs to the end of the page, as in a browser.
                    let end = name == scriptKey ? ByteScan.find("</script", in: page, from: index) : ByteScan.find("</style", in: page, from: index)
                    index = end ?? page.count
                    continue
                }
                openElement(name, tag: tag)
            }
            while !stack.isEmpty { popElement() }
            if let recipeScope { return scopes[recipeScope].dictionary }
            // Properties of no item: a recipe when they name its ingredients and its steps.
            var page = pageScope.dictionary
            guard page["recipeInstructions"] != nil, page["recipeIngredient"] != nil || page["ingredients"] != nil else { return nil }
            page["@type"] = "Recipe"
            if page["name"] == nil { page["name"] = page["headline"] }
            return page
        }

        /// The tag name at the start of `tag`, as a key.
        static func name(of tag: UnsafeBufferPointer<UInt8>) -> TagKey {
            var end = 0
            while end < tag.count, !Self.isNameEnd(tag[end]), end < 64 { end += 1 }
            return key(tag[0..<end])
        }

        static func isNameEnd(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x2F || byte == 0x0C
        }

        mutating func openElement(_ name: TagKey, tag: UnsafeBufferPointer<UInt8>) {
            if collecting > 0, text.count == closedAt, text.last != 0x20 { text.append(0x20) }
            var element = Element(name: name, owner: stack.last.flatMap { $0.scope ?? $0.owner }, textStart: text.count)
            // Only tags that mention microdata carry anything this reader keeps.
            if ByteScan.find("item", in: tag, from: 0) != nil {
                let attributes = Self.attributes(of: tag)
                element.property = attributes["itemprop"]
                if attributes["itemscope"] != nil {
                    scopes.append(Scope(type: attributes["itemtype"]))
                    element.scope = scopes.count - 1
                    if recipeScope == nil, let type = attributes["itemtype"], type.lowercased().hasSuffix("schema.org/recipe") {
                        recipeScope = scopes.count - 1
                    }
                }
                if element.property != nil {
                    element.attributeValue = attributes["content"] ?? (imageKeys.contains(name) ? attributes["src"] : nil)
                        ?? (linkKeys.contains(name) ? attributes["href"] : nil) ?? (name == timeKey ? attributes["datetime"] : nil)
                        ?? (name == metaKey ? "" : nil)
                }
            }
            let selfClosing = tag.last == UInt8(ascii: "/")
            if voidElements.contains(name) || selfClosing || stack.count >= maxDepth {
                finish(element)
                return
            }
            if element.collectsText { collecting += 1 }
            openByName[name, default: []].append(stack.count)
            stack.append(element)
        }

        mutating func closeElement(named name: TagKey) {
            guard let position = openByName[name]?.last else { return } // a stray closing tag: nothing to close
            while stack.count > position { popElement() }
        }

        mutating func popElement() {
            let element = stack.removeLast()
            openByName[element.name]?.removeLast()
            if element.collectsText { collecting -= 1 }
            finish(element)
            closedAt = text.count
            if collecting == 0 { text.removeAll(keepingCapacity: text.count < 1_000_000) }
        }

        mutating func appendText(_ range: Range<Int>) {
            guard collecting > 0, !range.isEmpty else { return }
            text.append(contentsOf: UnsafeBufferPointer(rebasing: page[range]))
        }

        /// Closes an element: its value goes to the item it was opened in.
        mutating func finish(_ element: Element) {
            if collecting > 0, element.name == brKey || element.name == pKey || element.name == liKey {
                text.append(0x0A)
            }
            guard let property = element.property else { return }
            let item = element.owner.map { scopes[$0] } ?? pageScope
            let names = property.split(separator: " ").prefix(8).map(String.init)
                .filter { item.properties[$0, default: []].count < maxValuesPerProperty }
            guard !names.isEmpty else { return } // full: the value is not even built
            let value: Any
            if let scope = element.scope {
                value = scopes[scope].dictionary
            } else if let attribute = element.attributeValue, !attribute.isEmpty {
                value = String(attribute.prefix(maxValueBytes))
            } else {
                let start = min(element.textStart, text.count)
                let end = min(text.count, start + maxValueBytes)
                value = String(decoding: text[start..<end], as: UTF8.self)
            }
            for name in names { item.properties[name, default: []].append(value) }
        }

        /// The attributes of a tag, entities decoded.
        static func attributes(of tag: UnsafeBufferPointer<UInt8>) -> [String: String] {
            var attributes = ByteScan.attributes(of: tag)
            for (key, value) in attributes where value.utf8.contains(UInt8(ascii: "&")) { attributes[key] = HTMLText.decodeEntities(value) }
            return attributes
        }
    }
}
