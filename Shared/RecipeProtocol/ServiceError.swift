/// An error a service returns to its client: a code from the closed set and a
/// sentence for a person that says what was wrong and what is allowed.
public struct ServiceError: Error, Codable, Sendable, Equatable, CustomStringConvertible {
    /// The machine-readable reason.
    public var code: ErrorCode
    /// What was wrong and what is allowed, for a person.
    public var message: String

    /// An error with `code` and a message for a person.
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) [\(code.rawValue)]" }

    private enum CodingKeys: String, CodingKey { case code, message }

    /// Reads an error; a code this build does not know (from a newer service)
    /// becomes `internal_error` with the code kept in the message.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let rawCode = try container.decode(String.self, forKey: .code)
        let message = try container.decode(String.self, forKey: .message)
        if let code = ErrorCode(rawValue: rawCode) {
            self.init(code, message)
        } else {
            self.init(.internalError, "\(message) (\(rawCode))")
        }
    }
}
