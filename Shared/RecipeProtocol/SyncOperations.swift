import Foundation

// MARK: Operations of recipe-storage

/// Replica sync operations of `recipe-storage`: its change feed, its photo blobs, and applying another replica's changes.
public enum SyncOps {
    /// `sync.info`: this replica's id and feed position.
    public enum Info: WireOperation {
        public static let role = OperationRole.peer
        public static let name = "sync.info"
        public static let isWrite = false
        public typealias Request = Empty
        public struct Response: Codable, Sendable, Equatable {
            /// Made once when the database is created; names this replica in versions.
            public var replicaID: String
            /// The change-notice endpoint this storage bound (a wildcard host means: the host you reached it on).
            public var publishEndpoint: String?
            /// The sequence number of the newest change.
            public var latestSeq: Int
            /// How many conflicts are unresolved here (conflicted copies and kept losing values).
            public var conflictsCreated: Int
            /// Records received but not applied yet, and why (retried on every sync).
            public var held: [HeldRecord]?
            public init(replicaID: String, publishEndpoint: String?, latestSeq: Int, conflictsCreated: Int, held: [HeldRecord]? = nil) {
                self.replicaID = replicaID
                self.publishEndpoint = publishEndpoint
                self.latestSeq = latestSeq
                self.conflictsCreated = conflictsCreated
                self.held = held
            }
        }
    }

    /// `sync.changes`: records changed after `since`, in feed order, a page at a time.
    public enum Changes: WireOperation {
        public static let role = OperationRole.peer
        public static let name = "sync.changes"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            /// The last sequence number already seen (0 for everything).
            public var since: Int
            /// A replica id: records whose last change came from it are left out (no echo).
            public var exclude: String?
            /// At most this many records (1 to 1000; default 200). A page also stops near 4 MB.
            public var limit: Int?
            public init(since: Int, exclude: String? = nil, limit: Int? = nil) {
                self.since = since
                self.exclude = exclude
                self.limit = limit
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var records: [SyncRecord]
            /// The cursor to save once these are applied (the last sequence number looked at).
            public var next: Int
            /// `true` when there are more changes after `next`.
            public var more: Bool
            public init(records: [SyncRecord], next: Int, more: Bool) {
                self.records = records
                self.next = next
                self.more = more
            }
        }
    }

    /// `sync.pending`: how many changes after `since` a replica has not seen.
    public enum Pending: WireOperation {
        public static let role = OperationRole.peer
        public static let name = "sync.pending"
        public static let isWrite = false
        public typealias Request = Changes.Request
        public struct Response: Codable, Sendable, Equatable {
            public var count: Int
            public init(count: Int) { self.count = count }
        }
    }

    /// `sync.missingPhotos`: which of these photo hashes this replica does not hold.
    public enum MissingPhotos: WireOperation {
        public static let touchesFiles = true
        public static let role = OperationRole.peer
        public static let name = "sync.missingPhotos"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var sha256: [String]
            public init(sha256: [String]) { self.sha256 = sha256 }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var missing: [String]
            public init(missing: [String]) { self.missing = missing }
        }
    }

    /// `sync.photo`: a photo blob by hash; the bytes travel as frame 1.
    public enum Photo: WireOperation {
        public static let touchesFiles = true
        public static let role = OperationRole.peer
        public static let name = "sync.photo"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var sha256: String
            public init(sha256: String) { self.sha256 = sha256 }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var sha256: String
            public var photo: FrameReference
            public init(sha256: String, photo: FrameReference) {
                self.sha256 = sha256
                self.photo = photo
            }
        }
    }

    /// `sync.putPhoto`: stores a blob (frame 1) after checking it against its SHA-256.
    public enum PutPhoto: WireOperation {
        public static let touchesFiles = true
        public static let role = OperationRole.peer
        public static let name = "sync.putPhoto"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var sha256: String
            public var photo: FrameReference
            public init(sha256: String, photo: FrameReference = FrameReference(frame: 1)) {
                self.sha256 = sha256
                self.photo = photo
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            /// `false` when the blob was already there.
            public var stored: Bool
            public init(stored: Bool) { self.stored = stored }
        }
    }

    /// `sync.apply`: merges another replica's records and, in the same transaction, saves the cursor.
    public enum Apply: WireOperation {
        public static let touchesFiles = true // checks which photos are here; collects unused ones
        public static let role = OperationRole.peer
        public static let name = "sync.apply"
        // Merging is idempotent, so a retried apply needs no remembered reply.
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            /// The replica the records come from.
            public var from: String
            public var records: [SyncRecord]
            /// The sender's feed position to remember for `from`; left out, the cursor stays.
            public var cursor: Int?
            public init(from: String, records: [SyncRecord], cursor: Int?) {
                self.from = from
                self.records = records
                self.cursor = cursor
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            /// Records that changed here.
            public var changed: Int
            /// Conflicted copies made.
            public var conflicts: Int
            /// Records that could not be applied yet (a photo not here, a clock too far ahead, a value
            /// this replica refuses): kept and retried on every later `sync.apply`; the rest were applied.
            public var held: Int?
            public init(changed: Int, conflicts: Int, held: Int? = nil) {
                self.changed = changed
                self.conflicts = conflicts
                self.held = held
            }
        }
    }

    /// `sync.cursor`: how far this replica has applied another replica's feed.
    public enum Cursor: WireOperation {
        public static let role = OperationRole.peer
        public static let name = "sync.cursor"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var peer: String
            public init(peer: String) { self.peer = peer }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var peer: String
            public var seq: Int
            /// When changes from `peer` were last applied up to date.
            public var syncedAt: Date?
            public init(peer: String, seq: Int, syncedAt: Date?) {
                self.peer = peer
                self.seq = seq
                self.syncedAt = syncedAt
            }
        }
    }
}

/// A record a replica received but could not apply yet.
public struct HeldRecord: Codable, Sendable, Equatable {
    public var kind: SyncKind
    public var id: String
    /// The replica it came from.
    public var from: String
    /// Why it waits, in words.
    public var reason: String
    /// The photo blobs it waits for (hashes), if that is why.
    public var missingPhotos: [String]
    public var since: Date
    public init(kind: SyncKind, id: String, from: String, reason: String, missingPhotos: [String], since: Date) {
        self.kind = kind
        self.id = id
        self.from = from
        self.reason = reason
        self.missingPhotos = missingPhotos
        self.since = since
    }
}
