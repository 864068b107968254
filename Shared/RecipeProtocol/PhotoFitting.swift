import Foundation
import RecipeModel

/// What recipe-worker's photo intake did to a photo before it was stored: the photo as it
/// came, as it was stored, and the changes in between.
public struct PhotoFitting: Codable, Sendable, Equatable {
    /// A photo's size, dimensions and format.
    public struct Shape: Codable, Sendable, Equatable {
        public var byteCount: Int
        public var width: Int
        public var height: Int
        /// `JPEG`, `PNG`, `WebP`, `HEIC` or `AVIF`.
        public var format: String
        public init(byteCount: Int, width: Int, height: Int, format: String) {
            self.byteCount = byteCount
            self.width = width
            self.height = height
            self.format = format
        }
        /// "4.1 MB 4032×3024 HEIC"
        public var description: String { "\(ImageKind.formatBytes(byteCount)) \(width)×\(height) \(format)" }
    }

    /// One change. A string on the wire, so a newer worker's changes still decode in an older client.
    public struct Change: RawRepresentable, Codable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Turned by its orientation tag, so it shows upright everywhere.
        public static let turnedUpright = Change(rawValue: "turnedUpright")
        /// Scaled down (never up) to fit the long-side maximum or the byte limit.
        public static let scaledDown = Change(rawValue: "scaledDown")
        /// Encoded again (a new quality, or a new format).
        public static let reencoded = Change(rawValue: "reencoded")
        /// Stored in another format than it came in (HEIC → JPEG, say).
        public static let converted = Change(rawValue: "converted")
        /// EXIF, XMP, IPTC or text metadata taken out.
        public static let metadataRemoved = Change(rawValue: "metadataRemoved")
        /// Among that metadata, a GPS position.
        public static let locationRemoved = Change(rawValue: "locationRemoved")
        /// An animation or image sequence: only the first frame was kept.
        public static let firstFrameOnly = Change(rawValue: "firstFrameOnly")
    }

    public var original: Shape
    public var stored: Shape
    /// Empty when the photo was stored exactly as it came.
    public var changes: [Change]
    /// What was done, for people: "4.1 MB 4032×3024 HEIC → 1.2 MB 2560×1920 JPEG, location removed".
    public var summary: String

    public init(original: Shape, stored: Shape, changes: [Change]) {
        self.original = original
        self.stored = stored
        self.changes = changes
        self.summary = Self.summary(original: original, stored: stored, changes: changes)
    }

    static func summary(original: Shape, stored: Shape, changes: [Change]) -> String {
        if changes.isEmpty { return "\(original.description), stored as it came" }
        var notes: [String] = []
        if changes.contains(.turnedUpright) { notes.append("turned upright") }
        if changes.contains(.locationRemoved) {
            notes.append("location removed")
        } else if changes.contains(.metadataRemoved) {
            notes.append("metadata removed")
        }
        if changes.contains(.firstFrameOnly) { notes.append("first frame kept") }
        return (["\(original.description) → \(stored.description)"] + notes).joined(separator: ", ")
    }
}
