/// One operation of the protocol: its wire name and the bodies it carries.
///
/// Services and clients share these definitions, so both sides agree on the
/// shape of every request and reply.
public protocol WireOperation: Sendable {
    /// The request body.
    associatedtype Request: Codable & Sendable
    /// The reply body.
    associatedtype Response: Codable & Sendable

    /// The wire name, `area.verb` (`recipe.get`, `photo.add`).
    static var name: String { get }
    /// `true` for operations that change state: their replies are remembered by
    /// request id so a retried request takes effect once.
    static var isWrite: Bool { get }
}

/// A body with no fields: `{}` (the `body` key may also be left out).
public struct Empty: Codable, Sendable, Equatable {
    /// The empty body.
    public init() {}
}

/// A pointer from a JSON body to a binary frame of the same message: frame 1 is
/// the first frame after the JSON.
public struct FrameReference: Codable, Sendable, Equatable, Hashable {
    /// The index of the frame in the message (1 or more).
    public var frame: Int

    /// A reference to frame `frame`.
    public init(frame: Int) { self.frame = frame }
}
