import Crypto
import Foundation
import GRDB
import RecipeProtocol

/// What a replica's change feed held when a reader read it, as the reader keeps it beside its cursor: the feed's newest
/// position then with a digest of the change given to it, and the replica's newest write of its own.
///
/// A position is given once (every change takes the next one; a record changed again moves on and leaves its old
/// position empty), so in one history the record at a position never becomes another. A replica rolled back with its
/// whole folder (a file-system or machine snapshot) gives the positions it lost again, to its next changes — also to
/// changes that are no writes of its own (records it applied from a peer), which `SyncSeen`'s writes cannot show — and
/// a peer that had read past them would skip those changes for good. So `sync.changes` answers the mark (`nextMark`),
/// the target keeps it with its cursor (`sync.apply` `cursorMark`, `sync.cursor` `mark`), and the next read from there
/// sends it back (`sinceMark`): a feed that no longer reaches the newest position the reader saw, or gave it another
/// change, shows the roll back, and the source takes a new incarnation before anything is read (its peers then read
/// its whole feed again).
///
/// The roll back also puts back, at the positions they had, the records that a change the replica lost had moved on
/// past the reader's cursor: the reader passed those positions while they were empty and never read the records there
/// (seed 13226495568987508509: an entry edited, read up to a cursor between its old and new positions, the edit lost to
/// a roll back). No record at the cursor tells that; the write that moved the record does: it was made before the
/// read, so the mark names the replica's newest write then (its number, and a digest of its stamp), and a replica that
/// has not made that write now, or made it under another stamp, was rolled back past it.
enum FeedMark {
    /// Letters and digits, at most this many (`h`, the newest position in hex, `g`, the 16 hex digits of its change's
    /// digest, then `w`, the newest write's number in hex, `s` and 12 hex digits of its stamp's digest: 64 at most).
    static let maxLength = 64
    /// How many of the newest feed positions keep what they were given (`sync_feed_given`): a reader whose mark names an
    /// older position is not checked by it (as a write older than `SyncSeen.kept`).
    static let kept = 100_000

    /// The first 16 bytes of the SHA-256 of `body`, as 32 lowercase hex digits (marks of an earlier release).
    static func of(body: String) -> String {
        String(PhotoBlobs.hash(Data(body.utf8)).prefix(32))
    }

    /// The first 8 bytes of the SHA-256 of a change record as written (`encoded`), as a number.
    static func givenDigest(_ encoded: Data) -> Int64 {
        var value: UInt64 = 0
        for byte in SHA256.hash(data: encoded).prefix(8) { value = value << 8 | UInt64(byte) }
        return Int64(bitPattern: value)
    }

    /// Keeps what position `seq` was given (the change record `encoded`), and lets the oldest go past `kept`. Every
    /// change record is saved through here (`SyncLog.save`); a file still being migrated has no table for it yet.
    static func given(_ seq: Int, _ encoded: Data, in db: Database) throws {
        guard try db.tableExists("sync_feed_given") else { return }
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_feed_given (seq, given) VALUES (?, ?)").execute(arguments: [seq, givenDigest(encoded)])
        if seq % 1_024 == 0 {
            try db.cachedStatement(sql: "DELETE FROM sync_feed_given WHERE seq <= ?").execute(arguments: [seq - kept])
        }
    }

    /// The mark a reader takes when its page ends at `seq`: the feed's newest position and a digest of its change (or,
    /// in a file that keeps none for it yet, the digest of the record at `seq`, as an earlier release marked), and this
    /// replica's newest write of its own (none before its first); nil when there is none of these.
    static func at(_ seq: Int, in db: Database) throws -> String? {
        let newest = try Row.fetchOne(db.cachedStatement(sql: "SELECT write, stamp FROM sync_own_writes ORDER BY write DESC LIMIT 1"))
        let write = newest.map { row -> String in "w" + String(row["write"] as Int64, radix: 16) + "s" + stampDigest(row["stamp"]) }
        var feed: String?
        let head = try SyncLog.nextSeq(in: db) - 1
        if let given = try givenDigest(at: head, in: db) {
            feed = "h" + String(head, radix: 16) + "g" + hex16(given)
        } else {
            feed = try digest(at: seq, in: db)
        }
        guard feed != nil || write != nil else { return nil }
        return (feed ?? "") + (write ?? "")
    }

    /// What position `seq` was given, when it is kept.
    static func givenDigest(at seq: Int, in db: Database) throws -> Int64? {
        guard try db.tableExists("sync_feed_given") else { return nil }
        return try Int64.fetchOne(db.cachedStatement(sql: "SELECT given FROM sync_feed_given WHERE seq = ?"), arguments: [seq])
    }

    static func hex16(_ value: Int64) -> String {
        let text = String(UInt64(bitPattern: value), radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    /// The digest of the record at `seq`; nil when the position holds none.
    static func digest(at seq: Int, in db: Database) throws -> String? {
        guard seq > 0 else { return nil }
        return try String.fetchOne(db.cachedStatement(sql: "SELECT body FROM sync_records WHERE seq = ?"), arguments: [seq]).map(of(body:))
    }

    static func stampDigest(_ stamp: String) -> String {
        String(PhotoBlobs.hash(Data(stamp.utf8)).prefix(12))
    }

    /// A mark's parts: the feed's newest position and its change's digest, the record's digest (a mark of an earlier
    /// release), and the newest write's number and stamp digest; each nil when the mark holds none.
    static func parts(_ mark: String) -> (head: (seq: Int, given: Int64)?, record: Substring?, write: (number: Int64, stamp: Substring)?) {
        var rest = mark[...]
        var head: (Int, Int64)?
        var record: Substring?
        if rest.first == "h", let g = rest.firstIndex(of: "g") {
            let end = rest.firstIndex(of: "w") ?? rest.endIndex
            if g < end, let seq = Int(rest[rest.index(after: rest.startIndex)..<g], radix: 16), seq > 0,
               let given = UInt64(rest[rest.index(after: g)..<end], radix: 16) {
                head = (seq, Int64(bitPattern: given))
            }
            rest = rest[end...]
        } else if let w = rest.firstIndex(of: "w") {
            record = w == rest.startIndex ? nil : rest[..<w]
            rest = rest[w...]
        } else {
            return (nil, rest.isEmpty ? nil : rest, nil)
        }
        guard rest.first == "w" else { return (head, record, nil) }
        rest = rest.dropFirst()
        guard let s = rest.firstIndex(of: "s"), let number = Int64(rest[..<s], radix: 16), number > 0 else { return (head, record, nil) }
        return (head, record, (number, rest[rest.index(after: s)...]))
    }

    /// Why `mark`, the mark a reader took with its cursor at `since`, shows this replica was rolled back; nil when the
    /// newest write it names is this replica's (or older than the stamps it keeps, `SyncSeen.kept`), and the feed still
    /// holds the change it names at its newest position then (or keeps no digest of that position), or, in a mark of an
    /// earlier release, the record it names at `since` (or none there now).
    /// With the why, the number of the write it lost when the mark names one (`SyncSeen.takeIncarnation`): told first,
    /// so a roll back past both a write and a position says from where the writes made since are stamped again.
    static func rolledBack(since: Int, mark: String, in db: Database) throws -> (why: String, lost: Int64?)? {
        let (head, record, write) = parts(mark)
        if let write {
            if let stamp = try SyncSeen.ownStamp(of: write.number, in: db) {
                if stampDigest(stamp) != write.stamp {
                    return ("a peer read this replica's feed when its newest write was \(write.number), and its own write \(write.number) now is another "
                        + "(rolled back with its data folder and written since: its write numbers were used twice)", write.number)
                }
            } else {
                let newest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(write) FROM sync_own_writes")) ?? 0
                if newest < write.number { // else older than the stamps kept
                    return ("a peer read this replica's feed when its newest write was \(write.number), and it has made \(newest) "
                        + "(rolled back with its data folder: a snapshot, or an older copy)", write.number)
                }
            }
        }
        if let head {
            let latest = try SyncLog.nextSeq(in: db) - 1
            if latest < head.seq {
                return ("a peer read this replica's feed when it reached position \(head.seq), and it reaches \(latest) now "
                    + "(rolled back with its data folder: a snapshot, or an older copy)", nil)
            }
            if let given = try givenDigest(at: head.seq, in: db), given != head.given {
                return ("a peer read this replica's feed when it reached position \(head.seq), and the change given to that position now is another "
                    + "(rolled back with its data folder and changed since: its feed positions were given twice)", nil)
            }
        }
        if let record, let current = try digest(at: since, in: db), current != record {
            return ("a peer read this replica's feed up to position \(since), and the change there now is another "
                + "(rolled back with its data folder and changed since: its feed positions were given twice)", nil)
        }
        return nil
    }

    /// Why `mark`, named `name` in a request, is not a digest a request may carry; nil when it is.
    static func problem(_ mark: String, name: String) -> String? {
        let isLetterOrDigit = { (byte: UInt8) in (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        guard !mark.isEmpty, mark.utf8.count <= maxLength, mark.utf8.allSatisfy(isLetterOrDigit) else {
            return "\(name) \"\(mark.prefix(80))\" is not a feed mark (1 to \(maxLength) letters and digits, as sync.changes answers it in nextMark)"
        }
        return nil
    }
}
