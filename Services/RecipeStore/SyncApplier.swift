import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

/// Applies other replicas' records inside one `sync.apply` transaction: merges each with the
/// local version, writes the tables, keeps what lost, and holds back what cannot be applied yet. How it settles
/// what records claim in the tables (ids two records claim, lines, references) is part of the sync rules: a change
/// that would leave two replicas' tables different raises `SyncRules.current` (see `SyncMerge`).
struct SyncApplier {
    var state: SyncState
    let photos: PhotoBlobs
    /// Blobs the sender could not get from the replica the records come from (`sync.apply` `unavailablePhotos`): a record
    /// whose only obstacle is one of them is applied without it, and the blob is lost here as it is there.
    let unavailable: Set<String>
    var seq: Int
    var changed = 0
    var conflicts = 0
    /// Whether a catalogue entry was written: the catalogue is settled once the page is applied (`SyncLog.settleCatalogue`).
    var catalogueWritten = false
    let now: Int64
    /// Replica ids that have ended (`SyncLog.retiredReplicas`): what they stamped too far ahead is re-dated here.
    let retired: Set<String>
    /// The newest write of each replica among the records taken (`SyncSeen`).
    var seen: [String: SyncOps.SeenWrite] = [:]

    /// The most records held back at once; a peer that sends more is refused until some apply.
    static let maxHeld = 10_000
    /// The version-vector entry that ranks a conflicted copy's kept values above its other fields.
    static let conflictReplica = "conflict"

    init(state: SyncState, photos: PhotoBlobs, unavailable: Set<String> = [], seq: Int, retired: Set<String>) {
        self.state = state
        self.photos = photos
        self.unavailable = unavailable
        self.seq = seq
        self.retired = retired
        now = state.now
    }

    /// Whether `clock` is stamped further ahead of `now` than a replica accepts.
    static func isAhead(_ clock: SyncClock, now: Int64) -> Bool {
        guard let stamp = SyncStamp(clock.stamp) else { return false }
        return stamp.wall > now + SyncValidation.maxClockAheadMilliseconds
    }

    /// Whether `clock` is stamped too far ahead (`isAhead`) by a replica in `retired`.
    static func isRetiredAhead(_ clock: SyncClock, retired: Set<String>, now: Int64) -> Bool {
        guard !retired.isEmpty, isAhead(clock, now: now), let author = clock.stamp.split(separator: ".").last else { return false }
        return retired.contains(String(author))
    }

    /// `record` with what it holds stamped too far ahead settled where that can be done here:
    /// - a field whose version this replica's stored one supersedes (the same write re-dated, or a later one) is the
    ///   stored field: the merge would keep it anyway, and an outdated stamp must not hold the rest of the record back;
    /// - a version a replica that has ended stamped is re-dated here: the same write and value under a stamp of this
    ///   replica's now, one more count in its `restart` entry — what that replica would have done at a clock restart,
    ///   had it not ended (restored from an older backup that lacks those writes, no replica will ever stamp them
    ///   again). Another replica re-dating the same version makes an equal one with another stamp; the merge keeps one.
    /// What a live replica stamped ahead stays as it is: that replica re-dates it when its clock is set right.
    mutating func settlingAhead(_ record: SyncRecord, stored: [String: SyncField]) -> SyncRecord {
        let (retired, now) = (retired, now)
        // A record whose fields and clocks do not pair up is left for the check to refuse as it stands.
        guard record.clocks.contains(where: { Self.isAhead($0, now: now) }), record.fieldClocks.count == record.fields.count,
              record.fields.keys.allSatisfy({ record.fieldClocks[$0].map(record.clocks.indices.contains) ?? false }) else { return record }
        var states = record.states
        var stamp: String?
        for (name, field) in states where Self.isAhead(field.clock, now: now) {
            if let kept = stored[name], SyncMerge.merge([name: kept], [name: field]).merged[name] == kept {
                states[name] = kept
            } else if Self.isRetiredAhead(field.clock, retired: retired, now: now) {
                if stamp == nil { stamp = state.tick().stamp }
                var vv = field.clock.vv
                vv[SyncClock.restartEntry, default: 0] += 1
                states[name] = SyncField(value: field.value, clock: SyncClock(vv: vv, stamp: stamp!))
            }
        }
        return SyncRecord(kind: record.kind, id: record.id, seq: record.seq, states: states)
    }

    /// Merges `record` from `peer`, or holds it (with the reason) when it cannot be applied yet.
    mutating func apply(_ record: SyncRecord, from peer: String, in db: Database) throws {
        // Text is stored composed (NFC) on every replica; a record in another form (an older or foreign peer's) is read
        // as that, or its values would differ from the replicas' own by bytes that Swift calls equal.
        var record = record.composed
        // A newer version from the same sender replaces one held before — but pages of one feed can land out of order
        // (two syncs of one pair at once each apply a page, and the one read first may land last), and an older version
        // must not replace a newer one held: that one was lost for good, the cursor already past it. So the held version
        // stays when it has everything the arriving one has and more (an older page landing late), and the arriving one
        // is applied, or held, on its own; it goes in every other case, the same version tried again among them.
        let key: StatementArguments = [peer, record.kind.rawValue, record.id]
        var keepsHeld = false
        if let body = try String.fetchOne(db.cachedStatement(sql: "SELECT body FROM sync_held WHERE peer = ? AND kind = ? AND id = ?"), arguments: key),
           let held = try? SyncLog.decode(body, seq: 0).composed.states, held != record.states {
            keepsHeld = SyncMerge.merge(held, record.states).merged == held
        }
        if !keepsHeld { try db.cachedStatement(sql: "DELETE FROM sync_held WHERE peer = ? AND kind = ? AND id = ?").execute(arguments: key) }
        let stored = try SyncLog.storedRecord(record.kind, record.id, in: db)
        if let stored, Self.holds(stored.states, record.states) {
            // A version this replica holds already, field by field (a feed read again from the start: a peer's new
            // incarnation, a cursor set back): merged, it is the stored record, so there is nothing to check or write.
            // Its stamps are observed and its writes noted as taken, as for any version that merges.
            for clock in record.clocks { state.observe(clock.stamp) }
            SyncSeen.note(record.clocks, into: &seen)
            return
        }
        record = settlingAhead(record, stored: stored?.states ?? [:])
        do {
            try SyncValidation.check(record, now: now)
        } catch {
            // A stamp ahead of time is retried once that time comes; anything else when a newer version replaces it.
            let ahead = record.clocks.compactMap { StampOrder.parts($0.stamp)?.wall }.max() ?? 0
            let retry = ahead > now + SyncValidation.maxClockAheadMilliseconds ? "clock:\(ahead)" : "never"
            // Held only for its stamps, it is a write of its writer's that this replica holds: one a rolled-back
            // replica lost, and may never stamp again, tells it so (`SyncSeen`), and its old id's end lets this one go.
            if retry != "never", (try? SyncValidation.check(record, now: ahead)) != nil { SyncSeen.note(record.clocks, into: &seen) }
            return try hold(record, from: peer, unless: keepsHeld, reason: error.message, missing: [], retry: retry, in: db)
        }
        for clock in record.clocks { state.observe(clock.stamp) }
        SyncSeen.note(record.clocks, into: &seen)
        let local = stored?.states ?? [:]
        let remote = record.states
        let (merged, losses) = SyncMerge.merge(local, remote)
        guard merged != local else { return }
        let live = SyncMerge.isLive(merged)
        // What is stored must be what a person could have written, however the merge combined it.
        if let problem = SyncValidation.mergedProblem(record.kind, id: record.id, merged) {
            return try hold(record, from: peer, unless: keepsHeld, reason: "merged with this replica's version it is not valid: \(problem)", missing: [],
                            retry: "never", in: db)
        }
        if record.kind == .recipe && live {
            let missing = Self.missingPhotos(merged, photos: photos, unavailable: unavailable)
            if !missing.isEmpty {
                return try hold(record, from: peer, unless: keepsHeld, reason: "waiting for \(missing.count) photo(s) not stored here yet", missing: missing,
                                retry: "photos", in: db)
            }
            // A photo id names one photo of one recipe (a replica makes it from the recipe and the blob): a record whose
            // photo has another recipe's id here (a damaged or foreign peer's) waits for a version that does not.
            if let (photo, other) = try Self.photoOfAnotherRecipe(merged, recipe: record.id, in: db) {
                return try hold(record, from: peer, unless: keepsHeld,
                                reason: "its photo \(photo) is the photo of another recipe here (\(other)); a photo id names one photo of one recipe",
                                missing: [], retry: "never", in: db)
            }
        }
        var result = merged
        if record.kind != .recipe {
            // A losing value of a book, catalogue entry or cook-log entry is kept on the record itself,
            // the same on every replica that merges the same two versions: `recipes conflicts` lists it.
            for loss in losses {
                let key = SyncRecord.conflictPrefix + DerivedID.uuid("loss|\(record.kind.rawValue)|\(record.id)|\(loss.clock.stamp)|\(loss.field)").uuidString
                guard result[key] == nil else { continue }
                result[key] = SyncField(value: .object(["field": .string(loss.field), "value": loss.value, "state": .string("open")]),
                                        clock: SyncClock(vv: [:], stamp: loss.clock.stamp))
            }
        }
        try SyncLog.writeTables(record.kind, record.id, states: result, photos: photos, unavailable: unavailable, in: db)
        try db.execute(sql: "DELETE FROM sync_pending WHERE kind = ? AND id = ?", arguments: [record.kind.rawValue, record.id])
        if record.kind == .ingredient { catalogueWritten = true }
        // Copies go into the feed before the merged record: a peer that has the record (which has seen the losing
        // write) has its copy too, however a sync is cut off — and a replica lost after passing the record on loses nothing.
        if record.kind == .recipe && !losses.isEmpty {
            conflicts += try makeCopies(losses, of: record.id, merged: result, in: db)
        }
        try SyncLog.save(SyncRecord(kind: record.kind, id: record.id, seq: seq, states: result),
                         source: result == remote ? peer : state.replica, in: db)
        seq += 1
        changed += 1
        if record.kind == .recipe {
            let original = result[SyncRecord.conflictOfField]?.value.object?["recipe"]?.string ?? record.id
            try retractSupersededCopies(of: original, in: db)
        }
    }

    /// A conflicted copy keeps a value that lost. When this replica wrote that value and then replaced
    /// it itself before learning of the conflict (`sync_replaced`, recorded as it wrote), the copy keeps a
    /// value its own author dropped: it is withdrawn here, and the withdrawal reaches every replica.
    /// A copy someone edited stays (the withdrawal had not seen the edit).
    private mutating func retractSupersededCopies(of recipe: String, in db: Database) throws {
        let replaced = Set(try Row.fetchAll(db.cachedStatement(sql: "SELECT field, stamp FROM sync_replaced WHERE recordId = ?"),
                                            arguments: [recipe]).map { "\($0["field"] as String)|\($0["stamp"] as String)" })
        guard !replaced.isEmpty else { return }
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT seq, body FROM sync_records WHERE conflicts > 0 AND kind = 'recipe'")) {
            let copy = try SyncLog.decode(row["body"], seq: row["seq"])
            guard copy.fields[SyncRecord.conflictOfField]?.object?["recipe"]?.string == recipe else { continue }
            let lost = copy.states.filter { $0.value.clock.vv[Self.conflictReplica] != nil }
            guard !lost.isEmpty, lost.allSatisfy({ replaced.contains("\($0.key)|\($0.value.clock.stamp)") }) else { continue }
            var seen: [String: Int64] = [Self.conflictReplica: 2]
            for state in lost.values { seen = SyncClock.join(seen, state.clock.vv.filter { $0.key != Self.conflictReplica }) }
            let withdrawn = SyncClock(vv: seen, stamp: lost.values.map(\.clock.stamp).max(by: StampOrder.precedes)!)
            var states = copy.states
            states[SyncRecord.deletedField] = SyncField(value: .bool(true), clock: withdrawn)
            for (name, field) in states where SyncRecord.isElementField(name) && field.value != .null {
                states[name] = SyncField(value: .null, clock: withdrawn)
            }
            let (merged, _) = SyncMerge.merge(copy.states, states)
            guard merged != copy.states else { continue }
            try SyncLog.writeTables(.recipe, copy.id, states: merged, photos: photos, in: db)
            try db.cachedStatement(sql: "DELETE FROM sync_pending WHERE kind = 'recipe' AND id = ?").execute(arguments: [copy.id])
            try SyncLog.save(SyncRecord(kind: .recipe, id: copy.id, seq: seq, states: merged), source: state.replica, in: db)
            seq += 1
            changed += 1
        }
    }

    /// Holds `record` from `peer`, unless `keepsNewer`: a newer version of it from the same sender is held already, and
    /// stays (it has everything this one has).
    private func hold(_ record: SyncRecord, from peer: String, unless keepsNewer: Bool = false, reason: String, missing: [String], retry: String,
                      in db: Database) throws {
        guard !keepsNewer else { return }
        guard record.id.utf8.count <= 200 else {
            throw ServiceError(.invalidArgument, "\(record.kind.rawValue) \(record.id.prefix(64))…: an id of \(record.id.utf8.count) bytes is not an id")
        }
        let count = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM sync_held")) ?? 0
        guard count < Self.maxHeld else {
            throw ServiceError(.busy, "this replica already holds \(count) records it cannot apply yet (\(reason)); see `recipes sync status`")
        }
        let missingText = String(decoding: try JSONEncoder().encode(missing), as: UTF8.self)
        try db.cachedStatement(sql: """
            INSERT INTO sync_held (peer, kind, id, body, reason, missing, retry, heldAt) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (peer, kind, id) DO UPDATE SET body = excluded.body, reason = excluded.reason, missing = excluded.missing,
                retry = excluded.retry
            """).execute(arguments: [peer, record.kind.rawValue, record.id, try SyncLog.encodeBody(record), String(reason.prefix(500)),
                                     missingText, retry, RecipeStore.now()])
    }

    /// Whether the write that made `clock` (its stamp's writer and number: `SyncClock.write`) is one `stored`, a
    /// record's fields, has merged: a field of it counts that write or a later one of its writer's. A write merges as a
    /// whole record, and a version of a record counting a write was made from a record holding what that write made
    /// (or what superseded it), so each of its fields is in that field's history here. A version re-dated by a clock
    /// restart is a newer version of its write, not the write: had only when a later write of its writer's is counted
    /// (which supersedes every re-dating). (Never so for a version no write made: the samples', a conflicted copy's.)
    static func isMerged(_ clock: SyncClock, into stored: [String: SyncField]) -> Bool {
        guard let write = clock.write else { return false }
        let counted = clock.restarts == 0 ? write.number : write.number + 1
        return stored.values.contains { $0.clock.vv[write.replica] ?? 0 >= counted }
    }

    /// Whether `stored`, a record's fields, has all of `states` (a held version; `merged`, the two merged): merging
    /// them changes nothing, or nothing once the versions whose write `stored` has merged already (`isMerged`) are left out.
    static func isHad(_ states: [String: SyncField], merged: [String: SyncField], by stored: [String: SyncField]) -> Bool {
        if merged == stored { return true }
        let unmerged = states.filter { !isMerged($0.value.clock, into: stored) }
        // None left out: the same merge again.
        return unmerged.count < states.count && SyncMerge.merge(stored, unmerged).merged == stored
    }

    /// Whether `stored` holds every field version of `states` as it is (value and clock): merging `states` into it
    /// gives `stored`.
    static func holds(_ stored: [String: SyncField], _ states: [String: SyncField]) -> Bool {
        states.allSatisfy { stored[$0.key] == $0.value }
    }

    /// The blobs a merged recipe names that this replica does not have.
    /// The first photo of `merged` (a live recipe's fields) whose id a photo of another recipe here has, and that recipe.
    static func photoOfAnotherRecipe(_ merged: [String: SyncField], recipe: String, in db: Database) throws -> (photo: String, recipe: String)? {
        for (name, field) in merged where name.hasPrefix(SyncRecord.photoPrefix) && field.value != .null {
            let photo = String(name.dropFirst(SyncRecord.photoPrefix.count))
            if let other = try String.fetchOne(db.cachedStatement(sql: "SELECT recipeId FROM recipe_photos WHERE id = ? AND recipeId != ?"),
                                               arguments: [photo, recipe]) {
                return (photo, other)
            }
        }
        return nil
    }

    /// The blobs `merged` (a recipe's fields) names that are not here, in photo order, but those in `unavailable` (no
    /// replica could send them: the record is taken without them).
    static func missingPhotos(_ merged: [String: SyncField], photos: PhotoBlobs, unavailable: Set<String> = []) -> [String] {
        ElementOrder.ordered(merged, prefix: SyncRecord.photoPrefix)
            .compactMap { $0.value.object?["sha256"]?.string }.filter { !photos.contains($0) && !unavailable.contains($0) }
    }

    /// The held records worth another try before a page: those whose photos are all here now (or `unavailable`: no
    /// replica could send them, and they are taken without them), and those whose
    /// stamps are no longer too far ahead. Cheap (no record is decoded unless it is tried), so it runs on every page.
    /// Those stamped ahead by a replica in `retired` are tried too (they are re-dated here).
    static func heldRecords(in db: Database, photos: PhotoBlobs, unavailable: Set<String> = [], now: Int64, retired: Set<String>) throws
        -> [(peer: String, record: SyncRecord)] {
        var ready: [(peer: String, record: SyncRecord)] = []
        for row in try Row.fetchAll(db, sql: "SELECT peer, body, missing, retry FROM sync_held WHERE retry != 'never' ORDER BY heldAt, peer, kind, id") {
            let retry: String = row["retry"]
            if retry == "photos" {
                let missing = (try? JSONDecoder().decode([String].self, from: Data((row["missing"] as String).utf8))) ?? []
                guard missing.allSatisfy({ photos.contains($0) || unavailable.contains($0) }) else { continue }
            } else if retry.hasPrefix("clock:"), let wall = Int64(retry.dropFirst(6)), wall > now + SyncValidation.maxClockAheadMilliseconds {
                // Still ahead: worth a try only when a replica that has ended stamped it (decoded only then).
                guard !retired.isEmpty, let record = try? SyncLog.decode(row["body"], seq: 0),
                      record.clocks.contains(where: { isRetiredAhead($0, retired: retired, now: now) }) else { continue }
                ready.append((row["peer"], record))
                continue
            }
            guard let record = try? SyncLog.decode(row["body"], seq: 0) else { continue }
            ready.append((row["peer"], record))
        }
        return ready.sorted { $0.record.kind.applyOrder < $1.record.kind.applyOrder }
    }

    /// The held records of `touched` ("kind|id": what a page just changed) looked at again against the stored record,
    /// whatever they waited for, since any sender's version may have settled them:
    /// - one the stored record already has all of (a newer version from another sender superseded it) is dropped: no
    ///   blob or time it waits for could make it change anything. A field version whose write this record has merged
    ///   already (`isMerged`) counts as had: merging it again could only undo what came of it. (A version a replica
    ///   whose clock ran ahead stamped, and then deleted, while another replica made the record again: the delete lost
    ///   to the re-creation, so no field's vector counts it where it met the re-creation, and the held creation, the
    ///   same value with a newer stamp, still beat the stored one by rank — held for ever, seed 15463041752482725537.)
    /// - one whose merge with the stored record is now valid and names no photo this replica lacks (but those
    ///   `unavailable`) is returned, to
    ///   apply (a photo removed since on any replica, a list edited since so two versions merge into a storable recipe).
    static func settledHeldRecords(in db: Database, photos: PhotoBlobs, unavailable: Set<String> = [], now: Int64, touched: Set<String>) throws
        -> [(peer: String, record: SyncRecord)] {
        // Point lookups by primary key for each (peer that holds anything) × (record the page touched): the held
        // table may be large, a page touches at most a page of records.
        var peers: [String] = []
        while let peer = try String.fetchOne(db.cachedStatement(sql: "SELECT peer FROM sync_held WHERE peer > ? ORDER BY peer LIMIT 1"),
                                             arguments: [peers.last ?? ""]) {
            peers.append(peer)
        }
        var held: [(peer: String, key: StatementArguments, heldAt: String, record: SyncRecord)] = []
        for peer in peers {
            for key in touched {
                guard let bar = key.firstIndex(of: "|") else { continue }
                let arguments: StatementArguments = [peer, String(key[..<bar]), String(key[key.index(after: bar)...])]
                guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT body, heldAt FROM sync_held WHERE peer = ? AND kind = ? AND id = ?"),
                                                 arguments: arguments),
                      let record = try? SyncLog.decode(row["body"] as String, seq: 0) else { continue }
                held.append((peer, arguments, row["heldAt"], record))
            }
        }
        // In kind order (a book before the recipes naming it), then in the order they were held (ties in key order, so a
        // replayed history applies them alike).
        held.sort {
            ($0.record.kind.applyOrder, $0.heldAt, $0.peer, $0.record.id) < ($1.record.kind.applyOrder, $1.heldAt, $1.peer, $1.record.id)
        }
        var ready: [(peer: String, record: SyncRecord)] = []
        for (peer, arguments, _, record) in held {
            let stored = try SyncLog.storedRecord(record.kind, record.id, in: db)?.states ?? [:]
            let merged = SyncMerge.merge(stored, record.states).merged
            if Self.isHad(record.states, merged: merged, by: stored) {
                try db.cachedStatement(sql: "DELETE FROM sync_held WHERE peer = ? AND kind = ? AND id = ?").execute(arguments: arguments)
                continue
            }
            guard (try? SyncValidation.check(record, now: now)) != nil,
                  SyncValidation.mergedProblem(record.kind, id: record.id, merged) == nil,
                  record.kind != .recipe || !SyncMerge.isLive(merged) || missingPhotos(merged, photos: photos, unavailable: unavailable).isEmpty
            else { continue }
            ready.append((peer, record))
        }
        return ready
    }

    static func heldSummaries(in db: Database) throws -> [HeldRecord] {
        try Row.fetchAll(db, sql: "SELECT * FROM sync_held ORDER BY heldAt, peer, kind, id LIMIT 100").map { row in
            let missing = (try? JSONDecoder().decode([String].self, from: Data((row["missing"] as String).utf8))) ?? []
            return HeldRecord(kind: SyncKind(rawValue: row["kind"]) ?? .recipe, id: row["id"], from: row["peer"], reason: row["reason"],
                              missingPhotos: missing, since: row["heldAt"])
        }
    }

    /// Unresolved conflicts: conflicted copies and open kept values.
    static func openConflictCount(in db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(conflicts), 0) FROM sync_records WHERE conflicts > 0") ?? 0
    }

    /// Keeps what lost a concurrent write of a recipe: a `conflictedCopy` recipe holding the losing
    /// values (one per losing write, with an id every replica derives alike). Returns the copies made.
    private mutating func makeCopies(_ losses: [SyncMerge.Loss], of id: String, merged: [String: SyncField], in db: Database) throws -> Int {
        var made = 0
        let byWrite = Dictionary(grouping: losses, by: \.clock.stamp)
        for stamp in byWrite.keys.sorted(by: StampOrder.precedes) {
            let group = byWrite[stamp]!
            let copyID = DerivedID.uuid("conflict|\(id)|\(stamp)").uuidString
            let existing = try SyncLog.storedRecord(.recipe, copyID, in: db)
            let lost = Set(group.map(\.field))
            var states = Self.copyStates(of: id, copyID: copyID, merged: merged, losses: group, stamp: stamp)
            if let existing {
                // Made before (here or elsewhere): it must also keep what lost this time.
                let (updated, _) = SyncMerge.merge(existing.states, states.filter { lost.contains($0.key) })
                guard updated != existing.states else { continue }
                states = updated
            }
            try SyncLog.writeTables(.recipe, copyID, states: states, photos: photos, in: db)
            try db.cachedStatement(sql: "DELETE FROM sync_pending WHERE kind = 'recipe' AND id = ?").execute(arguments: [copyID])
            try SyncLog.save(SyncRecord(kind: .recipe, id: copyID, seq: seq, states: states), source: state.replica, in: db)
            seq += 1
            if existing == nil { made += 1 }
        }
        return made
    }

    /// The version a conflicted copy gives a value that lost: `[conflict: 1]` and the losing write's own entry (the count
    /// its writer gave it, read from the stamp's replica); the rest of the lost field's vector (what its writer had seen of
    /// that field) differs between the fields one write set, and a copy found with fewer of them must still be covered.
    static func lostVersion(_ clock: SyncClock) -> [String: Int64] {
        var vv = [conflictReplica: Int64(1)]
        if let writer = StampOrder.parts(clock.stamp)?.replica, let count = clock.vv[String(writer)] { vv[String(writer)] = count }
        return vv
    }

    /// A conflicted copy's fields: the recipe as merged with the losing values in place. Every replica that
    /// sees the same losing write makes the same copy; the lost values carry a version above the copy's
    /// other fields, so copies made from different merges agree on them.
    static func copyStates(of id: String, copyID: String, merged: [String: SyncField], losses: [SyncMerge.Loss], stamp: String) -> [String: SyncField] {
        let base = SyncClock(vv: [:], stamp: stamp)
        var states: [String: SyncField] = [:]
        for (name, field) in merged where name != SyncRecord.deletedField && !SyncRecord.isRecordOnlyField(name) {
            if SyncRecord.isElementField(name) {
                guard field.value != .null else { continue }
                if name.hasPrefix(SyncRecord.photoPrefix), let hash = field.value.object?["sha256"]?.string {
                    let photoID = RecipeStore.photoID(recipeID: UUID(uuidString: copyID)!, sha256: hash).uuidString
                    states[SyncRecord.photoPrefix + photoID] = SyncField(value: field.value, clock: base)
                    continue
                }
            }
            states[name] = SyncField(value: field.value, clock: base)
        }
        // A lost value's version is its write's (the writer's count, and the conflict mark above the copy's other fields),
        // nothing the write had seen: every value one write lost carries the same version, whichever merge found it, so a
        // person who deleted the copy (or a withdrawal) has seen every value it will ever keep, found here or elsewhere.
        for loss in losses {
            states[loss.field] = SyncField(value: loss.value, clock: SyncClock(vv: lostVersion(loss.clock), stamp: stamp))
        }
        let name = states["name"]?.value.string ?? "Recipe"
        let copyName = String((name + " (conflicted copy)").prefix(RecipeDraft.Limits.nameLength))
        states["name"] = SyncField(value: .string(copyName), clock: states["name"]?.clock ?? base)
        states["origin"] = SyncField(value: .string(RecipeOrigin.conflictedCopy.rawValue), clock: base)
        // Its lines need ids of their own, the same on every replica.
        for (field, tag) in [("ingredients", "i"), ("instructions", "s")] {
            guard let list = states[field] else { continue }
            states[field]?.value = .array((list.value.array ?? []).enumerated().map { index, item in
                var object = item.object ?? [:]
                object["id"] = .string(DerivedID.uuid("\(copyID)|\(tag)|\(index)").uuidString)
                return .object(object)
            })
        }
        states[SyncRecord.conflictOfField] = SyncField(value: .object(["recipe": .string(id)]), clock: base)
        states[SyncRecord.deletedField] = SyncField(value: .bool(false), clock: base)
        return states
    }
}
