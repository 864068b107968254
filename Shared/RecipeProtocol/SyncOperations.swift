import Foundation

// MARK: Operations of recipe-storage

/// The rules by which a storage merges another replica's records and settles what they claim in its tables. Two
/// storages that merged the same records by different rules would hold different things for ever, each sure it had
/// seen the other's every change: so every storage says its rules (`sync.info`), a worker says the rules it syncs by
/// in every `sync.changes` and `sync.apply`, and a storage, or a worker, meeting other rules than its own refuses to
/// sync (`unsupported_version`, saying which side is behind) until all run one release. A new number whenever a
/// change to the merge or to that settling would let two replicas end differently (`SyncRulesFingerprintTests` holds
/// the answers of the merge and the catalogue's settling to a fixed set of inputs under each number, and fails when
/// they change under the same one).
public enum SyncRules {
    /// 1: the releases before rules were numbered (they said none): a delete and a concurrent re-creation settled by
    /// the stamps; a line id unique across every recipe.
    /// 2: a record present beats one removed when neither has seen the other; a line id names a line within its recipe.
    /// 3: a catalogue entry's row id is worked out from every entry's record, not from the order they arrived in; a
    /// version a clock restart re-dated is the same write (`SyncClock.restartEntry`), not a new one.
    /// 4: a present set element or record that beats a concurrent removal keeps its own version, not one joined with
    /// the removal's (a later removal that saw every write but not that one lost to it).
    /// 5: two versions that have seen the same writes but hold different values (a replica rolled back gave one write
    /// number to two writes) are concurrent: the one shown, the other a conflicted copy; no longer one dropped.
    /// 6: a delete that a version of the record it had not seen beats still counts for the writes it had seen
    /// (`_deletions`), and a set element's removal that an add it had not seen beats for the adds it had seen
    /// (`removed:<element>`): a record stays deleted, a photo or keyword removed, once every write of it was seen by
    /// some delete or removal.
    ///
    /// Computed, not a stored constant: requests and replies take it as a default argument, which is compiled into each
    /// calling module, and an incremental build that changed only this number left modules not rebuilt saying the old one.
    public static var current: Int { 6 }

    /// Why `who`, saying `rules` (nil: a release from before rules were numbered), cannot sync with `here` (the side
    /// judging, which runs this release); nil when it can.
    public static func mismatch(_ rules: Int?, of who: String, here: String) -> String? {
        let theirs = rules ?? 1
        guard theirs != current else { return nil }
        let (release, behind) = theirs < current ? ("an older RecipeVault release", who) : ("a newer RecipeVault release", here)
        return "\(who) syncs by sync rules \(theirs) (\(release)) and \(here) by \(current): two replicas merging "
            + "the same changes by different rules would end up different for ever, so nothing is synced between them until "
            + "both run one release; upgrade \(behind)"
    }
}

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
            /// `true` when nothing was ever stored here (no recipe, book, cook-log entry, ingredient, feed entry
            /// or import job): a sync may bring the whole of another replica as a snapshot (`sync.install`).
            public var empty: Bool?
            /// Photo blobs a recipe here names that are gone from this storage's disk (removed, or damaged and moved
            /// aside), at most 500; a sync sends them from a replica that holds them. Absent when there are none.
            public var lostPhotos: [String]?
            /// The sync rules this storage merges by (`SyncRules`); absent from a storage of a release before they were numbered.
            public var rules: Int?
            /// Replica ids that have ended, in order: this storage's own before it took a new incarnation (restored from
            /// a backup, or its folder copied), and those it learned of from other replicas (`sync.retire`). Absent when
            /// there are none.
            public var retired: [String]?
            /// `true`: `sync.apply` takes `unavailablePhotos` (a record naming a blob no replica could send is applied, and
            /// the blob noted lost). Absent from a storage of a release before it, which holds such a record instead.
            public var takesUnavailablePhotos: Bool?
            public init(replicaID: String, publishEndpoint: String?, latestSeq: Int, conflictsCreated: Int, held: [HeldRecord]? = nil,
                        empty: Bool? = nil, lostPhotos: [String]? = nil, rules: Int? = SyncRules.current, retired: [String]? = nil,
                        takesUnavailablePhotos: Bool? = true) {
                self.rules = rules
                self.retired = retired
                self.takesUnavailablePhotos = takesUnavailablePhotos
                self.replicaID = replicaID
                self.publishEndpoint = publishEndpoint
                self.latestSeq = latestSeq
                self.conflictsCreated = conflictsCreated
                self.held = held
                self.empty = empty
                self.lostPhotos = lostPhotos
            }
        }
    }

    /// `sync.retire`: replica ids that have ended, as another replica's `sync.info` lists them. Nothing can set right
    /// a record stamped far ahead by a replica that has ended (a clock ahead, then a restore from an older backup lost
    /// what it wrote meanwhile): no replica will stamp it again. So a storage re-dates such records it holds itself —
    /// the same write and value under a stamp of now, counted in the version's `restart` entry, as the writing replica
    /// would have — and applies them, instead of holding them until that time comes. Idempotent; the answer counts as
    /// `sync.apply`'s does.
    public enum Retire: WireOperation {
        public static let role = OperationRole.peer
        public static let name = "sync.retire"
        public static let isWrite = false
        // Re-dates what it held of ended replicas: a retry is given this run's count, not a second run's none.
        public static let runsOnce = true
        /// The most ids one request may name, and the most a storage keeps (the oldest are let go).
        public static let maxIDs = 1_000
        /// The longest replica id (ids made by a storage are 12 hex digits; `conflict` and `starter` are reserved names).
        public static let maxReplicaIDLength = 64

        /// Whether `text` is shaped as a replica id: 1 to `maxReplicaIDLength` ASCII letters, digits and dashes.
        public static func isReplicaID(_ text: String) -> Bool {
            (1...maxReplicaIDLength).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
                (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == UInt8(ascii: "-")
            }
        }
        public struct Request: Codable, Sendable, Equatable {
            /// Replica ids (1 to 64 letters, digits and dashes), at most `maxIDs`.
            public var ids: [String]
            public init(ids: [String]) { self.ids = ids }
        }
        public typealias Response = Apply.Response
    }

    /// One write of a replica: its number (what version vectors count) and its stamp.
    public struct SeenWrite: Codable, Sendable, Equatable {
        /// The write's number, 1 or more.
        public var write: Int64
        /// Its hybrid-logical-clock stamp (`wall.counter.replica`), which names the replica that made it.
        public var stamp: String
        public init(write: Int64, stamp: String) {
            self.write = write
            self.stamp = stamp
        }
    }

    /// `sync.changes`: records changed after `since`, in feed order, a page at a time.
    public enum Changes: WireOperation {
        public static let role = OperationRole.peer
        public static let name = "sync.changes"
        public static let repliesInBulk = true // grows with the collection
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            /// The last sequence number already seen (0 for everything).
            public var since: Int
            /// A replica id: records whose last change came from it are left out (no echo).
            public var exclude: String?
            /// At most this many records (1 to 1000; default 200). A page also stops near 4 MB.
            public var limit: Int?
            /// The sync rules of the worker reading (`SyncRules`): `sync.changes` refuses other rules than the storage's,
            /// and their absence (a worker from before they were numbered). `sync.pending` does not look at it.
            public var rules: Int?
            /// The newest write of this storage's replica that the side reading for holds (its `sync.cursor` `seen`).
            /// A storage that made fewer writes, or whose own write of that number has another stamp, was rolled back
            /// (a file-system or machine snapshot, a folder put back that it could not tell at start): it takes a new
            /// incarnation and answers `sync_restart`, before any of its writes of reused numbers are read.
            public var seen: SeenWrite?
            /// What this storage's feed held at `since` when the side reading for took it (`next` and `nextMark` of that
            /// page, kept with its cursor: `sync.cursor` `mark`). A storage whose record at that position is another was
            /// rolled back and has placed new changes where the lost ones were: it takes a new incarnation and answers
            /// `sync_restart`, before a reader skips them. Ignored when the position holds no record (it moved on).
            public var sinceMark: String?
            /// The newest write of every replica among the records the side reading for took (its `sync.cursor`
            /// `seenWrites`; at most `maxSeenWrites`, one per replica). With `exclude`, an echo that holds a write of any
            /// replica's the reader has not seen goes too: a reader rolled back loses the merges it had passed on, of
            /// whichever replica's writes. Absent (a worker of an older release): only `seen` is looked at.
            public var seenWrites: [SeenWrite]?
            /// The most `seenWrites` a request may hold.
            public static let maxSeenWrites = 10_000
            public init(since: Int, exclude: String? = nil, limit: Int? = nil, seen: SeenWrite? = nil, sinceMark: String? = nil,
                        seenWrites: [SeenWrite]? = nil, rules: Int? = SyncRules.current) {
                self.rules = rules
                self.since = since
                self.exclude = exclude
                self.limit = limit
                self.seen = seen
                self.sinceMark = sinceMark
                self.seenWrites = seenWrites
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var records: [SyncRecord]
            /// The cursor to save once these are applied (the last sequence number looked at).
            public var next: Int
            /// `true` when there are more changes after `next`.
            public var more: Bool
            /// The newest write of the `exclude` replica among the records this storage took (its number and stamp);
            /// absent when the request names none or none was taken. The records that replica sent are left out of
            /// every page for it, so this is how a replica rolled back with its whole data folder learns what it
            /// lost: the worker passes it on to `sync.apply` (`seen`).
            public var seen: SeenWrite?
            /// What the feed holds at `next` (a digest of the record there; absent when none is): the worker keeps it with
            /// the cursor (`sync.apply` `cursorMark`) and sends it back with the next read from there (`sinceMark`).
            public var nextMark: String?
            public init(records: [SyncRecord], next: Int, more: Bool, seen: SeenWrite? = nil, nextMark: String? = nil) {
                self.records = records
                self.next = next
                self.more = more
                self.seen = seen
                self.nextMark = nextMark
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

    /// `sync.photos`: several blobs by hash in one reply, each in a frame of its own, in the order asked. A blob this
    /// storage does not hold (any more) is listed in `missing`; a reply stops before the blob that would take it past
    /// `maxBytes` (the first always goes), and the blobs neither sent nor missing are asked for again.
    public enum Photos: WireOperation {
        public static let touchesFiles = true
        public static let role = OperationRole.peer
        public static let name = "sync.photos"
        public static let isWrite = false
        /// The most blobs one request asks for.
        public static let maxPhotos = 64
        /// The most bytes of blobs one reply carries (the first blob goes whatever its size).
        public static let maxBytes = 16 * 1_024 * 1_024
        public struct Request: Codable, Sendable, Equatable {
            public var sha256: [String]
            public init(sha256: [String]) { self.sha256 = sha256 }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var photos: [PutPhotos.Entry]
            /// Asked for, but not held here (never, or lost or damaged on this storage's disk).
            public var missing: [String]
            public init(photos: [PutPhotos.Entry], missing: [String]) {
                self.photos = photos
                self.missing = missing
            }
        }
    }

    /// `sync.putPhoto`: stores a blob (frame 1) after checking it against its SHA-256.
    public enum PutPhoto: WireOperation {
        public static let touchesFiles = true
        public static let role = OperationRole.peer
        public static let name = "sync.putPhoto"
        public static let isWrite = false
        // A retry is told what this run stored, not "already there".
        public static let runsOnce = true
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

    /// `sync.putPhotos`: several blobs (frames 1…n) in one request, each checked against its SHA-256 and
    /// all made durable together (one flush to disk for the lot instead of two per blob). Nothing is stored
    /// when one of them is refused.
    public enum PutPhotos: WireOperation {
        public static let touchesFiles = true
        public static let role = OperationRole.peer
        public static let name = "sync.putPhotos"
        public static let isWrite = false
        // A retry is told what this run stored, not "already there".
        public static let runsOnce = true
        /// The most blobs of one request (a request has at most 16 frames, the JSON one of them).
        public static let maxPhotos = WireProtocol.maxFrames - 1
        /// The most bytes of blobs one request carries (under the service's message limit).
        public static let maxBytes = 16 * 1_024 * 1_024
        public struct Entry: Codable, Sendable, Equatable {
            public var sha256: String
            public var photo: FrameReference
            public init(sha256: String, photo: FrameReference) {
                self.sha256 = sha256
                self.photo = photo
            }
        }
        public struct Request: Codable, Sendable, Equatable {
            public var photos: [Entry]
            public init(photos: [Entry]) { self.photos = photos }
        }
        public struct Response: Codable, Sendable, Equatable {
            /// How many of them were new here (the rest were already stored).
            public var stored: Int
            public init(stored: Int) { self.stored = stored }
        }
    }

    /// `sync.apply`: merges another replica's records and, in the same transaction, saves the cursor.
    public enum Apply: WireOperation {
        public static let touchesFiles = true // checks which photos are here; collects unused ones
        public static let role = OperationRole.peer
        public static let name = "sync.apply"
        public static let isWrite = false
        // Merging twice changes nothing more, but the reply says what this run changed: a retry is given it (a second run
        // would say 0 changes, or `storage_full` on the disk this run filled), and waits for it while it runs.
        public static let runsOnce = true
        public struct Request: Codable, Sendable, Equatable {
            /// The replica the records come from.
            public var from: String
            public var records: [SyncRecord]
            /// The sender's feed position to remember for `from`; left out, the cursor stays.
            public var cursor: Int?
            /// The replica id the sender read this storage as when it started the sync. A storage that is now
            /// another replica (restored, or a new incarnation) refuses the page with `sync_restart`: the page
            /// was read for the replica it was, and leaves out what that replica wrote itself.
            public var to: String?
            /// The cursor for `from` the page continues from. A storage whose cursor is behind it refuses the
            /// page with `sync_restart` (applying it would skip the changes in between).
            public var after: Int?
            /// The sync rules of the worker sending (`SyncRules`), which has found them the sending replica's too: other
            /// rules than this storage's, or none (a worker from before they were numbered), are refused before anything is applied.
            public var rules: Int?
            /// The newest write of this storage's replica that `from` holds (`seen` of the page's `sync.changes`). A
            /// storage that made fewer writes, or whose own write of that number has another stamp, was rolled back
            /// (a file-system or machine snapshot, a folder put back that it could not tell at start): it takes a new
            /// incarnation, and refuses a page sent with `to` or `after` with `sync_restart`.
            public var seen: SeenWrite?
            /// What `from`'s feed holds at `cursor` (`nextMark` of the page's `sync.changes`), kept with the cursor
            /// (`sync.cursor` `mark`): up to 64 letters and digits.
            public var cursorMark: String?
            /// Blobs the sender asked `from` for and it does not hold (`sync.photos` named them missing: lost from its disk,
            /// or from every disk), at most `maxUnavailablePhotos` SHA-256s. A record whose only obstacle is such a blob is
            /// applied without it, and the blob is noted lost here (`sync.info` `lostPhotos`): a sync with any replica that
            /// holds it brings it back. Without it, the record is held until the blob arrives.
            public var unavailablePhotos: [String]?
            /// The most hashes one `unavailablePhotos` may name (a page's 1,000 records of 10 photos each).
            public static let maxUnavailablePhotos = 10_000
            public init(from: String, records: [SyncRecord], cursor: Int?, to: String? = nil, after: Int? = nil,
                        seen: SeenWrite? = nil, cursorMark: String? = nil, unavailablePhotos: [String]? = nil, rules: Int? = SyncRules.current) {
                self.unavailablePhotos = unavailablePhotos
                self.rules = rules
                self.from = from
                self.records = records
                self.cursor = cursor
                self.to = to
                self.after = after
                self.seen = seen
                self.cursorMark = cursorMark
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
            /// The newest write of `peer` among the records this storage took (`SeenWrite`); absent when none was.
            /// The worker passes it on to `peer`'s `sync.changes` (`seen`).
            public var seen: SeenWrite?
            /// What `peer`'s feed held at `seq` when it was applied up to there (`nextMark`); absent when not known.
            /// The worker passes it on to `peer`'s `sync.changes` (`sinceMark`).
            public var mark: String?
            /// The newest write of every replica among the records this storage took (`seen` is `peer`'s among them), at
            /// most `Changes.Request.maxSeenWrites`: the worker passes them on to `peer`'s `sync.changes` (`seenWrites`).
            public var seenWrites: [SeenWrite]?
            public init(peer: String, seq: Int, syncedAt: Date?, seen: SeenWrite? = nil, mark: String? = nil, seenWrites: [SeenWrite]? = nil) {
                self.peer = peer
                self.seq = seq
                self.syncedAt = syncedAt
                self.seen = seen
                self.mark = mark
                self.seenWrites = seenWrites
            }
        }
    }
}

// MARK: Snapshots: a new, empty replica gets the whole of another at once

extension SyncOps {
    /// `sync.snapshot`: a consistent copy of this replica's database, kept for an hour for `sync.snapshotRead`
    /// and `sync.snapshotPhotos` (at most four at a time; `sync.snapshotDone` removes one sooner).
    public enum Snapshot: WireOperation {
        public static let touchesFiles = true
        public static let role = OperationRole.peer
        public static let name = "sync.snapshot"
        public static let isWrite = false
        // A retry is given this run's snapshot rather than making a second copy of the database.
        public static let runsOnce = true
        public typealias Request = Empty
        public struct Response: Codable, Sendable, Equatable {
            /// Names the copy in the calls that follow.
            public var snapshot: UUID
            /// The replica copied, and the feed position the copy holds everything up to.
            public var replicaID: String
            public var seq: Int
            /// The copy's size in bytes, its SHA-256 (lowercase hex), and how many records and photo blobs it holds.
            public var bytes: Int
            public var sha256: String
            public var records: Int
            public var photos: Int
            public init(snapshot: UUID, replicaID: String, seq: Int, bytes: Int, sha256: String, records: Int, photos: Int) {
                self.snapshot = snapshot
                self.replicaID = replicaID
                self.seq = seq
                self.bytes = bytes
                self.sha256 = sha256
                self.records = records
                self.photos = photos
            }
        }
    }

    /// `sync.snapshotRead`: up to `length` bytes (at most 8 MiB; default 4 MiB) of a snapshot from `offset`, as frame 1.
    public enum SnapshotRead: WireOperation {
        public static let touchesFiles = true
        public static let role = OperationRole.peer
        public static let name = "sync.snapshotRead"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var snapshot: UUID
            public var offset: Int
            public var length: Int?
            public init(snapshot: UUID, offset: Int, length: Int? = nil) {
                self.snapshot = snapshot
                self.offset = offset
                self.length = length
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var offset: Int
            /// The bytes; fewer than asked only at the end of the copy.
            public var data: FrameReference
            public init(offset: Int, data: FrameReference = FrameReference(frame: 1)) {
                self.offset = offset
                self.data = data
            }
        }
    }

    /// `sync.snapshotPhotos`: the hashes of the photo blobs a snapshot's recipes use, in order, after `after`.
    public enum SnapshotPhotos: WireOperation {
        public static let role = OperationRole.peer
        public static let name = "sync.snapshotPhotos"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var snapshot: UUID
            public var after: String?
            /// At most this many (1 to 10000; default 2000).
            public var limit: Int?
            public init(snapshot: UUID, after: String? = nil, limit: Int? = nil) {
                self.snapshot = snapshot
                self.after = after
                self.limit = limit
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var sha256: [String]
            public var more: Bool
            public init(sha256: [String], more: Bool) {
                self.sha256 = sha256
                self.more = more
            }
        }
    }

    /// `sync.snapshotDone`: removes a snapshot this replica made.
    public enum SnapshotDone: WireOperation {
        public static let touchesFiles = true
        public static let role = OperationRole.peer
        public static let name = "sync.snapshotDone"
        public static let isWrite = false
        // A retry is told this run removed it.
        public static let runsOnce = true
        public struct Request: Codable, Sendable, Equatable {
            public var snapshot: UUID
            public init(snapshot: UUID) { self.snapshot = snapshot }
        }
        public struct Response: Codable, Sendable, Equatable {
            /// `false` when it was gone already.
            public var removed: Bool
            public init(removed: Bool) { self.removed = removed }
        }
    }

    /// `sync.snapshotWrite`: receives the bytes (frame 1) of another replica's snapshot at `offset`, in order.
    /// Only an empty replica takes them; the file waits an hour for `sync.install`.
    public enum SnapshotWrite: WireOperation {
        public static let touchesFiles = true
        public static let role = OperationRole.peer
        public static let name = "sync.snapshotWrite"
        public static let isWrite = false
        // Writing the same bytes at the same offset again changes nothing once they are there; but a retry that arrived
        // while the first run still wrote them would find a part and be refused as out of order: it waits for that run.
        public static let runsOnce = true
        public struct Request: Codable, Sendable, Equatable {
            public var snapshot: UUID
            public var offset: Int
            public var data: FrameReference
            /// The whole snapshot's size (`sync.snapshot`'s bytes), when the sender knows it: the write that
            /// brings the last byte starts the storage checking the copy, while the photos are still on their
            /// way, so `sync.install` finds the work done. Without it the check runs inside `sync.install`.
            public var total: Int?
            public init(snapshot: UUID, offset: Int, data: FrameReference = FrameReference(frame: 1), total: Int? = nil) {
                self.snapshot = snapshot
                self.offset = offset
                self.data = data
                self.total = total
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            /// The bytes received so far.
            public var bytes: Int
            public init(bytes: Int) { self.bytes = bytes }
        }
    }

    /// `sync.install`: makes a received snapshot this replica's content, if this replica is still empty. The
    /// copy is checked first (size, SHA-256, SQLite's integrity check, the schema, every column's type); this
    /// replica keeps its id, and its cursor for `from` starts at `seq`.
    public enum Install: WireOperation {
        public static let touchesFiles = true
        public static let role = OperationRole.peer
        public static let name = "sync.install"
        public static let isWrite = false
        // A retry is given this run's answer rather than finding the replica already joined.
        public static let runsOnce = true
        public struct Request: Codable, Sendable, Equatable {
            public var snapshot: UUID
            /// The replica the snapshot was made on, and `sync.snapshot`'s seq, bytes and sha256.
            public var from: String
            public var seq: Int
            public var bytes: Int
            public var sha256: String
            public init(snapshot: UUID, from: String, seq: Int, bytes: Int, sha256: String) {
                self.snapshot = snapshot
                self.from = from
                self.seq = seq
                self.bytes = bytes
                self.sha256 = sha256
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            /// `false` when this replica was not empty any more or runs another schema; `reason` says which,
            /// and the records are then sent one page at a time instead.
            public var installed: Bool
            public var reason: String?
            /// This replica's id and newest feed position afterwards.
            public var replicaID: String
            public var latestSeq: Int
            public init(installed: Bool, reason: String? = nil, replicaID: String, latestSeq: Int) {
                self.installed = installed
                self.reason = reason
                self.replicaID = replicaID
                self.latestSeq = latestSeq
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
