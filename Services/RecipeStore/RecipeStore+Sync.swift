import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

extension RecipeStore {
    /// A write transaction that also records its changes in the change feed, before it commits.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await pool.write { db in
            let result = try updates(db)
            try SyncLog.capture(in: db)
            return result
        }
    }

    // MARK: The change feed

    /// This replica's id, the newest feed position, and how many conflicts it has recorded.
    public func syncInfo() async throws -> (replicaID: String, latestSeq: Int, conflictsCreated: Int) {
        try await pool.read { db in
            let replica = try SyncState.load(db).replica
            let latest = try Int.fetchOne(db, sql: "SELECT MAX(seq) FROM sync_records") ?? 0
            let conflicts = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sync_conflicts") ?? 0
            return (replica, latest, conflicts)
        }
    }

    /// Records changed after `since`, oldest change first, leaving out those whose last
    /// change came from `exclude`. A page holds at most `limit` records and about 4 MB.
    public func syncChanges(since: Int, exclude: String?, limit: Int) async throws -> SyncOps.Changes.Response {
        guard (1...1_000).contains(limit) else { throw ServiceError(.invalidArgument, "limit is \(limit); it must be 1 to 1000") }
        guard since >= 0 else { throw ServiceError(.invalidArgument, "since is \(since); it must be 0 or more") }
        return try await pool.read { db in
            var records: [SyncRecord] = []
            var next = since
            var bytes = 0
            var scanned = 0
            let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT seq, source, body FROM sync_records WHERE seq > ? ORDER BY seq"),
                                           arguments: [since])
            while let row = try rows.next() {
                let seq: Int = row["seq"]
                next = seq
                scanned += 1
                if row["source"] != exclude {
                    let body: String = row["body"]
                    records.append(try SyncLog.decode(body, seq: seq))
                    bytes += body.utf8.count
                }
                if records.count >= limit || bytes >= 4_000_000 || scanned >= 20_000 { break }
            }
            let more = try Int.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sync_records WHERE seq > ? LIMIT 1"), arguments: [next]) != nil
            return .init(records: records, next: next, more: more)
        }
    }

    /// How many changes after `since` did not come from `exclude`.
    public func syncPendingCount(since: Int, exclude: String?) async throws -> Int {
        try await pool.read { db in
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
        return try photos.read(sha256)
    }

    /// Stores a blob sent by another replica, after checking the bytes against `sha256`. `false` when it was already here.
    public func putPhotoBlob(sha256: String, bytes: Data) throws -> Bool {
        guard Self.isHash(sha256) else { throw ServiceError(.invalidArgument, "\"\(sha256)\" is not a SHA-256 (64 lowercase hex digits)") }
        _ = try PhotoRules.check(bytes) // size and image kind, as for any photo
        guard PhotoBlobs.hash(bytes) == sha256 else {
            throw ServiceError(.photoDamaged, "the photo's bytes have SHA-256 \(PhotoBlobs.hash(bytes)), not \(sha256); it was damaged on the way and was not stored")
        }
        heldPhotos.withLock { $0[sha256] = Date() }
        if photos.contains(sha256) { return false }
        try photos.store(bytes)
        return true
    }

    static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    // MARK: Applying another replica's changes

    /// Merges records from replica `from` and, in the same transaction, remembers
    /// `cursor` as how far its feed has been applied. Merging is idempotent: applying
    /// the same records again changes nothing.
    public func applySync(from peer: String, records: [SyncRecord], cursor: Int?) async throws -> SyncOps.Apply.Response {
        guard SyncValidation.isReplicaID(peer) else {
            throw ServiceError(.invalidArgument, "from \"\(peer.prefix(80))\" is not a replica id (1 to \(SyncValidation.maxReplicaIDLength) letters, digits and dashes)")
        }
        if let cursor, cursor < 0 { throw ServiceError(.invalidArgument, "cursor is \(cursor); it must be 0 or more") }
        // Every record is checked before anything is written: one bad record refuses the whole request.
        let now = SyncState.nowMilliseconds()
        for record in records { try SyncValidation.check(record, now: now) }
        let photos = self.photos
        let result = try await pool.write { db -> SyncOps.Apply.Response in
            try SyncLog.capture(in: db) // anything local first, so the merge sees it
            var state = try SyncState.load(db)
            guard peer != state.replica else {
                throw ServiceError(.invalidArgument, "the records come from this replica (\(peer)); a replica does not sync with itself")
            }
            var seq = try SyncLog.nextSeq(in: db)
            var changed = 0
            var conflicts = 0
            for record in records.sorted(by: { ($0.kind.applyOrder, $0.seq) < ($1.kind.applyOrder, $1.seq) }) {
                for clock in record.clocks { state.observe(clock.stamp) }
                let stored = try SyncLog.storedRecord(record.kind, record.id, in: db)
                let local = stored?.states ?? [:]
                let remote = record.states
                let (merged, losses) = SyncMerge.merge(local, remote)
                guard merged != local else { continue }
                let live = SyncMerge.isLive(merged)
                // What is stored must be what a person could have written, however the merge combined it.
                if let problem = SyncValidation.valuesProblem(record.kind, id: record.id, merged.mapValues(\.value)) {
                    throw ServiceError(.invalidArgument, "\(record.kind.rawValue) \(record.id): merged with this replica's version it is not valid: \(problem)")
                }
                try SyncLog.writeTables(record.kind, record.id, values: merged.mapValues(\.value), live: live, photos: photos, in: db)
                try db.execute(sql: "DELETE FROM sync_pending WHERE kind = ? AND id = ?", arguments: [record.kind.rawValue, record.id])
                try SyncLog.save(SyncRecord(kind: record.kind, id: record.id, seq: seq, states: merged),
                                 source: merged == remote ? peer : state.replica, in: db)
                seq += 1
                changed += 1
                if !losses.isEmpty {
                    let made = try Self.recordLosses(losses, of: record.kind, record.id, merged: merged, photos: photos, seq: &seq, in: db)
                    conflicts += made
                }
            }
            try state.save(db)
            if let cursor {
                try db.execute(sql: """
                    INSERT INTO sync_cursors (peer, seq, syncedAt) VALUES (?, ?, ?)
                    ON CONFLICT (peer) DO UPDATE SET seq = excluded.seq, syncedAt = excluded.syncedAt
                    """, arguments: [peer, cursor, Self.now()])
            }
            try SyncLog.capture(in: db) // what the merge caused here (a deleted book unlinks its recipes)
            return .init(changed: changed, conflicts: conflicts)
        }
        if result.changed > 0 { try await collectUnusedPhotos() }
        return result
    }

    /// How far this replica has applied `peer`'s feed, and when.
    public func syncCursor(peer: String) async throws -> SyncOps.Cursor.Response {
        try await pool.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT seq, syncedAt FROM sync_cursors WHERE peer = ?", arguments: [peer])
            return .init(peer: peer, seq: row?["seq"] ?? 0, syncedAt: row?["syncedAt"])
        }
    }

    /// The version-vector entry that ranks a conflicted copy's kept values above its other fields.
    static let conflictReplica = "conflict"

    /// Keeps what lost a concurrent write: for a recipe, a `conflictedCopy` recipe holding
    /// the losing values (one per losing write, with an id every replica derives alike);
    /// for other records, a row in `sync_conflicts`. Returns the copies made.
    private static func recordLosses(_ losses: [SyncMerge.Loss], of kind: SyncKind, _ id: String, merged: [String: SyncField],
                                     photos: PhotoBlobs, seq: inout Int, in db: Database) throws -> Int {
        let now = now()
        var made = 0
        let byWrite = Dictionary(grouping: losses, by: \.clock.stamp)
        for stamp in byWrite.keys.sorted() {
            let group = byWrite[stamp]!
            let copyID = kind == .recipe ? DerivedID.uuid("conflict|\(id)|\(stamp)").uuidString : nil
            for loss in group {
                try db.execute(sql: """
                    INSERT OR IGNORE INTO sync_conflicts (id, kind, recordId, field, lostValue, copyId, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [DerivedID.uuid("loss|\(kind.rawValue)|\(id)|\(stamp)|\(loss.field)").uuidString, kind.rawValue, id,
                                     loss.field, loss.value.canonicalText, copyID, now])
            }
            guard let copyID else { continue }
            let existing = try SyncLog.storedRecord(.recipe, copyID, in: db)
            var values = merged.mapValues(\.value)
            values.removeValue(forKey: SyncRecord.deletedField)
            for loss in group { values[loss.field] = loss.value }
            let name = values["name"]?.string ?? "Recipe"
            values["name"] = .string(String((name + " (conflicted copy)").prefix(RecipeDraft.Limits.nameLength)))
            values["origin"] = .string(RecipeOrigin.conflictedCopy.rawValue)
            // Its lines and photos need ids of their own, the same on every replica.
            values["photos"] = .array((values["photos"]?.array ?? []).map { item in
                var object = item.object ?? [:]
                let hash = object["sha256"]?.string ?? ""
                object["id"] = .string(Self.photoID(recipeID: UUID(uuidString: copyID)!, sha256: hash).uuidString)
                return .object(object)
            })
            for (field, tag) in [("ingredients", "i"), ("instructions", "s")] {
                values[field] = .array((values[field]?.array ?? []).enumerated().map { index, item in
                    var object = item.object ?? [:]
                    object["id"] = .string(DerivedID.uuid("\(copyID)|\(tag)|\(index)").uuidString)
                    return .object(object)
                })
            }
            // Every replica that sees this losing write makes the same copy. The lost values carry a
            // version above the copy's other fields, so copies made from different merges agree on them.
            let lost = Set(group.map(\.field))
            var states = values.mapValues { SyncField(value: $0, clock: SyncClock(vv: [:], stamp: stamp)) }
            for field in lost { states[field]?.clock = SyncClock(vv: [Self.conflictReplica: 1], stamp: stamp) }
            states[SyncRecord.deletedField] = SyncField(value: .bool(false), clock: SyncClock(vv: [:], stamp: stamp))
            if let existing {
                // Made before (here or elsewhere): it must also keep what lost this time.
                let (updated, _) = SyncMerge.merge(existing.states, states.filter { lost.contains($0.key) })
                guard updated != existing.states else { continue }
                states = updated
            }
            try SyncLog.writeTables(.recipe, copyID, values: states.mapValues(\.value), live: SyncMerge.isLive(states), photos: photos, in: db)
            try db.execute(sql: "DELETE FROM sync_pending WHERE kind = 'recipe' AND id = ?", arguments: [copyID])
            try SyncLog.save(SyncRecord(kind: .recipe, id: copyID, seq: seq, states: states), source: try SyncState.load(db).replica, in: db)
            seq += 1
            if existing != nil { continue }
            made += 1
        }
        return made
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
            // Blobs in use, and whether each is really here (unused ones are left to collection).
            lines.append("# photos")
            for hash in try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM recipe_photos ORDER BY sha256") {
                lines.append("\(hash) \(photos.contains(hash) ? "stored" : "MISSING")")
            }
            return lines.joined(separator: "\n")
        }
    }
}
