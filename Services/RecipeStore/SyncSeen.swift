import GRDB
import RecipeProtocol

/// What tells a replica rolled back with its whole data folder — a file-system or machine snapshot, or a folder put
/// back in a way its start could not tell — that it was, before its write numbers are used twice for long.
///
/// Its peers leave the records they took from it out of every page they send it (no echo), so after a roll back the
/// writes it lost never come back to it, and its next writes reuse their numbers: version vectors then take a peer's
/// lost write and the new one of that number for the same write, and the replicas never agree. So:
/// - every replica keeps the stamps of its own latest writes by number (`sync_own_writes`, the last `kept`);
/// - every replica keeps, for each other replica, the newest write of it among the records it took — its number and
///   stamp, from the versions that replica wrote (`sync_seen`);
/// - `sync.changes` answers the reader's newest write it holds (`seen`), and the worker passes it on with the page to
///   `sync.apply`, where a replica that has made fewer writes than that, or whose own write of that number has another
///   stamp, takes a new incarnation before the page applies. Its peers then send it everything under its new id, and
///   what it lost comes back.
/// Writes it made between the roll back and that sync reused the lost writes' numbers, so their versions claim to have
/// seen the lost writes: of a lost edit and a new one to the same field, the new one would win without a conflicted
/// copy. So the new incarnation also stamps them again (`takeIncarnation`): each version it wrote above the roll back
/// point becomes a write of the new id that has seen its old id's writes up to that point only, and meets the lost
/// writes, when they come back, as the concurrent edit it was.
enum SyncSeen {
    /// How many of its latest writes a replica keeps the stamps of (a roll back further than this many writes before
    /// the first sync after it is told by a shortfall only).
    static let kept: Int64 = 100_000

    /// Keeps the stamps of `ticks`, this replica's writes; now and then lets the oldest go.
    static func keep(_ ticks: [(write: Int64, stamp: String)], start: Int64?, in db: Database) throws {
        // A migration of an older version's file may write before the table (or its column) is made.
        guard let last = ticks.last?.write, try db.tableExists("sync_own_writes") else { return }
        guard try db.columns(in: "sync_own_writes").contains(where: { $0.name == "start" }) else {
            let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_own_writes (write, stamp) VALUES (?, ?)")
            for tick in ticks { try insert.execute(arguments: [tick.write, tick.stamp]) }
            return
        }
        let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_own_writes (write, stamp, start) VALUES (?, ?, ?)")
        for tick in ticks { try insert.execute(arguments: [tick.write, tick.stamp, start]) }
        if ticks.contains(where: { $0.write % 1_024 == 0 }) {
            try db.cachedStatement(sql: "DELETE FROM sync_own_writes WHERE write <= ?").execute(arguments: [last - kept])
        }
    }

    /// The stamp of this replica's own write `write`; nil when it has not made it, or no longer keeps its stamp.
    static func ownStamp(of write: Int64, in db: Database) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT stamp FROM sync_own_writes WHERE write = ?"), arguments: [write])
    }

    /// Raises `seen` to the newest write of each replica among `clocks` (`SyncClock.write`).
    static func note(_ clocks: [SyncClock], into seen: inout [String: SyncOps.SeenWrite]) {
        for clock in clocks {
            guard let write = clock.write, write.number > seen[write.replica]?.write ?? 0 else { continue }
            seen[write.replica] = .init(write: write.number, stamp: clock.stamp)
        }
    }

    /// Stores `seen` where it is newer than what is stored.
    static func save(_ seen: [String: SyncOps.SeenWrite], in db: Database) throws {
        guard !seen.isEmpty else { return }
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO sync_seen (replica, write, stamp) VALUES (?, ?, ?)
            ON CONFLICT (replica) DO UPDATE SET write = excluded.write, stamp = excluded.stamp WHERE excluded.write > write
            """)
        for (replica, write) in seen { try upsert.execute(arguments: [replica, write.write, write.stamp]) }
    }

    /// What a reading replica says it has seen, for telling the echoes that hold what it lost (`unseen`).
    struct Reader {
        /// This replica, and the reading one (`exclude`).
        let replica: String
        let reader: String
        /// The reader's newest write of each replica it named (this replica's from `seen` when it named none).
        let seen: [String: SyncOps.SeenWrite]
        /// Whether it named every replica's (`seenWrites`), or this one's only (a worker of an older release).
        let named: Bool
        /// The replicas of which this one holds a later write than the reader has seen: only an echo whose text names
        /// one of them can hold a write the reader has not (a version here of a replica's write was taken, and noted in
        /// `sync_seen`, or is this replica's own).
        let ahead: [String]

        init(_ reader: String, seen own: SyncOps.SeenWrite?, seenWrites: [SyncOps.SeenWrite]?, in db: Database) throws {
            let state = try SyncState.values(["replica", "write"], in: db)
            guard let replica = state["replica"] else { throw SyncState.noReplicaID }
            self.replica = replica
            self.reader = reader
            var seen: [String: SyncOps.SeenWrite] = [:]
            for write in seenWrites ?? [] { if let writer = StampOrder.parts(write.stamp)?.replica { seen[String(writer)] = write } }
            if seen[replica] == nil { seen[replica] = own }
            self.seen = seen
            named = seenWrites != nil
            var ahead = Int64(state["write"] ?? "") ?? 0 > seen[replica]?.write ?? 0 ? [replica] : []
            if named {
                for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT replica, write FROM sync_seen WHERE replica NOT IN (?, ?)"),
                                            arguments: [reader, replica]) {
                    let writer: String = row["replica"]
                    if row["write"] > seen[writer]?.write ?? 0 { ahead.append(writer) }
                }
            }
            self.ahead = ahead
        }

        /// An echo — a record whose last change came from the reader, which its pages leave out — that holds a write
        /// the reader has not seen: a version counting a later write of this replica's than the reader's newest of it;
        /// or one whose writer (this replica, or with `named` any other but the reader) the reader has seen no write
        /// of, or an earlier one, or one stamped earlier; or a conflicted copy of a recipe whose record here holds one;
        /// or a version of the samples (`SyncClock.genesis`, `sample`: the query found its stamp in the text), which
        /// no write made and nothing can say was seen. Nil for any other (and for one that does not read).
        ///
        /// A reader rolled back (a snapshot put back) that lost no write of its own a peer holds is not told, and lost
        /// what it had merged since — of this replica's writes or a third's — and passed on (and the samples it had
        /// loaded since): this replica holds that as the reader's echo, and left out it would never reach the reader
        /// again (it reaches it from the third replica only if the two ever sync). A conflicted copy that merge made goes
        /// with it: merging the record again, the reader finds no loss and makes none. Sent, merging either where it is
        /// held changes nothing. (Only while this replica holds a later write of someone's than the reader has seen can
        /// an echo hold one: `syncChanges` asks then, and for an echo holding a sample's stamp.)
        func unseenEcho(_ body: String, seq: Int, sample: Bool, in db: Database) throws -> SyncRecord? {
            // Only a record whose text names a replica can hold a version of its; a copy's versions are the merge's.
            let copy = body.contains(SyncRecord.conflictOfField)
            guard copy || sample || ahead.contains(where: { body.contains($0) }), let record = try? SyncLog.decode(body, seq: seq)
            else { return nil }
            if unseen(record.clocks) { return record }
            guard copy, record.kind == .recipe, let original = record.fields[SyncRecord.conflictOfField]?.object?["recipe"]?.string,
                  let merged = try SyncLog.storedRecord(.recipe, original, in: db) else { return nil }
            return unseen(merged.clocks) ? record : nil
        }

        func unseen(_ clocks: [SyncClock]) -> Bool {
            clocks.contains { clock in
                if clock.stamp == SyncClock.genesis.stamp { return true }
                if clock.vv[replica] ?? 0 > seen[replica]?.write ?? 0 { return true }
                guard let writer = StampOrder.parts(clock.stamp).map({ String($0.replica) }), writer != reader,
                      writer == replica || named else { return false }
                guard let known = seen[writer] else { return true }
                return clock.vv[writer] ?? 0 > known.write || StampOrder.precedes(known.stamp, clock.stamp)
            }
        }
    }

    /// The newest write of every replica among the records taken (at most `SyncOps.Changes.Request.maxSeenWrites`, the
    /// newest first; one a request could not name left out, as `problem` would refuse it).
    static func all(in db: Database) throws -> [SyncOps.SeenWrite] {
        var replicas = Set<Substring>()
        return try Row.fetchAll(db.cachedStatement(sql: "SELECT write, stamp FROM sync_seen ORDER BY write DESC LIMIT ?"),
                                arguments: [SyncOps.Changes.Request.maxSeenWrites])
            .map { SyncOps.SeenWrite(write: $0["write"], stamp: $0["stamp"]) }
            .filter { write in
                guard problem(write) == nil, let replica = StampOrder.parts(write.stamp)?.replica else { return false }
                return replicas.insert(replica).inserted
            }
    }

    /// Why `writes`, a reader's newest write of every replica, cannot be named in a request; nil when they can.
    static func problem(_ writes: [SyncOps.SeenWrite]) -> String? {
        let most = SyncOps.Changes.Request.maxSeenWrites
        guard writes.count <= most else { return "seenWrites holds \(writes.count) writes; it may hold at most \(most), one per replica" }
        var replicas = Set<Substring>()
        for (index, write) in writes.enumerated() {
            if let problem = problem(write) { return problem.replacingOccurrences(of: "seen.", with: "seenWrites[\(index)].") }
            guard let replica = StampOrder.parts(write.stamp)?.replica, replicas.insert(replica).inserted else {
                return "seenWrites[\(index)] names replica \(StampOrder.parts(write.stamp)?.replica.prefix(80) ?? "?") again; it holds one write per replica"
            }
        }
        return nil
    }

    /// The newest write of `replica` among the records taken; nil when none was.
    static func newest(of replica: String, in db: Database) throws -> SyncOps.SeenWrite? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT write, stamp FROM sync_seen WHERE replica = ?"), arguments: [replica])
        else { return nil }
        return .init(write: row["write"], stamp: row["stamp"])
    }

    /// Why `seen`, a peer's newest write of this replica, shows it was rolled back; nil when it agrees (or names
    /// another replica, or a write whose stamp is no longer kept).
    static func rolledBack(_ seen: SyncOps.SeenWrite, state: SyncState, in db: Database) throws -> String? {
        guard StampOrder.parts(seen.stamp)?.replica == Substring(state.replica) else { return nil }
        if seen.write > state.write {
            return "a peer holds this replica's write \(seen.write), and it has made \(state.write) (rolled back with its data folder: a snapshot, or an older copy)"
        }
        guard let own = try ownStamp(of: seen.write, in: db),
              own != seen.stamp else { return nil }
        // A version re-dated by a clock restart (this replica's, or another's of an ended one) keeps its write's number
        // under the stamp of a later write: a stamp this replica made is no roll back. (Read only on a mismatch.)
        if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sync_own_writes WHERE stamp = ?)", arguments: [seen.stamp]) == true { return nil }
        return "a peer holds this replica's write \(seen.write) stamped \(seen.stamp), and its own write \(seen.write) is stamped \(own) "
            + "(rolled back with its data folder and written since: its write numbers were used twice)"
    }

    /// Takes a new incarnation for a roll back told by a peer (`reason`), and stamps again under the new id what this
    /// replica wrote since the roll back point. `lost` is a write of this replica's that a peer holds, or read it had
    /// made, and it lost (a peer's newest write of it, a version in its page naming more writes than it made, or the
    /// newest write a feed mark names).
    ///
    /// The roll back point is the newest own write it kept (`rollBackPoint`: below the lost one's number and stamp, and
    /// below the first write of the start that followed the roll back; without a stamp, by its number and the starts).
    /// Each field version this replica wrote above that point (its stamp names the old id, its vector counts the old
    /// id's writes past the point) becomes one new write: the same value, the old id's entry cut back to the point, the
    /// new id's write and stamp. It supersedes nothing it did not
    /// supersede before (its vector still covers every other replica's writes it had seen), and a lost write of the
    /// same field, when its peer sends it back, is concurrent with it — kept as a conflicted copy, or merged, as any
    /// concurrent edit. Records a peer took from this replica before it was told keep their reused numbers there
    /// (docs/SYNC.md). Returns the records stamped again.
    @discardableResult
    static func takeIncarnation(_ state: inout SyncState, reason: String, lost: LostWrite?, in db: Database) throws -> Int {
        let old = state.replica
        // Between the roll back and now its pulls left out, as its own, the records its peers took from it under the old
        // id — those it lost among them — and moved past them: it reads every peer's whole feed again (merging what it
        // has changes nothing).
        try db.execute(sql: "UPDATE sync_cursors SET seq = 0, mark = NULL")
        let point = try lost.flatMap { try rollBackPoint(lost: $0, replica: old, in: db) }
        guard let point, point < state.write else {
            try state.newIncarnation(db, reason: reason)
            return 0
        }
        try state.newIncarnation(db, reason: reason + "; its writes since its write \(point) are stamped again under its new id")
        let replica = state.replica
        // Only a record whose text names the old id can hold a version it wrote.
        let restamped = try SyncLog.restamp(state: &state, containing: old, matching: { clock in
            StampOrder.parts(clock.stamp)?.replica == Substring(old) && (clock.vv[old] ?? 0) > point
        }, in: db) { clock, tick in
            var vv = clock.vv
            vv[old] = point > 0 ? point : nil
            vv[replica] = tick.write
            return SyncClock(vv: vv, stamp: tick.stamp)
        }
        try state.save(db)
        state.ticks = []
        return restamped
    }

    /// A write of this replica's that a peer holds, or read it had made, and it lost: its number, and its stamp when
    /// the peer named it (a feed mark names only a digest of it, `FeedMark`).
    struct LostWrite {
        var write: Int64
        var stamp: String?

        init(write: Int64, stamp: String?) {
            self.write = write
            self.stamp = stamp
        }

        init(_ seen: SyncOps.SeenWrite) {
            self.init(write: seen.write, stamp: seen.stamp)
        }
    }

    /// The newest write of `replica` (this replica's id before its new incarnation) that it made before `lost`, a write
    /// of it a peer holds and it lost; nil when its own writes' stamps are not kept (a file of an older version), or
    /// the lost write's stamp is another replica's.
    ///
    /// Its writes since the roll back took the numbers of the writes it lost, from the roll back point on, so the point
    /// is below `lost`'s number; and below its stamp, while the replica's stamps followed its own clock. They need not:
    /// stamps that ran ahead of it after a peer's (which the roll back took back) put the lost writes' stamps above
    /// those it makes since, and by stamp and number alone the point came out above writes made since the roll back,
    /// which were then not stamped again (seed 10309206708669977794: a photo added since, under the number of a delete
    /// lost, which the delete's version then counted as seen). A roll back is a start, so the writes since it began a
    /// start of their own (`sync_own_writes.start`): the point is below the first write of the latest start that began
    /// at or below the first bound plus one (its first write then follows the point; every later start's too, and an
    /// earlier start's does not, so no write kept is stamped again). A start whose first write may have been let go
    /// (the one holding the oldest kept) is not taken for one.
    static func rollBackPoint(lost: LostWrite, replica: String, in db: Database) throws -> Int64? {
        guard let oldest = try Int64.fetchOne(db, sql: "SELECT MIN(write) FROM sync_own_writes") else { return nil }
        var bound = lost.write - 1
        if let stamp = lost.stamp {
            guard StampOrder.parts(stamp)?.replica == Substring(replica) else { return nil }
            let before = try Int64.fetchOne(db, sql: "SELECT MAX(write) FROM sync_own_writes WHERE stamp < ?", arguments: [stamp])
            bound = min(before ?? oldest - 1, bound)
        }
        let startBegan = try Int64.fetchOne(db, sql: """
            SELECT MAX(first) FROM (SELECT MIN(write) AS first FROM sync_own_writes WHERE start IS NOT NULL GROUP BY start)
            WHERE first > ? AND first <= ?
            """, arguments: [oldest, bound + 1])
        return startBegan.map { $0 - 1 } ?? bound
    }

    /// Why `seen` is not a write a request may name; nil when it is.
    static func problem(_ seen: SyncOps.SeenWrite) -> String? {
        guard seen.write >= 1 else { return "seen.write is \(seen.write); it must be 1 or more" }
        guard SyncStamp(seen.stamp) != nil else {
            return "seen.stamp \"\(seen.stamp.prefix(80))\" is not a stamp (wall.counter.replica: up to \(SyncStamp.wallDigits) and \(SyncStamp.counterDigits) digits and a replica id)"
        }
        return nil
    }
}
