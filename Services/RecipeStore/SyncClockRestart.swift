import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

extension SyncLog {
    /// The earliest wall time a machine's clock can rightly show to this release (2026-01-01, before it was made): a
    /// machine showing an earlier one (started without a battery-backed clock, before the network set it) is wrong,
    /// not this replica's stamps ahead of it.
    static let earliestTrueWall: Int64 = 1_767_225_600_000

    /// The wall time this replica's clock restarts at (`restartClockIfAhead`): the machine's, when the clock is more
    /// than the tolerance ahead of it and the machine's clock can be right; nil when no restart is due.
    ///
    /// Not held back by changes taken from other replicas that are ahead of the machine's clock too: two replicas whose
    /// machines' clocks were ahead alike (one wrong time zone) and were set right would each take the other's changes
    /// for a sign that its own machine's clock is behind, and neither restart until real time caught up. A machine
    /// whose clock did go behind restarts once, re-dating what was stamped past it (the same writes, whoever made
    /// them), and holds other replicas' newer changes until it is set right, as it did before.
    static func clockRestartPoint(_ state: SyncState) -> Int64? {
        let machine = SyncState.nowMilliseconds() + state.offset
        return state.wall > machine + SyncValidation.maxClockAheadMilliseconds && machine >= earliestTrueWall ? machine : nil
    }

    /// Restarts this replica's clock when it has run further ahead of the machine's clock than any replica accepts.
    ///
    /// The hybrid clock only moves forward: a machine whose clock was ahead for a while (a wrong time at boot, a time
    /// zone taken for UTC) and was then set right left the clock at that time, so every later write was stamped ahead
    /// too — and every other replica holds such records back ("stamp … is N minutes ahead of this replica's clock")
    /// until real time catches up, which may be never in practice. So when the clock is more than
    /// `SyncValidation.maxClockAheadMilliseconds` ahead of the machine's, it restarts at the machine's time, and every
    /// field stamped that far ahead is re-dated: the same write, the same value, a stamp of now and one more count in
    /// the version's `SyncClock.restartEntry`. It supersedes the version it re-dates everywhere, and other replicas
    /// take it (dropping what they held of it); it is not a write of its own, so a delete or an edit made elsewhere
    /// having seen the original still supersedes it (re-dated as a new write, it would have brought a recipe deleted
    /// elsewhere back, or beaten a later edit by its newer stamp).
    ///
    /// Unless the machine's clock is the one that is plainly wrong: earlier than this release could be made. The clock
    /// then stamps on as before.
    ///
    /// Runs at the start of every write transaction (and at open); the check is one read of `sync_state`. Returns a
    /// note for the log when it restarted the clock.
    @discardableResult
    static func restartClockIfAhead(in db: Database) throws -> String? {
        var state = try SyncState.load(db)
        guard let now = clockRestartPoint(state) else { return nil }
        let limit = now + SyncValidation.maxClockAheadMilliseconds
        func isAhead(_ clock: SyncClock) -> Bool { (SyncStamp(clock.stamp)?.wall ?? 0) > limit }
        let ahead = state.wall - now
        state.wall = now
        state.counter = 0
        let restamped = try restamp(state: &state, matching: isAhead, in: db) { clock, tick in
            var vv = clock.vv
            vv[SyncClock.restartEntry, default: 0] += 1
            return SyncClock(vv: vv, stamp: tick.stamp)
        }
        try state.save(db)
        let minutes = ahead / 60_000
        let note = "this replica's clock had run \(minutes) minute\(minutes == 1 ? "" : "s") ahead of this machine's (the machine's clock was "
            + "ahead and has been set right): it restarts at the machine's time, and \(restamped) record\(restamped == 1 ? "" : "s") stamped "
            + "ahead meanwhile \(restamped == 1 ? "was" : "were") stamped again, so other replicas take \(restamped == 1 ? "it" : "them") instead of holding \(restamped == 1 ? "it" : "them") back"
        try SyncState.appendHistory("clockRestarts", "\(RecipeStore.now()): \(note)", keeping: 4_000, in: db)
        return note
    }
}

extension SyncLog {
    /// Stamps again every field version `matches` picks: `restamped` gives each its new version under one new write of
    /// this replica's (taken when the first is found). Every record holding one is read once (`containing`: only
    /// those whose text holds it) and written at a new feed position; a recipe's date and the order of its photos and
    /// keywords follow the new stamps. Returns the records written. (A record that does not read is left as it is:
    /// `storage.check` names it; it must not stop every write.)
    static func restamp(state: inout SyncState, containing text: String? = nil, matching matches: (SyncClock) -> Bool, in db: Database,
                        as restamped: (SyncClock, (write: Int64, stamp: String)) -> SyncClock) throws -> Int {
        var tick: (write: Int64, stamp: String)?
        var seq = try nextSeq(in: db)
        var written = 0
        let rows = try text.map { try Row.fetchAll(db, sql: "SELECT seq, body FROM sync_records WHERE instr(body, ?) > 0 ORDER BY seq", arguments: [$0]) }
            ?? Row.fetchAll(db, sql: "SELECT seq, body FROM sync_records ORDER BY seq")
        for row in rows {
            guard let record = try? decode(row["body"], seq: row["seq"]), record.clocks.contains(where: matches) else { continue }
            if tick == nil { tick = state.tick() }
            var states = record.states
            for (name, field) in states where matches(field.clock) {
                states[name] = SyncField(value: field.value, clock: restamped(field.clock, tick!))
            }
            try save(SyncRecord(kind: record.kind, id: record.id, seq: seq, states: states), source: state.replica, in: db)
            seq += 1
            written += 1
            if record.kind == .recipe {
                try dateRecipe(record.id, by: states, in: db)
                try showOrder(of: record.id, was: record.states, now: states, in: db)
            }
        }
        return written
    }

    /// Replica ids that have ended, oldest first: this replica's own before each new incarnation, and those other
    /// replicas said had ended (`sync.retire`). What they stamped too far ahead is re-dated here, not held
    /// (`SyncApplier.settlingAhead`).
    static func retiredReplicas(in db: Database) throws -> [String] {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM sync_state WHERE key = 'retired'"))?
            .split(separator: "\n").map(String.init) ?? []
    }

    /// Adds `ids` to the replicas that have ended (keeping the newest `SyncOps.Retire.maxIDs`); returns those new here.
    /// This replica's own id is never among them.
    static func addRetired(_ ids: [String], in db: Database) throws -> [String] {
        var known = try retiredReplicas(in: db)
        let own = try SyncState.load(db).replica
        var seen = Set(known)
        let added = ids.filter { $0 != own && seen.insert($0).inserted }
        guard !added.isEmpty else { return [] }
        known += added
        try db.execute(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('retired', ?)",
                       arguments: [known.suffix(SyncOps.Retire.maxIDs).joined(separator: "\n")])
        return added
    }
}
