import Foundation

/// A multipart ZeroMQ message as a value: its frames, in order.
public struct Message: Sendable, Equatable {
    /// The frames, first to last. A message always has at least one.
    public var frames: [Data]

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
