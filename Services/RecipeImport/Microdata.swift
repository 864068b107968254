import Foundation

/// schema.org items written as HTML microdata (`itemscope`, `itemtype`, `itemprop`),
/// turned into the same dictionaries JSON-LD gives.
enum Microdata {
    private static let voidElements: Set<String> = ["img", "meta", "link", "br", "hr", "input", "source", "area", "base", "col", "embed", "wbr"]

    private struct Element {
        var name: String
        var property: String?
        /// The value taken from an attribute (content, src, href, datetime), if any.
        var attributeValue: String?
        /// Index into `scopes` when this element starts an item.
        var scope: Int?
        var text = ""
    }

    private final class Scope {
        var properties: [String: [Any]] = [:]
        init(type: String?) {
            if let type { properties["@type"] = [type.split(separator: "/").last.map(String.init) ?? type] }
        }
        var dictionary: [String: Any] {
            properties.mapValues { values in values.count == 1 ? values[0] : values }
        }
    }

    /// The first item of type Recipe on the page.
    static func recipe(in html: String) -> [String: Any]? {
        guard ByteScan.find("schema.org/recipe", in: html, from: html.startIndex) != nil else { return nil }
        var stack: [Element] = []
        var scopes: [Scope] = []
        var recipeScope: Int?
        var index = html.startIndex
        while index < html.endIndex {
            guard let open = html[index...].firstIndex(of: "<") else { break }
            appendText(String(html[index..<open]), to: &stack)
            guard let close = html[open...].firstIndex(of: ">") else { break }
            let tag = html[html.index(after: open)..<close]
            index = html.index(after: close)
            if tag.hasPrefix("!") || tag.hasPrefix("?") { continue }
            if tag.hasPrefix("/") {
                let name = tag.dropFirst().trimmingCharacters(in: .whitespaces).lowercased()
                guard let position = stack.lastIndex(where: { $0.name == name }) else { continue }
                while stack.count > position { finish(stack.removeLast(), stack: &stack, scopes: scopes) }
                continue
            }
            let (name, attributes) = parseTag(String(tag))
            if name == "script" || name == "style" {
                if let end = name == "script" ? ByteScan.find("</script", in: html, from: index) : ByteScan.find("</style", in: html, from: index) {
                    index = end
                }
                continue
            }
            var element = Element(name: name, property: attributes["itemprop"])
            if attributes["itemscope"] != nil {
                scopes.append(Scope(type: attributes["itemtype"]))
                element.scope = scopes.count - 1
                if recipeScope == nil, let type = attributes["itemtype"], type.lowercased().hasSuffix("schema.org/recipe") {
                    recipeScope = scopes.count - 1
                }
            }
            element.attributeValue = attributes["content"] ?? (["img", "source"].contains(name) ? attributes["src"] : nil)
                ?? (["a", "link"].contains(name) ? attributes["href"] : nil) ?? (name == "time" ? attributes["datetime"] : nil)
                ?? (name == "meta" ? "" : nil)
            if voidElements.contains(name) || tag.hasSuffix("/") {
                finish(element, stack: &stack, scopes: scopes)
            } else {
                stack.append(element)
            }
        }
        while let element = stack.popLast() { finish(element, stack: &stack, scopes: scopes) }
        return recipeScope.map { scopes[$0].dictionary }
    }

    private static func appendText(_ text: String, to stack: inout [Element]) {
        guard !text.isEmpty else { return }
        // Text belongs to every open element that will become a property value.
        for position in stack.indices where stack[position].property != nil && stack[position].scope == nil {
            stack[position].text += text
        }
    }

    /// Closes an element: its value goes to the nearest enclosing item.
    private static func finish(_ element: Element, stack: inout [Element], scopes: [Scope]) {
        if element.name == "br" || element.name == "p" || element.name == "li" {
            appendText("\n", to: &stack)
        }
        guard let property = element.property,
              let owner = stack.last(where: { $0.scope != nil })?.scope else { return }
        let value: Any
        if let scope = element.scope {
            value = scopes[scope].dictionary
        } else if let attribute = element.attributeValue, !attribute.isEmpty {
            value = attribute
        } else {
            value = element.text
        }
        for name in property.split(separator: " ") {
            scopes[owner].properties[String(name), default: []].append(value)
        }
    }

    /// The tag name and attributes of `<name a="1" b='2' c>`.
    private static func parseTag(_ tag: String) -> (String, [String: String]) {
        let utf8 = tag.utf8
        let nameEnd = utf8.firstIndex { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0x2F } ?? utf8.endIndex
        let name = String(tag[..<nameEnd]).lowercased()
        guard nameEnd != utf8.endIndex else { return (name, [:]) }
        var attributes = ByteScan.attributes(of: Substring(tag).utf8)
        for (key, value) in attributes where value.utf8.contains(UInt8(ascii: "&")) { attributes[key] = HTMLText.decodeEntities(value) }
        return (name, attributes)
    }
}
