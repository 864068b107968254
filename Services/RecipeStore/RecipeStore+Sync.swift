import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

extension RecipeStore {
    /// A write transaction that also records its changes in the change feed, before it commits.
    /// The transaction's writes are stamped with one time — the hybrid clock's next wall time — so a
    /// recipe's `updatedAt` is its newest version's time, the same on the replica that wrote it and on
    /// every replica that applies it.
    ///
    /// Concurrent writes share one transaction and one fsync (`WriteBatcher`), each of several in a savepoint of its own.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await batcher.write { db in
            try SyncState.pinningTime(of: db) {
                // A read-back kept by another write (one a savepoint rolled back) never stands in for this one's.
                ReadBack.forget()
                let result = try updates(db)
                try SyncLog.capture(in: db, asWritten: true)
                return result
            }
        }
    }

    // MARK: The change feed

    /// A clock left ahead restarts before this replica's feed is read (`sync.info`, `sync.changes`, `sync.pending`), not
    /// only at its next write (`SyncLog.restartClockIfAhead`): a replica only read from since its machine's clock was
    /// set right (by NTP, say, while it ran) had its records held by every other replica until a person wrote there.
    /// One read of `sync_state` when no restart is due.
    func restartClockBeforeFeedRead() async throws {
        let due = try await pool.read { db in SyncLog.clockRestartPoint(try SyncState.load(db)) != nil }
        guard due else { return }
        try await pool.write { db in _ = try SyncLog.restartClockIfAhead(in: db) }
    }

    /// This replica's id, the newest feed position, and how many conflicts it has recorded.
    /// `lostPhotos`: blobs a recipe here names that are gone from the disk (see `RecipeStore+LostPhotos.swift`).
    /// `retired`: replica ids that have ended (this replica's own before a new incarnation, and those learned of).
    public func syncInfo() async throws
        -> (replicaID: String, latestSeq: Int, conflictsCreated: Int, held: [HeldRecord], empty: Bool, lostPhotos: [String], retired: [String]) {
        try await restartClockBeforeFeedRead()
        return try await pool.read { db in
            let replica = try SyncState.load(db).replica
            let latest = try Int.fetchOne(db, sql: "SELECT MAX(seq) FROM sync_records") ?? 0
            let conflicts = try SyncApplier.openConflictCount(in: db)
            return (replica, latest, conflicts, try SyncApplier.heldSummaries(in: db), try Self.holdsNothing(db), try currentLostPhotos(in: db),
                    try SyncLog.retiredReplicas(in: db))
        }
    }

    /// `sync.info` as the wire carries it.
    public func syncInfoResponse(publishEndpoint: String?) async throws -> SyncOps.Info.Response {
        let info = try await syncInfo()
        return .init(replicaID: info.replicaID, publishEndpoint: publishEndpoint, latestSeq: info.latestSeq, conflictsCreated: info.conflictsCreated,
                     held: info.held, empty: info.empty, lostPhotos: info.lostPhotos.isEmpty ? nil : info.lostPhotos,
                     retired: info.retired.isEmpty ? nil : info.retired)
    }

    /// Learns that the replicas `ids` have ended (another replica's `sync.info` lists them; `sync.retire`), then
    /// re-dates and applies the records held here for being stamped too far ahead by one of them: nothing else
    /// would ever stamp them again (`SyncApplier.settlingAhead`). Idempotent: ids known already change nothing.
    public func retireReplicas(_ ids: [String]) async throws -> SyncOps.Apply.Response {
        guard ids.count <= SyncOps.Retire.maxIDs else {
            throw ServiceError(.invalidArgument, "the request names \(ids.count) replica ids; at most \(SyncOps.Retire.maxIDs) at a time")
        }
        if let bad = ids.first(where: { !SyncValidation.isReplicaID($0) }) {
            throw ServiceError(.invalidArgument, "\"\(bad.prefix(80))\" is not a replica id (1 to \(SyncValidation.maxReplicaIDLength) letters, digits and dashes)")
        }
        let photos = self.photos
        let result = try await pool.write { db -> SyncOps.Apply.Response in
            guard try !SyncLog.addRetired(ids, in: db).isEmpty else {
                return .init(changed: 0, conflicts: 0, held: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sync_held") ?? 0)
            }
            ReadBack.forget() // as every write begins (see `write`)
            try SyncLog.restartClockIfAhead(in: db)
            try SyncLog.capture(in: db) // anything local first, so the merge sees it
            // What was held of the ended replicas is re-dated and applied now.
            return try Self.merge(state: try SyncState.load(db), photos: photos, in: db)
        }
        if result.changed > 0 { await collectUnusedPhotos() }
        return result
    }

    /// Records changed after `since`, oldest change first, leaving out those whose last
    /// change came from `exclude` (unless one holds what `exclude` has not seen of this replica: `SyncSeen.unseenEcho`).
    /// A page holds at most `limit` records and about 4 MB.
    /// `seen`, the reading side's newest write of this replica (`SyncSeen`), and `sinceMark`, what this feed held at
    /// `since` when the reading side took it (`FeedMark`), show whether it was rolled back: then it takes a new
    /// incarnation and refuses with `sync_restart`, nothing read.
    /// `seenWrites`, the reading side's newest write of every replica, lets an echo holding a write it has not seen go
    /// too (`SyncSeen.Reader`).
    public func syncChanges(since: Int, exclude: String?, limit: Int, seen: SyncOps.SeenWrite? = nil,
                            sinceMark: String? = nil, seenWrites: [SyncOps.SeenWrite]? = nil) async throws -> SyncOps.Changes.Response {
        guard (1...1_000).contains(limit) else { throw ServiceError(.invalidArgument, "limit is \(limit); it must be 1 to 1000") }
        guard since >= 0 else { throw ServiceError(.invalidArgument, "since is \(since); it must be 0 or more") }
        if let seen, let problem = SyncSeen.problem(seen) { throw ServiceError(.invalidArgument, problem) }
        if let sinceMark, let problem = FeedMark.problem(sinceMark, name: "sinceMark") { throw ServiceError(.invalidArgument, problem) }
        if let seenWrites, let problem = SyncSeen.problem(seenWrites) { throw ServiceError(.invalidArgument, problem) }
        if seen != nil || sinceMark != nil {
            // Why the reader's knowledge shows a roll back, and the lost write it names (`SyncSeen.takeIncarnation`).
            @Sendable func rolledBack(_ db: Database) throws -> (why: String, lost: SyncSeen.LostWrite?)? {
                if let seen, let why = try SyncSeen.rolledBack(seen, state: SyncState.load(db), in: db) { return (why, .init(seen)) }
                if let sinceMark, let found = try FeedMark.rolledBack(since: since, mark: sinceMark, in: db) {
                    return (found.why, found.lost.map { .init(write: $0, stamp: nil) })
                }
                return nil
            }
            if try await pool.read(rolledBack) != nil {
                let taken = try await pool.write { db -> String? in
                    guard let found = try rolledBack(db) else { return nil }
                    var state = try SyncState.load(db)
                    try SyncSeen.takeIncarnation(&state, reason: found.why, lost: found.lost, in: db)
                    return state.replica
                }
                if let taken {
                    throw ServiceError(.syncRestart, "this storage was rolled back (its peer holds writes of it it never made, or made otherwise, "
                                       + "or read changes where its feed now holds others) and took a new incarnation (\(taken)); nothing was read: "
                                       + "start the sync again from its replica id")
                }
            }
        }
        try await restartClockBeforeFeedRead()
        return try await pool.read { db in
            var records: [SyncRecord] = []
            var next = since
            var bytes = 0
            var scanned = 0
            // An echo goes too when it holds a write the reader has not seen (`SyncSeen.Reader`): looked at only while
            // this replica holds a later write of someone's than the reader has seen, or when it holds a sample's version.
            let reader = try exclude.map { try SyncSeen.Reader($0, seen: seen, seenWrites: seenWrites, in: db) }
            let echoCheck = reader.map { !$0.ahead.isEmpty } ?? false
            let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT seq, source, body, CASE WHEN source = ? THEN instr(body, ?) > 0 ELSE 0 END AS sample
                FROM sync_records WHERE seq > ? ORDER BY seq
                """), arguments: [exclude, SyncClock.genesis.stamp, since])
            while let row = try rows.next() {
                let seq: Int = row["seq"]
                next = seq
                scanned += 1
                if row["source"] != exclude {
                    let body: String = row["body"]
                    records.append(try SyncLog.decode(body, seq: seq))
                    bytes += body.utf8.count
                } else if let reader, echoCheck || row["sample"] {
                    let body: String = row["body"]
                    if let record = try reader.unseenEcho(body, seq: seq, sample: row["sample"], in: db) {
                        records.append(record)
                        bytes += body.utf8.count
                    }
                }
                if records.count >= limit || bytes >= 4_000_000 || scanned >= 20_000 { break }
            }
            let more = try Int.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sync_records WHERE seq > ? LIMIT 1"), arguments: [next]) != nil
            return .init(records: records, next: next, more: more, seen: try exclude.flatMap { try SyncSeen.newest(of: $0, in: db) },
                         nextMark: try FeedMark.at(next, in: db))
        }
    }

    /// How many changes after `since` did not come from `exclude`.
    public func syncPendingCount(since: Int, exclude: String?) async throws -> Int {
        try await restartClockBeforeFeedRead()
        return try await pool.read { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM sync_records WHERE seq > ? AND source IS NOT ?"),
                             arguments: [since, exclude]) ?? 0
        }
    }

    /// The record as the feed holds it (`nil` when it never existed here).
    public func syncRecord(_ kind: SyncKind, id: String) async throws -> SyncRecord? {
        try await pool.read { db in try SyncLog.storedRecord(kind, id, in: db) }
    }

    // MARK: Photos by hash

    /// The hashes among `hashes` whose blob this replica lacks.
    public func missingPhotos(_ hashes: [String]) throws -> [String] {
        guard hashes.count <= 10_000 else {
            throw ServiceError(.invalidArgument, "sha256 lists \(hashes.count) hashes; ask about at most 10000 at a time")
        }
        // A hash names a file in the photo folder: only the 64-hex form may ever reach the file system.
        if let bad = hashes.first(where: { !Self.isHash($0) }) {
            throw ServiceError(.invalidArgument, "\"\(bad.prefix(80))\" is not a SHA-256 (64 lowercase hex digits)")
        }
        var seen = Set<String>()
        return hashes.filter { seen.insert($0).inserted && !photos.contains($0) }
    }

    /// A blob's bytes, checked against its hash.
    public func photoBlob(sha256: String) throws -> Data {
        guard Self.isHash(sha256) else { throw ServiceError(.invalidArgument, "\"\(sha256)\" is not a SHA-256 (64 lowercase hex digits)") }
        guard photos.contains(sha256) else { throw ServiceError(.notFound, "no photo with SHA-256 \(sha256) is stored here") }
        // A file this storage cannot read is, to a sync, a blob it does not hold: the record naming it waits at the
        // target for a replica whose copy can be read, and the sync goes on (it ended at this photo before).
        return try readBlob(sha256, unreadable: .notFound)
    }

    /// The blobs among `hashes`, in order, each checked as `photoBlob` checks one, until the next would take the
    /// bytes past `maxBytes` (the first is returned whatever its size; the rest are left to be asked for again);
    /// `missing`: those before that point not held here (never, or lost or damaged on this disk).
    public func photoBlobs(_ hashes: [String], maxBytes: Int) throws -> (blobs: [(sha256: String, bytes: Data)], missing: [String]) {
        var blobs: [(sha256: String, bytes: Data)] = []
        var missing: [String] = []
        var bytes = 0
        for hash in hashes {
            let blob: Data
            do {
                blob = try photoBlob(sha256: hash)
            } catch let error as ServiceError where error.code == .notFound {
                missing.append(hash)
                continue
            }
            guard blobs.isEmpty || bytes + blob.count <= maxBytes else { break }
            blobs.append((hash, blob))
            bytes += blob.count
        }
        return (blobs, missing)
    }

    /// Stores a blob sent by another replica, after checking the bytes against `sha256`. `false` when it was already here.
    public func putPhotoBlob(sha256: String, bytes: Data) throws -> Bool {
        let actual = try Self.checkReceivedBlob(sha256: sha256, bytes: bytes, damaged: "the photo's bytes have SHA-256 %@, not \(sha256); it was damaged on the way and was not stored")
        heldPhotos.withLock { $0[sha256] = Date() }
        if photos.contains(sha256) { return false }
        try photos.store(bytes, checked: actual)
        return true
    }

    /// Stores blobs another replica sent, each checked as `putPhotoBlob` checks one, made durable together.
    /// Every blob is checked before any is written: one refused blob leaves all of them unstored.
    /// Returns how many were new.
    public func putPhotoBlobs(_ blobs: [(sha256: String, bytes: Data)]) throws -> Int {
        var checked: [(sha256: String, bytes: Data)] = []
        for (index, blob) in blobs.enumerated() {
            let which = blobs.count == 1 ? "the photo" : "photo \(index + 1) of \(blobs.count)"
            do {
                _ = try Self.checkReceivedBlob(sha256: blob.sha256, bytes: blob.bytes,
                                               damaged: "the bytes have SHA-256 %@, not \(blob.sha256); they were damaged on the way")
            } catch {
                throw ServiceError(error.code, "\(which): \(error.message); \(blobs.count == 1 ? "the photo of this request was not stored" : "none of the \(blobs.count) photos of this request was stored")")
            }
            checked.append(blob)
        }
        let now = Date()
        heldPhotos.withLock { held in for blob in checked { held[blob.sha256] = now } }
        return try photos.storeAll(checked.filter { !photos.contains($0.sha256) })
    }

    /// A blob another replica sent, checked as any photo is (size, image kind) and against the hash it came
    /// under; returns that hash. `damaged` says what a mismatch means, with `%@` for the hash the bytes have.
    private static func checkReceivedBlob(sha256: String, bytes: Data, damaged: String) throws(ServiceError) -> String {
        guard isHash(sha256) else { throw ServiceError(.invalidArgument, "\"\(sha256.prefix(80))\" is not a SHA-256 (64 lowercase hex digits)") }
        _ = try PhotoRules.check(bytes)
        let actual = PhotoBlobs.hash(bytes)
        guard actual == sha256 else { throw ServiceError(.photoDamaged, damaged.replacingOccurrences(of: "%@", with: actual)) }
        return actual
    }

    static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    // MARK: Applying another replica's changes

    /// Merges records from replica `from` and, in the same transaction, remembers
    /// `cursor` as how far its feed has been applied. Merging is idempotent: applying
    /// the same records again changes nothing. A record that cannot be applied yet (a photo
    /// blob not here, a stamp too far ahead of this replica's clock, a value this replica
    /// refuses) is held — kept with the reason, retried on every later apply — and the rest
    /// are applied: one record never stops a feed.
    ///
    /// `expecting` and `after` make the page conditional (the sync engine always sends both): the page was read
    /// for this storage as replica `expecting` (leaving out what that replica wrote itself) and continues `peer`'s
    /// feed from `after`. When this storage is another replica now (restored behind the same endpoint, or a new
    /// incarnation, taken here or at start), or its cursor for `peer` is behind `after`, applying the page would
    /// lose changes for good; it is refused with `sync_restart` instead, nothing applied.
    public func applySync(from peer: String, records: [SyncRecord], cursor: Int?,
                          expecting expected: String? = nil, after: Int? = nil,
                          seen: SyncOps.SeenWrite? = nil, cursorMark: String? = nil,
                          unavailablePhotos: [String] = []) async throws -> SyncOps.Apply.Response {
        guard SyncValidation.isReplicaID(peer) else {
            throw ServiceError(.invalidArgument, "from \"\(peer.prefix(80))\" is not a replica id (1 to \(SyncValidation.maxReplicaIDLength) letters, digits and dashes)")
        }
        if let cursor, cursor < 0 { throw ServiceError(.invalidArgument, "cursor is \(cursor); it must be 0 or more") }
        if let after, after < 0 { throw ServiceError(.invalidArgument, "after is \(after); it must be 0 or more") }
        if let seen, let problem = SyncSeen.problem(seen) { throw ServiceError(.invalidArgument, problem) }
        if let cursorMark, let problem = FeedMark.problem(cursorMark, name: "cursorMark") { throw ServiceError(.invalidArgument, problem) }
        guard records.count <= 1_000 else {
            throw ServiceError(.invalidArgument, "the request holds \(records.count) records; send at most 1000 at a time")
        }
        let unavailable = try Self.unavailablePhotos(unavailablePhotos)
        let photos = self.photos
        let conditional = expected != nil || after != nil
        let outcome = try await pool.write { db -> Result<(SyncOps.Apply.Response, lost: Set<String>), ServiceError> in
            ReadBack.forget() // as every write begins (see `write`)
            try SyncLog.restartClockIfAhead(in: db) // a clock left ahead restarts before it stamps a merge
            try SyncLog.capture(in: db) // anything local first, so the merge sees it
            var state = try SyncState.load(db)
            guard peer != state.replica else {
                throw ServiceError(.invalidArgument, "the records come from this replica (\(peer)); a replica does not sync with itself")
            }
            if let expected, expected != state.replica {
                return .failure(Self.restart("this storage is replica \(state.replica), not \(expected.prefix(80)) as it was when the sync read the page "
                                             + "(it was restored or started a new incarnation since)"))
            }
            if let after {
                let stored = try Int.fetchOne(db.cachedStatement(sql: "SELECT seq FROM sync_cursors WHERE peer = ?"), arguments: [peer]) ?? 0
                if stored < after {
                    return .failure(Self.restart("this storage has applied \(peer)'s feed up to \(stored), and the page continues it from \(after)"))
                }
            }
            // A peer has seen writes of this replica that it does not remember making: it was restored
            // from an older copy. A new incarnation keeps its next writes from reusing those numbers.
            // Or the newest write of it the peer holds (`SyncSeen`) is one it never made, or made with another stamp.
            var rolledBack: String?
            // A write of this replica's the peer holds and it lost: what tells the roll back point (`SyncSeen.takeIncarnation`).
            var lost = seen.map(SyncSeen.LostWrite.init)
            if let newer = records.lazy.flatMap(\.clocks).compactMap({ $0.vv[state.replica] }).filter({ $0 > state.write }).min() {
                rolledBack = "a peer had seen writes newer than this replica's own (restored from an older copy)"
                let replica = Substring(state.replica)
                if let clock = records.lazy.flatMap(\.clocks).first(where: { clock in
                    StampOrder.parts(clock.stamp)?.replica == replica && (clock.vv[state.replica] ?? 0) > state.write
                }) {
                    lost = .init(write: clock.vv[state.replica]!, stamp: clock.stamp)
                } else if seen.map({ StampOrder.parts($0.stamp)?.replica != replica }) ?? true {
                    // Counted only by other replicas' versions: the number alone tells the point.
                    lost = .init(write: newer, stamp: nil)
                }
            } else if let seen {
                rolledBack = try SyncSeen.rolledBack(seen, state: state, in: db)
            }
            if let rolledBack {
                try SyncSeen.takeIncarnation(&state, reason: rolledBack, lost: lost, in: db)
                // The page left out this replica's own writes under its old id, and the copy lost some of them:
                // the new incarnation is kept, and the sync starts again for the replica this storage is now.
                if conditional {
                    return .failure(Self.restart("this storage was restored from an older copy and took a new incarnation (\(state.replica)) on this page"))
                }
            }
            if let cursor, rolledBack == nil { // a new incarnation reads every peer's feed again (`takeIncarnation`)
                // A page that continues the feed from behind the stored cursor (another sync of the same pair applied
                // further meanwhile: two workers, each beside one replica) applies, and leaves the cursor where it is:
                // moved back, it had the other sync's next page refused. Only an unconditional apply sets it back
                // (the sync engine resets it so when the peer's feed is shorter than it: the peer was restored).
                // The mark goes with the position it was read at (`FeedMark`); kept when a page ends where the cursor is.
                try db.execute(sql: conditional ? """
                    INSERT INTO sync_cursors (peer, seq, syncedAt, mark) VALUES (?, ?, ?, ?)
                    ON CONFLICT (peer) DO UPDATE SET seq = MAX(seq, excluded.seq), syncedAt = excluded.syncedAt,
                        mark = CASE WHEN excluded.seq > seq OR (excluded.seq = seq AND excluded.mark IS NOT NULL) THEN excluded.mark ELSE mark END
                    """ : """
                    INSERT INTO sync_cursors (peer, seq, syncedAt, mark) VALUES (?, ?, ?, ?)
                    ON CONFLICT (peer) DO UPDATE SET seq = excluded.seq, syncedAt = excluded.syncedAt,
                        mark = CASE WHEN excluded.seq = seq AND excluded.mark IS NULL THEN mark ELSE excluded.mark END
                    """, arguments: [peer, cursor, Self.now(), cursorMark])
            }
            let response = try Self.merge(state: state, photos: photos, unavailable: unavailable, in: db) { applier in
                for record in records.sorted(by: { ($0.kind.applyOrder, $0.seq) < ($1.kind.applyOrder, $1.seq) }) {
                    try applier.apply(record, from: peer, in: db)
                }
                // What the page superseded is let go now, not at the next page (there may be none for a long time).
                let touched = Set(records.map { "\($0.kind.rawValue)|\($0.id)" })
                for held in try SyncApplier.settledHeldRecords(in: db, photos: photos, unavailable: unavailable, now: applier.now, touched: touched) {
                    try applier.apply(held.record, from: held.peer, in: db)
                }
            }
            // A blob applied without is lost here as on the replica it could not come from: noted once this commits
            // (a restart finds it the same way), so a sync with any replica that holds it brings it back.
            let lostHere = try unavailable.filter { try !photos.contains($0) && Self.recipesName(photo: $0, in: db) }
            return .success((response, lostHere))
        }
        let (result, lost) = try outcome.get()
        noteLost(lost)
        if result.changed > 0 { await collectUnusedPhotos() }
        return result
    }

    /// `sync.apply`'s `unavailablePhotos`, checked: at most `maxUnavailablePhotos` SHA-256s (each names a file in the photo
    /// folder, so only the 64-hex form is taken).
    static func unavailablePhotos(_ hashes: [String]) throws -> Set<String> {
        let most = SyncOps.Apply.Request.maxUnavailablePhotos
        guard hashes.count <= most else {
            throw ServiceError(.invalidArgument, "unavailablePhotos names \(hashes.count) blobs; at most \(most) at a time")
        }
        if let (index, bad) = hashes.enumerated().first(where: { !isHash($0.element) }) {
            throw ServiceError(.invalidArgument, "unavailablePhotos[\(index)] \"\(bad.prefix(80))\" is not a SHA-256 (64 lowercase hex digits)")
        }
        return Set(hashes)
    }

    /// The merge every apply makes in its transaction, from `state` (this replica's, its clock restarted and local
    /// writes captured): the records held first (a blob or the time they waited for may be here now; an ended
    /// replica's are re-dated), then `page`'s; then the catalogue settled, the clock saved, and what the merge caused
    /// in the tables (a deleted book unlinking its recipes) captured, which keeps such references as they were.
    private static func merge(state: SyncState, photos: PhotoBlobs, unavailable: Set<String> = [], in db: Database,
                              page: (inout SyncApplier) throws -> Void = { _ in }) throws -> SyncOps.Apply.Response {
        let retired = Set(try SyncLog.retiredReplicas(in: db))
        var applier = SyncApplier(state: state, photos: photos, unavailable: unavailable, seq: try SyncLog.nextSeq(in: db), retired: retired)
        for held in try SyncApplier.heldRecords(in: db, photos: photos, unavailable: unavailable, now: applier.now, retired: retired) {
            try applier.apply(held.record, from: held.peer, in: db)
        }
        try page(&applier)
        try SyncSeen.save(applier.seen, in: db)
        if applier.catalogueWritten { try SyncLog.settleCatalogue(in: db) }
        try applier.state.save(db)
        try SyncLog.capture(in: db)
        let held = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sync_held") ?? 0
        return .init(changed: applier.changed, conflicts: applier.conflicts, held: held)
    }

    private static func restart(_ why: String) -> ServiceError {
        ServiceError(.syncRestart, "\(why); nothing of the page was applied: start the sync again from this storage's replica id and cursor")
    }

    /// Records held back, oldest first.
    public func heldRecords() async throws -> [HeldRecord] {
        try await pool.read { db in try SyncApplier.heldSummaries(in: db) }
    }

    /// How far this replica has applied `peer`'s feed, and when.
    public func syncCursor(peer: String) async throws -> SyncOps.Cursor.Response {
        try await pool.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT seq, syncedAt, mark FROM sync_cursors WHERE peer = ?", arguments: [peer])
            return .init(peer: peer, seq: row?["seq"] ?? 0, syncedAt: row?["syncedAt"], seen: try SyncSeen.newest(of: peer, in: db),
                         mark: row?["mark"], seenWrites: try SyncSeen.all(in: db))
        }
    }

    // MARK: Comparing replicas

    /// Everything a user can see, as text in a fixed order: two replicas in step give the same dump.
    /// Bookkeeping (`updatedAt`, `version`, search rows) is left out; photo blobs in use are listed by hash.
    public func canonicalDump() async throws -> String {
        let photos = self.photos
        return try await pool.read { db in
            var lines: [String] = []
            let tables: [(String, String)] = [
                ("recipes", "id"), ("recipe_ingredients", "recipeId, position"), ("recipe_instructions", "recipeId, position"),
                ("recipe_keywords", "recipeId, position"), ("recipe_photos", "recipeId, position"), ("books", "id"),
                ("ingredients", "name"), ("ingredient_aliases", "ingredientId, alias"), ("cook_log", "id"),
            ]
            for (table, order) in tables {
                lines.append("# \(table)")
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY \(order)") {
                    lines.append(row.columnNames.filter { $0 != "updatedAt" && $0 != "version" }
                        .map { "\($0)=\(row[$0] as DatabaseValue)" }.joined(separator: "|"))
                }
            }
            // Losing values a book, catalogue entry or cook-log entry keeps on itself, open, as `recipes conflicts` lists
            // them: they are in no table.
            lines.append("# kept conflicts")
            lines += try Self.openConflicts(in: db).filter { $0.copyID == nil }.map { conflict in
                let values = (conflict.lostValues ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.canonicalText)" }
                return "\(conflict.kind.rawValue) \(conflict.recordID) \(conflict.id) \(values.joined(separator: " "))"
            }.sorted()
            // Blobs in use, and whether each is really here (unused ones are left to collection).
            lines.append("# photos")
            for hash in try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM recipe_photos ORDER BY sha256") {
                lines.append("\(hash) \(photos.contains(hash) ? "stored" : "MISSING")")
            }
            return lines.joined(separator: "\n")
        }
    }
}

extension RecipeStore {
    /// Runs this replica's clock `milliseconds` off the machine's (drills and tests of clock skew:
    /// its stamps move with it, and so does what it accepts as "too far ahead").
    public func setClockOffset(milliseconds: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('clockOffset', ?)", arguments: [String(milliseconds)])
        }
    }

    /// Each time this replica's clock restarted because it had run ahead of the machine's (`SyncLog.restartClockIfAhead`),
    /// oldest first, as "date: why".
    public func clockRestarts() async throws -> [String] {
        try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'clockRestarts'")?
                .split(separator: "\n").map(String.init) ?? []
        }
    }

    /// This replica's id, and the ids it had before (a restored or copied database takes a new one).
    public func incarnations() async throws -> (current: String, history: [String]) {
        try await pool.read { db in
            let current = try SyncState.load(db).replica
            let history = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'incarnations'")?
                .split(separator: "\n").map(String.init) ?? []
            return (current, history)
        }
    }
}
