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
}
