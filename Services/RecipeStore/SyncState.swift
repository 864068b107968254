import Crypto
import Foundation
import GRDB
import RecipeModel
import RecipeProtocol

/// This replica's identity and clocks, kept in `sync_state`: its id, the number
/// of its last write (version vectors count these) and its hybrid logical clock.
struct SyncState {
    var replica: String
    var write: Int64
    var wall: Int64
    var counter: Int64

    static func load(_ db: Database) throws -> SyncState {
        let values = try values(nil, in: db)
        guard let replica = values["replica"] else { throw noReplicaID }
        // Clamped on the way in: a clock stored by an older build from a hostile stamp must not trap the next write.
        return SyncState(replica: replica, write: Int64(values["write"] ?? "") ?? 0,
                         wall: min(max(Int64(values["wall"] ?? "") ?? 0, 0), maxWall),
                         counter: min(max(Int64(values["counter"] ?? "") ?? 0, 0), maxCounter),
                         offset: Int64(values["clockOffset"] ?? "") ?? 0, start: values["start"].flatMap { Int64($0) })
    }

    /// The `sync_state` values under `keys` (all, the histories too, when nil).
    static func values(_ keys: [String]?, in db: Database) throws -> [String: String] {
        var values: [String: String] = [:]
        let rows = try keys.map { keys in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT key, value FROM sync_state WHERE key IN (\(databaseQuestionMarks(count: keys.count)))"),
                             arguments: StatementArguments(keys))
        } ?? Row.fetchAll(db.cachedStatement(sql: "SELECT key, value FROM sync_state"))
        for row in rows { values[row["key"]] = row["value"] }
        return values
    }

    static var noReplicaID: ServiceError { ServiceError(.internalError, "the database has no replica id") }

    /// Milliseconds added to the wall clock (0; tests give replicas skewed clocks with it).
    var offset: Int64 = 0

    /// This start of the storage (a random number each open draws, `SyncState.begin`), kept with each own write
    /// (`sync_own_writes.start`); nil in a file no start of this version opened.
    var start: Int64?

    /// The writes `tick` made since this state was loaded, with their stamps: `save` keeps them (`sync_own_writes`).
    var ticks: [(write: Int64, stamp: String)] = []

    /// Now on this replica's wall clock (inside a pinned write: the time that write is stamped with).
    var now: Int64 { Self.pinned ?? (Self.nowMilliseconds() + offset) }

    private static let pinnedKey = "RecipeVault.pinnedWall"
    /// The wall time pinned for the write running on this thread.
    static var pinned: Int64? { Thread.current.threadDictionary[pinnedKey] as? Int64 }

    /// Runs `body` (a write transaction's work) with the time its stamps will carry pinned, so dates
    /// written by the store (`RecipeStore.now()`) and the stamps capture makes agree to the millisecond.
    static func pinningTime<T>(of db: Database, _ body: () throws -> T) throws -> T {
        guard pinned == nil else { return try body() }
        var state = try load(db)
        let now = nowMilliseconds() + state.offset
        // A clock left ahead by a machine's clock since set right restarts before this write is stamped.
        if SyncLog.clockRestartPoint(state) != nil, try SyncLog.restartClockIfAhead(in: db) != nil { state = try load(db) }
        let wall = now > state.wall ? now : (state.counter < maxCounter ? state.wall : min(state.wall + 1, maxWall))
        // A clock already pushed far ahead (stored by an older build) stamps on, but dates stay the real time.
        guard wall <= now + SyncValidation.maxClockAheadMilliseconds else { return try body() }
        Thread.current.threadDictionary[pinnedKey] = wall
        defer { Thread.current.threadDictionary.removeObject(forKey: pinnedKey) }
        return try body()
    }

    /// Starts a new incarnation: a new replica id for every later write, so a database that was
    /// restored from a backup or copied never reuses write numbers or feed positions its peers have
    /// already seen under the old id. Peers then read this replica's whole feed again (merging it
    /// changes nothing they have) and it reads theirs from where its copy had got to.
    mutating func newIncarnation(_ db: Database, reason: String) throws {
        let old = replica
        replica = try String.fetchOne(db, sql: "SELECT lower(hex(randomblob(6)))")!
        try db.execute(sql: "UPDATE sync_state SET value = ? WHERE key = 'replica'", arguments: [replica])
        // Kept to its last 256 KiB (some 1,500 lines): a peer can make a replica take new incarnations, and the start's
        // check against the write mark needs only the recent ones.
        try Self.appendHistory("incarnations", "\(old) → \(replica) at \(RecipeStore.now()): \(reason)", keeping: 256 << 10, in: db)
        _ = try SyncLog.addRetired([old], in: db)
    }

    /// Adds `line` to the history kept under `key` in `sync_state` (lines, oldest first), keeping at most the last
    /// `keeping` characters of what was there before when given.
    static func appendHistory(_ key: String, _ line: String, keeping: Int? = nil, in db: Database) throws {
        let history = (try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = ?", arguments: [key])).map { $0 + "\n" } ?? ""
        try db.execute(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES (?, ?)",
                       arguments: [key, String(keeping.map { history.suffix($0) } ?? Substring(history)) + line])
        if let kind = SyncNotices.Kind(rawValue: key) { SyncNotices.post(kind, line, in: db) }
    }

    /// The database file's identity (device and inode). A copy or a restored backup is a new file.
    static func fileIdentity(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_dev):\(info.st_ino)"
    }

    /// Takes a new incarnation when the database file is not the one this replica last ran on
    /// (restored from a backup, copied to start another storage), or is an older copy put back over it in place
    /// (`WriteMark`). Returns what happened, for the log.
    static func checkIncarnation(_ db: Database, path: String, fileTime: Int64?) throws -> String? {
        guard let identity = fileIdentity(path) else { return nil }
        let recorded = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'file'")
        try db.execute(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('file', ?)", arguments: [identity])
        let reason: String
        if let recorded, recorded != identity {
            reason = recorded == backupMark ? "started from a backup" : "the database file was copied or restored"
        } else if let older = try WriteMark.olderCopy(db, databasePath: path, fileTime: fileTime) {
            reason = older
        } else {
            return nil
        }
        var state = try load(db)
        let old = state.replica
        try state.newIncarnation(db, reason: reason)
        return "\(reason): this replica continues as \(state.replica) (was \(old)), so its peers resend what it lacks"
    }

    /// Draws this start's number (`start`): done once as the storage opens, and as a snapshot it joined by goes in.
    static func begin(in db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('start', ?)",
                       arguments: [String(Int64.random(in: 1...(Int64.max / 2)))])
    }

    /// What a backup's `file` entry says, so a storage started from it always takes a new incarnation.
    static let backupMark = "backup"

    func save(_ db: Database) throws {
        for (key, value) in [("write", write), ("wall", wall), ("counter", counter)] {
            try db.cachedStatement(sql: "UPDATE sync_state SET value = ? WHERE key = ?").execute(arguments: [String(value), key])
        }
        try SyncSeen.keep(ticks, start: start, in: db)
    }

    /// The largest wall-clock value a stamp can hold (16 digits of milliseconds).
    static let maxWall: Int64 = 9_999_999_999_999_999
    /// The largest counter a stamp can hold (9 digits); past it, the wall clock moves on a millisecond.
    static let maxCounter: Int64 = 999_999_999

    static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1_000).rounded(.down))
    }

    /// How far a stamp's counter steps at most (`tick`).
    static let counterStep: Int64 = 1 << 20

    /// A new local write: the next write number, and a stamp above every stamp this replica has made or seen.
    ///
    /// The counter steps at random (1 to `counterStep`; from 0 to `counterStep` - 1 when the wall clock moved on), so
    /// stamps are not made again: a replica rolled back with its whole data folder (a snapshot put back) starts from the
    /// clock state it had then, and while its stamps run ahead of its own clock (they follow a peer's whose clock is
    /// ahead) the same steps would give its new writes the very stamps of the lost writes of the same numbers — a peer
    /// holding one could not tell the roll back (`SyncSeen`), nor the merge two writes under one number, and a new
    /// edit would supersede a lost one without a conflicted copy (seed 16013143301308792775). Two such stamps are now
    /// alike by a chance of about one in a million. About a thousand writes fit in a millisecond before the wall clock
    /// part moves on by one.
    mutating func tick() -> (write: Int64, stamp: String) {
        let now = self.now
        let step = Int64.random(in: 1...Self.counterStep)
        if now > wall {
            wall = now
            counter = step - 1
        } else if counter <= Self.maxCounter - step {
            counter += step
        } else {
            // Stamps keep their fixed width, so text order stays time order.
            wall = min(wall + 1, Self.maxWall)
            counter = step - 1
        }
        write += 1
        let stamp = Self.stamp(wall: wall, counter: counter, replica: replica)
        ticks.append((write, stamp))
        return (write, stamp)
    }

    /// A stamp from another replica was seen: later local stamps sort above it. A stamp that is not
    /// well formed, or is further ahead of this replica's clock than `SyncValidation` allows, is not adopted.
    mutating func observe(_ stamp: String) {
        guard let remote = SyncStamp(stamp),
              remote.wall <= now + SyncValidation.maxClockAheadMilliseconds else { return }
        if (remote.wall, remote.counter) > (wall, counter) {
            wall = remote.wall
            counter = remote.counter
        }
    }

    /// `wall.counter.replica`, the numbers zero-padded to 16 and 9 digits (so text order is time order).
    /// Written by hand: `String(format:)` was a tenth of a create's sync bookkeeping.
    static func stamp(wall: Int64, counter: Int64, replica: String) -> String {
        guard wall >= 0, counter >= 0 else { return String(format: "%016lld.%09lld.%@", wall, counter, replica) }
        func padded(_ value: Int64, to width: Int) -> String {
            let digits = String(value)
            return digits.utf8.count >= width ? digits : String(repeating: "0", count: width - digits.utf8.count) + digits
        }
        return padded(wall, to: 16) + "." + padded(counter, to: 9) + "." + replica
    }
}
