import Foundation

/// Any JSON value: a synced field's value travels as it is, whatever its type.
public enum JSONValue: Codable, Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The same value always gives the same text (keys sorted): what ties are broken on.
    /// About the bytes its JSON takes: text by its UTF-8 length and quotes, a number or literal as 8, and the
    /// punctuation around members and items (for bounding a reply by its size without writing it).
    public var approximateBytes: Int {
        switch self {
        case .null, .bool, .number: 8
        case .string(let text): text.utf8.count + 2
        case .array(let items): items.reduce(2) { $0 + $1.approximateBytes + 1 }
        case .object(let members): members.reduce(2) { $0 + $1.key.utf8.count + 4 + $1.value.approximateBytes }
        }
    }

    public var canonicalText: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
            return String(value)
        case .string(let value):
            var text = "\""
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                default:
                    if scalar.value < 0x20 { text += String(format: "\\u%04x", scalar.value) } else { text.unicodeScalars.append(scalar) }
                }
            }
            return text + "\""
        case .array(let values): return "[" + values.map(\.canonicalText).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.keys.sorted().map { JSONValue.string($0).canonicalText + ":" + members[$0]!.canonicalText }
                .joined(separator: ",") + "}"
        }
    }

    // Convenience accessors for reading a record's fields.
    public var string: String? { if case .string(let value) = self { return value } else { return nil } }
    public var number: Double? { if case .number(let value) = self { return value } else { return nil } }
    /// The number when it is a whole number an `Int` holds exactly (1e300, 2.5 → `nil`).
    public var int: Int? { number.flatMap { Int(exactly: $0) } }
    public var bool: Bool? { if case .bool(let value) = self { return value } else { return nil } }
    public var array: [JSONValue]? { if case .array(let value) = self { return value } else { return nil } }
    public var object: [String: JSONValue]? { if case .object(let value) = self { return value } else { return nil } }

    /// `.string` or `.null`.
    public init(_ text: String?) { self = text.map(JSONValue.string) ?? .null }
    /// `.number` or `.null`.
    public init(_ number: Double?) { self = number.map(JSONValue.number) ?? .null }
    /// `.number` or `.null`.
    public init(_ number: Int?) { self = number.map { .number(Double($0)) } ?? .null }
}
