import Foundation

/// A multipart ZeroMQ message as a value: its frames, in order.
public struct Message: Sendable, Equatable {
    /// The frames, first to last. A message always has at least one.
    public var frames: [Data]
    /// On a received message: the user id the ZAP handler gave the sender's connection
    /// (with CURVE, the client's public key), or `nil` when no handler authenticated it.
    public var userID: String?
    /// On a received message: `true` when it was over the receive limits, so only the
    /// frames within them are kept (the rest were read and dropped).
    public var isOversized = false
    /// On a received message: the file number of the connection it came on (`ZMQ_SRCFD`), when libzmq says. Not part
    /// of what a message is: two messages are equal by their frames, user id and `isOversized`.
    public var sourceDescriptor: Int32?

    public static func == (lhs: Message, rhs: Message) -> Bool {
        lhs.frames == rhs.frames && lhs.userID == rhs.userID && lhs.isOversized == rhs.isOversized
    }

    /// A message of the given frames.
    public init(_ frames: [Data]) {
        self.frames = frames
    }

    /// A message of the given frames.
    public init(_ frames: Data...) {
        self.frames = frames
    }

    /// The total number of payload bytes over all frames.
    public var byteCount: Int { frames.reduce(0) { $0 + $1.count } }
}
