import Foundation

// MARK: Operations of recipe-worker

/// What one sync of a storage/replica pair did.
public struct PairSync: Codable, Sendable, Equatable {
    public var storage: String
    public var replica: String
    /// Changes that reached the replica, and changes that came back from it.
    public var toReplica: Int
    public var toStorage: Int
    /// Photo blobs moved, both ways, and their bytes.
    public var photos: Int
    public var photoBytes: Int
    /// Conflicted copies made while merging.
    public var conflicts: Int
    /// Why the pair could not be synced (the other pairs still were).
    public var error: String?
    /// The code of that error when one of the two storages answered with it (`storage_full`: the disk of the side
    /// `error` names is full); a raw value, so a code a newer worker gives still reads. Left out otherwise.
    public var errorCode: String?
    /// Records the storage and the replica hold back after the sync (from any replica; `recipes sync status` says
    /// why): until their senders' next versions, the two do not agree on them. Left out when not known.
    public var heldAtStorage: Int?
    public var heldAtReplica: Int?
    /// Photos the recipes that moved name and neither side holds (lost from every disk of the two): those recipes were
    /// taken without them, and the sync after any replica holding one brings it. Left out when none.
    public var unavailablePhotos: Int?
    public var finishedAt: Date
    public init(storage: String, replica: String, toReplica: Int = 0, toStorage: Int = 0, photos: Int = 0, photoBytes: Int = 0,
                conflicts: Int = 0, error: String? = nil, finishedAt: Date = Date()) {
        self.storage = storage
        self.replica = replica
        self.toReplica = toReplica
        self.toStorage = toStorage
        self.photos = photos
        self.photoBytes = photoBytes
        self.conflicts = conflicts
        self.error = error
        self.finishedAt = finishedAt
    }
}

/// Where a storage/replica pair stands.
public struct PairStatus: Codable, Sendable, Equatable {
    public var storage: String
    public var replica: String
    /// `false` when either side did not answer (the figures below are then missing).
    public var reachable: Bool
    /// When the replica last applied the storage's changes up to date.
    public var lastSyncAt: Date?
    /// Changes one side has that the other has not applied yet.
    public var pendingToReplica: Int?
    public var pendingToStorage: Int?
    /// Conflicted copies made on either side, ever.
    public var conflictsCreated: Int?
    /// The last sync's failure, if it failed.
    public var lastError: String?
    /// Records either side holds back, and why.
    public var held: [HeldRecord]?
    /// Photo blobs lost from each side's disk (`sync.info`'s `lostPhotos`): the next sync brings back those the other holds.
    public var lostAtStorage: [String]?
    public var lostAtReplica: [String]?
    public init(storage: String, replica: String, reachable: Bool, lastSyncAt: Date? = nil, pendingToReplica: Int? = nil,
                pendingToStorage: Int? = nil, conflictsCreated: Int? = nil, lastError: String? = nil, held: [HeldRecord]? = nil,
                lostAtStorage: [String]? = nil, lostAtReplica: [String]? = nil) {
        self.held = held
        self.lostAtStorage = lostAtStorage
        self.lostAtReplica = lostAtReplica
        self.storage = storage
        self.replica = replica
        self.reachable = reachable
        self.lastSyncAt = lastSyncAt
        self.pendingToReplica = pendingToReplica
        self.pendingToStorage = pendingToStorage
        self.conflictsCreated = conflictsCreated
        self.lastError = lastError
    }
}

/// Replica sync operations of `recipe-worker`.
public enum WorkerSyncOps {
    /// `sync.run`: syncs every configured pair now and answers when done.
    public enum Run: WireOperation {
        public static let name = "sync.run"
        public static let isWrite = false
        // A retry (the reply later than the client's timeout) waits for this run's report; it never starts a second sync.
        public static let runsOnce = true
        public typealias Request = Empty
        public struct Response: Codable, Sendable, Equatable {
            public var pairs: [PairSync]
            public init(pairs: [PairSync]) { self.pairs = pairs }
        }
    }

    /// `sync.status`: every configured pair's last sync, pending changes and conflicts.
    public enum Status: WireOperation {
        public static let name = "sync.status"
        public static let isWrite = false
        public typealias Request = Empty
        public struct Response: Codable, Sendable, Equatable {
            public var pairs: [PairStatus]
            /// Seconds between syncs when no change notice arrives.
            public var intervalSeconds: Double
            /// True when the worker syncs only when asked (`--sync-on-request`); left out otherwise.
            public var onRequestOnly: Bool?
            public init(pairs: [PairStatus], intervalSeconds: Double, onRequestOnly: Bool? = nil) {
                self.pairs = pairs
                self.intervalSeconds = intervalSeconds
                self.onRequestOnly = onRequestOnly
            }
        }
    }
}
