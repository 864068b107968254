/// A closed set of names a message may hold (a sort order, a category, a format): a name outside it is refused
/// with the names it may be. Swift's own refusal named the type and nothing allowed ("Cannot initialize RecipeSort
/// from invalid String value bogus").
public protocol WireChoice: RawRepresentable, CaseIterable, Codable where RawValue == String {}

extension WireChoice {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let value = Self(rawValue: name) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: Self.refusal(of: name))
        }
        self = value
    }

    /// Why `name` is not one of these, and which are.
    public static func refusal(of name: String) -> String {
        let shown = name.count > 40 ? "\(name.prefix(40))…" : name
        return "it must be one of \(allCases.map(\.rawValue).joined(separator: ", ")); got \"\(shown)\""
    }
}
