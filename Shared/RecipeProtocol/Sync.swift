import Foundation

/// What kind of record a synced record is.
public enum SyncKind: String, Codable, Sendable, CaseIterable {
    /// A cookbook (key: its id).
    case book
    /// A catalogue entry (key: its normalized name, which is unique).
    case ingredient
    /// A recipe with its ingredient lines, steps, keywords and photo list (key: its id).
    case recipe
    /// A cook-log entry (key: its id).
    case cookLog

    /// Books and catalogue entries are applied before the recipes that point to them, recipes before cook-log entries.
    public var applyOrder: Int {
        switch self {
        case .book: 0
        case .ingredient: 1
        case .recipe: 2
        case .cookLog: 3
        }
    }
}

/// The version of one field: the writes it has seen (a version vector, replica → write number)
/// and the hybrid-logical-clock stamp of the write that set it (`wallms.counter.replica`, ordered as text).
public struct SyncClock: Codable, Sendable, Hashable {
    /// Replica id → the number of that replica's last write this value has seen.
    public var vv: [String: Int64]
    /// `0001763700000000.000000.replica`: wall-clock milliseconds, counter, replica; compared as text.
    public var stamp: String

    public init(vv: [String: Int64], stamp: String) {
        self.vv = vv
        self.stamp = stamp
    }

    /// The clock of the sample collection: below every real write, the same on every replica.
    public static let genesis = SyncClock(vv: [:], stamp: "0000000000000000.000000.starter")

    /// `true` when every write `self` has seen, `other` has seen too.
    public func isCovered(by other: SyncClock) -> Bool { Self.covers(other.vv, self.vv) }

    /// `true` when version vector `a` has seen every write `b` has.
    public static func covers(_ a: [String: Int64], _ b: [String: Int64]) -> Bool {
        b.allSatisfy { replica, count in a[replica, default: 0] >= count }
    }

    /// The writes either has seen.
    public static func join(_ a: [String: Int64], _ b: [String: Int64]) -> [String: Int64] {
        a.merging(b, uniquingKeysWith: max)
    }
}

/// One field's value with its version.
public struct SyncField: Sendable, Hashable {
    public var value: JSONValue
    public var clock: SyncClock

    public init(value: JSONValue, clock: SyncClock) {
        self.value = value
        self.clock = clock
    }
}

/// A record as it travels between replicas: the full current value of every
/// field, and each field's version. Fields that share a version share one entry
/// of `clocks` (a recipe edit changes many fields at once).
public struct SyncRecord: Codable, Sendable, Equatable {
    public var kind: SyncKind
    public var id: String
    /// Its position in the sender's change feed.
    public var seq: Int
    public var fields: [String: JSONValue]
    public var clocks: [SyncClock]
    /// Field name → index in `clocks`.
    public var fieldClocks: [String: Int]

    /// The name of the field that says whether the record was deleted (a tombstone keeps its last values).
    public static let deletedField = "_deleted"

    public init(kind: SyncKind, id: String, seq: Int, fields: [String: JSONValue], clocks: [SyncClock], fieldClocks: [String: Int]) {
        self.kind = kind
        self.id = id
        self.seq = seq
        self.fields = fields
        self.clocks = clocks
        self.fieldClocks = fieldClocks
    }

    /// A record from per-field states; clocks are shared and listed in a fixed order, so equal states encode equally.
    public init(kind: SyncKind, id: String, seq: Int, states: [String: SyncField]) {
        let clocks = Array(Set(states.values.map(\.clock))).sorted { ($0.stamp, Self.vvText($0.vv)) < ($1.stamp, Self.vvText($1.vv)) }
        let index = Dictionary(uniqueKeysWithValues: clocks.enumerated().map { ($1, $0) })
        self.init(kind: kind, id: id, seq: seq, fields: states.mapValues(\.value), clocks: clocks,
                  fieldClocks: states.mapValues { index[$0.clock]! })
    }

    /// Each field with its version (fields without a valid clock index are dropped).
    public var states: [String: SyncField] {
        var states: [String: SyncField] = [:]
        for (name, value) in fields {
            guard let index = fieldClocks[name], clocks.indices.contains(index) else { continue }
            states[name] = SyncField(value: value, clock: clocks[index])
        }
        return states
    }

    /// The SHA-256 of every photo a live record's values name (recipes only). A tombstone names none:
    /// deleting a recipe removes its photos, so its blobs may be collected everywhere.
    public var photoHashes: [String] {
        guard kind == .recipe, isLive else { return [] }
        return fields.compactMap { name, value in
            name.hasPrefix(Self.photoPrefix) ? value.object?["sha256"]?.string : nil
        }.sorted()
    }

    /// A recipe's photos and keywords are sets: each element is a field of its own
    /// (`photo:<photo id>` → `{sha256, byteCount, mediaType, position}`, `keyword:<text>` → position),
    /// `null` once removed. Concurrent adds on two replicas keep both; a removal wins only over the adds it had seen.
    public static let photoPrefix = "photo:"
    public static let keywordPrefix = "keyword:"
    /// The fields of a conflict kept on a book, catalogue entry or cook-log entry: `conflict:<id>` →
    /// `{field, value, state}`; and, on a conflicted copy, `conflictOf` → `{recipe, fields}`. They live
    /// in the sync record only (no table holds them) and travel with it, so every replica lists the same conflicts.
    public static let conflictPrefix = "conflict:"
    public static let conflictOfField = "conflictOf"

    /// Whether `name` is one element of a set field (merged add-wins, never a conflict).
    public static func isElementField(_ name: String) -> Bool {
        name.hasPrefix(photoPrefix) || name.hasPrefix(keywordPrefix)
    }

    /// Whether `name` is kept in the sync record only (no table column holds it).
    public static func isRecordOnlyField(_ name: String) -> Bool {
        name.hasPrefix(conflictPrefix) || name == conflictOfField
    }

    /// Whether the record exists (see `SyncMerge.isLive`).
    public var isLive: Bool { SyncMerge.isLive(states) }

    static func vvText(_ vv: [String: Int64]) -> String {
        vv.keys.sorted().map { "\($0)=\(vv[$0]!)" }.joined(separator: ",")
    }
}

/// The order of hybrid-logical-clock stamps: wall-clock milliseconds, then the counter, as
/// numbers (a short counter is not a small one), then the replica id; a stamp that does not
/// parse sorts below every one that does, by its text.
public enum StampOrder {
    public static func parts(_ stamp: String) -> (wall: Int64, counter: Int64, replica: Substring)? {
        let pieces = stamp.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3, let wall = Int64(pieces[0]), let counter = Int64(pieces[1]) else { return nil }
        return (wall, counter, pieces[2])
    }

    /// `true` when `a` sorts strictly before `b`.
    public static func precedes(_ a: String, _ b: String) -> Bool {
        switch (parts(a), parts(b)) {
        case let (x?, y?): return (x.wall, x.counter, x.replica) < (y.wall, y.counter, y.replica)
        case (nil, _?): return true
        case (_?, nil): return false
        case (nil, nil): return a < b
        }
    }
}

/// Merging two versions of a record, field by field. Pure functions: every replica
/// merging the same two versions gets the same result, in either order.
public enum SyncMerge {
    /// A value that lost to a concurrent write of the same field.
    public struct Loss: Sendable, Hashable {
        public var field: String
        public var value: JSONValue
        public var clock: SyncClock
    }

    /// Merges `local` and `remote`. For each field: a version that has seen the
    /// other's write wins; versions that have not seen each other are concurrent,
    /// and the higher stamp wins (ties: the larger value text). The losing value of
    /// a concurrent pair is reported when it differs from the winner.
    public static func merge(_ local: [String: SyncField], _ remote: [String: SyncField]) -> (merged: [String: SyncField], losses: [Loss]) {
        var merged = local
        var losses: [Loss] = []
        for (name, theirs) in remote {
            guard let ours = local[name] else {
                merged[name] = theirs
                continue
            }
            let (field, loss) = mergeField(name, ours, theirs)
            merged[name] = field
            if let loss { losses.append(loss) }
        }
        return (merged, losses)
    }

    static func mergeField(_ name: String, _ a: SyncField, _ b: SyncField) -> (SyncField, Loss?) {
        let aSeesB = b.clock.isCovered(by: a.clock)
        let bSeesA = a.clock.isCovered(by: b.clock)
        let element = SyncRecord.isElementField(name)
        if aSeesB && bSeesA { return (ranksHigher(a, b, element: element) ? a : b, nil) } // the same writes seen
        if aSeesB { return (a, nil) }
        if bSeesA { return (b, nil) }
        let (winner, loser) = ranksHigher(a, b, element: element) ? (a, b) : (b, a)
        let field = SyncField(value: winner.value, clock: SyncClock(vv: SyncClock.join(a.clock.vv, b.clock.vv), stamp: winner.clock.stamp))
        // A set element, the delete flag and conflict bookkeeping never make a conflict of their own.
        let quiet = element || name == SyncRecord.deletedField || SyncRecord.isRecordOnlyField(name)
        let lost = winner.value == loser.value || quiet ? nil : Loss(field: name, value: loser.value, clock: loser.clock)
        return (field, lost)
    }

    /// The deterministic order between two versions: for a set element, present beats removed
    /// (an add the removal had not seen survives it); then the stamp, then the value text.
    static func ranksHigher(_ a: SyncField, _ b: SyncField, element: Bool = false) -> Bool {
        if element, (a.value == .null) != (b.value == .null) { return b.value == .null }
        if a.clock.stamp != b.clock.stamp { return StampOrder.precedes(b.clock.stamp, a.clock.stamp) }
        return a.value.canonicalText >= b.value.canonicalText
    }

    /// A record exists unless it was deleted by a replica that had seen every
    /// write of every field: an edit the deleting side had not seen brings it back.
    public static func isLive(_ states: [String: SyncField]) -> Bool {
        guard let deleted = states[SyncRecord.deletedField], deleted.value == .bool(true) else { return true }
        return states.contains { name, field in name != SyncRecord.deletedField && !field.clock.isCovered(by: deleted.clock) }
    }
}

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
    public init(storage: String, replica: String, reachable: Bool, lastSyncAt: Date? = nil, pendingToReplica: Int? = nil,
                pendingToStorage: Int? = nil, conflictsCreated: Int? = nil, lastError: String? = nil, held: [HeldRecord]? = nil) {
        self.held = held
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
    /// `conflicts.list`: every unresolved conflict, oldest first.
    public enum List: WireOperation {
        public static let name = "conflicts.list"
        public static let isWrite = false
        public typealias Request = Empty
        public struct Response: Codable, Sendable, Equatable {
            public var conflicts: [SyncConflict]
            public init(conflicts: [SyncConflict]) { self.conflicts = conflicts }
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
            public init(folder: String, recipes: Int, photos: Int, bytes: Int) {
                self.folder = folder
                self.recipes = recipes
                self.photos = photos
                self.bytes = bytes
            }
        }
    }
}
