/// Sentences for a person from Swift's decoding errors, naming the field by its JSON path.
extension DecodingError {
    /// "body.servings must be a number, found a string", "body.name is missing", …
    public var wireDescription: String {
        switch self {
        case let .typeMismatch(type, context):
            return "\(Self.path(context.codingPath)) must be \(Self.jsonKind(type))\(Self.found(context.debugDescription))"
        case let .valueNotFound(type, context):
            return "\(Self.path(context.codingPath)) must be \(Self.jsonKind(type)), not null"
        case let .keyNotFound(key, context):
            return "\(Self.path(context.codingPath + [key])) is missing"
        case let .dataCorrupted(context):
            if context.codingPath.isEmpty { return "not valid JSON" }
            return "\(Self.path(context.codingPath)) is not valid: \(Self.inProductWords(context.debugDescription))"
        @unknown default:
            return "the request could not be read"
        }
    }

    /// Foundation's sentences for a value it could not read, as the product says them: what the field must be.
    /// Others (the product's own, as `WireChoice`'s) are kept as they are.
    static func inProductWords(_ sentence: String) -> String {
        switch sentence {
        case "Attempted to decode UUID from invalid UUID string.":
            "it must be an id: a UUID of 36 characters, such as 5A3C0008-0000-4000-8000-000000000000"
        case "Invalid URL string.":
            "it must be a web address, such as https://example.com/soup"
        case "Encountered Data is not valid Base64.":
            "it must be bytes written in Base64"
        default:
            sentence
        }
    }

    /// `true` when the bytes were not JSON at all (as opposed to JSON of the wrong shape).
    var isNotJSON: Bool {
        if case let .dataCorrupted(context) = self, context.codingPath.isEmpty { return true }
        return false
    }

    static func path(_ codingPath: [any CodingKey]) -> String {
        guard !codingPath.isEmpty else { return "the top level" }
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    static func jsonKind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type, is Substring.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type,
             is UInt.Type, is UInt64.Type, is UInt32.Type, is UInt16.Type, is UInt8.Type:
            return "a whole number"
        case is Double.Type, is Float.Type: return "a number"
        case is [Any].Type: return "an array"
        default: return "an object"
        }
    }

    /// ", found a string" from Foundation's "Expected to decode Int but found a string instead."
    static func found(_ debugDescription: String) -> String {
        guard let start = debugDescription.range(of: "but found ") else { return "" }
        var rest = debugDescription[start.upperBound...]
        if let end = rest.range(of: " instead") { rest = rest[..<end.lowerBound] }
        var kind = String(rest)
        for article in ["a ", "an "] where kind.hasPrefix(article) { kind.removeFirst(article.count) }
        switch kind {
        case "": return ""
        case "null": return ", found null"
        case "dictionary": return ", found an object"
        default: return ", found \("aeiou".contains(kind.first!) ? "an" : "a") \(kind)"
        }
    }
}
