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

    /// `storage.stats`: counts for monitoring.
    public enum Stats: WireOperation {
        public static let name = "storage.stats"
        public static let isWrite = false
        public typealias Request = Empty
        public typealias Response = StorageStats
    }
}
