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
/// Writes it made between the roll back and that sync keep their reused numbers (their versions claim to have seen
/// the lost writes of those numbers): the merge settles each pair the same way everywhere, so the replicas agree, but
/// of a lost edit and a new one to the same field one is kept without a conflicted copy.
enum SyncSeen {
    /// How many of its latest writes a replica keeps the stamps of (a roll back further than this many writes before
    /// the first sync after it is told by a shortfall only).
    static let kept: Int64 = 100_000

    /// Keeps the stamps of `ticks`, this replica's writes; now and then lets the oldest go.
    static func keep(_ ticks: [(write: Int64, stamp: String)], in db: Database) throws {
        // A migration of an older version's file may write before the table is made.
        guard let last = ticks.last?.write, try db.tableExists("sync_own_writes") else { return }
        let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_own_writes (write, stamp) VALUES (?, ?)")
        for tick in ticks { try insert.execute(arguments: [tick.write, tick.stamp]) }
        if ticks.contains(where: { $0.write % 1_024 == 0 }) {
            try db.cachedStatement(sql: "DELETE FROM sync_own_writes WHERE write <= ?").execute(arguments: [last - kept])
        }
    }

    /// Raises `seen` to the newest write of each replica among `clocks`: a version's own stamp names the replica that
    /// wrote it, and its vector that write's number.
    static func note(_ clocks: [SyncClock], into seen: inout [String: SyncOps.SeenWrite]) {
        for clock in clocks {
            guard let writer = StampOrder.parts(clock.stamp)?.replica, let write = clock.vv[String(writer)],
                  write > seen[String(writer)]?.write ?? 0 else { continue }
            seen[String(writer)] = .init(write: write, stamp: clock.stamp)
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
        guard let own = try String.fetchOne(db.cachedStatement(sql: "SELECT stamp FROM sync_own_writes WHERE write = ?"), arguments: [seen.write]),
              own != seen.stamp else { return nil }
        // A version re-dated by a clock restart (this replica's, or another's of an ended one) keeps its write's number
        // under the stamp of a later write: a stamp this replica made is no roll back. (Read only on a mismatch.)
        if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sync_own_writes WHERE stamp = ?)", arguments: [seen.stamp]) == true { return nil }
        return "a peer holds this replica's write \(seen.write) stamped \(seen.stamp), and its own write \(seen.write) is stamped \(own) "
            + "(rolled back with its data folder and written since: its write numbers were used twice)"
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
