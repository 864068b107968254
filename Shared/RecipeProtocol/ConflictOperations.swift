import Foundation

// MARK: Conflicts and backups (recipe-storage, for people)

/// One unresolved conflict: a conflicted copy of a recipe, or a losing value kept on a book,
/// catalogue entry or cook-log entry. Every replica lists the same ones once they are in step.
public struct SyncConflict: Codable, Sendable, Equatable {
    /// What `recipes conflicts resolve|dismiss` takes: the copy's id for a recipe, otherwise the kept value's id.
    public var id: String
    public var kind: SyncKind
    /// The record the conflict is about (the original recipe, the book, the catalogue name, the cook-log entry).
    public var recordID: String
    /// Its name or title, when it has one.
    public var recordName: String?
    /// The fields whose value lost.
    public var fields: [String]
    /// The losing values (field → value) when they are not a recipe copy's.
    public var lostValues: [String: JSONValue]?
    /// The conflicted copy (recipes only).
    public var copyID: String?
    public init(id: String, kind: SyncKind, recordID: String, recordName: String?, fields: [String],
                lostValues: [String: JSONValue]?, copyID: String?) {
        self.id = id
        self.kind = kind
        self.recordID = recordID
        self.recordName = recordName
        self.fields = fields
        self.lostValues = lostValues
        self.copyID = copyID
    }
}

public enum ConflictOps {
    /// `conflicts.list`: the unresolved conflicts, oldest first, a page at a time (a kept value may be 20,000
    /// characters, so a page is bounded by count: `maxLimit` of the largest stay well under one reply's 16 MiB).
    public enum List: WireOperation {
        public static let name = "conflicts.list"
        public static let repliesInBulk = true // grows with the collection
        public static let isWrite = false
        /// The most conflicts one page holds (a request without a limit is answered with every one, in one reply).
        public static let maxLimit = 100
        public typealias Request = PageRequest
        public struct Response: Codable, Sendable, Equatable {
            public var conflicts: [SyncConflict]
            /// Where the next page starts, when there may be more; `nil` on the last page.
            public var next: String?
            public init(conflicts: [SyncConflict], next: String? = nil) {
                self.conflicts = conflicts
                self.next = next
            }
        }
    }

    /// `conflicts.resolve`: takes the losing values (a copy's values go into the original recipe and
    /// the copy is removed; a kept value is written back into its record); `conflicts.dismiss`: drops them.
    public enum Resolve: WireOperation {
        public static let name = "conflicts.resolve"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var id: String
            public init(id: String) { self.id = id }
        }
        public typealias Response = SyncConflict
    }

    public enum Dismiss: WireOperation {
        public static let name = "conflicts.dismiss"
        public static let isWrite = true
        public typealias Request = Resolve.Request
        public typealias Response = SyncConflict
    }
}

/// `storage.backup`: a consistent copy of the database and the photos it uses, taken while the storage runs.
public enum BackupOps {
    public enum Backup: WireOperation {
        public static let name = "storage.backup"
        public static let isWrite = true
        public static let touchesFiles = true // copies the database and every photo; never on the socket's thread
        public struct Request: Codable, Sendable, Equatable {
            /// An absolute folder on the storage's machine that does not exist yet or is empty.
            public var folder: String
            public init(folder: String) { self.folder = folder }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var folder: String
            public var recipes: Int
            public var photos: Int
            public var bytes: Int
            /// Photos the copy names but could not take: their blobs are lost from this storage's disk (removed, or
            /// damaged). A storage started on the copy gets them back from a replica that holds them. Absent when none.
            public var lostPhotos: [String]?
            public init(folder: String, recipes: Int, photos: Int, bytes: Int, lostPhotos: [String]? = nil) {
                self.folder = folder
                self.recipes = recipes
                self.photos = photos
                self.bytes = bytes
                self.lostPhotos = lostPhotos
            }
        }
    }
}
