import Foundation
import RecipeModel

/// `{"deleted": true}`: whether the record was there to delete (deleting twice is not an error).
public struct Deleted: Codable, Sendable, Equatable {
    public var deleted: Bool
    public init(deleted: Bool) { self.deleted = deleted }
}

/// `{"id": "…"}`: the record to act on.
public struct ByID: Codable, Sendable, Equatable {
    public var id: UUID
    public init(id: UUID) { self.id = id }
}

/// Whole-storage operations of `recipe-storage`.
public enum StorageOps {
    /// `samples.load`: the seed-004 sample books, starter recipes and catalogue, once.
    public enum LoadSamples: WireOperation {
        public static let name = "samples.load"
        public static let isWrite = true
        public typealias Request = Empty
        public typealias Response = SampleLoadResult
    }

    /// `storage.check`: reads the whole database (SQLite's quick check, or its full integrity check) and every
    /// photo file a recipe names against its SHA-256, and says what is damaged or missing.
    public enum Check: WireOperation {
        public static let name = "storage.check"
        public static let isWrite = false
        // Reads every photo file; never on the socket's thread (and one at a time, with the other file work).
        public static let touchesFiles = true
        public struct Request: Codable, Sendable, Equatable {
            /// Read the photo files too (default true).
            public var photos: Bool?
            /// SQLite's full `integrity_check` (indexes against their tables too) instead of `quick_check`.
            public var full: Bool?
            public init(photos: Bool? = nil, full: Bool? = nil) {
                self.photos = photos
                self.full = full
            }
        }
        public typealias Response = StorageCheck
    }

    /// `storage.stats`: counts for monitoring.
    public enum Stats: WireOperation {
        public static let name = "storage.stats"
        public static let isWrite = false
        public typealias Request = Empty
        public typealias Response = StorageStats
    }
}
