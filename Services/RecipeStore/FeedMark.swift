import Foundation
import GRDB
import RecipeProtocol

/// What a replica's change feed holds at one position, as a reader keeps it beside its cursor: a digest of the record
/// there, and the replica's newest write of its own when the reader read up to there.
///
/// A position is given once (every change takes the next one; a record changed again moves on and leaves its old
/// position empty), so in one history the record at a position never becomes another. A replica rolled back with its
/// whole folder (a file-system or machine snapshot) gives the positions it lost again, to its next changes — also to
/// changes that are no writes of its own (records it applied from a peer), which `SyncSeen`'s writes cannot show — and
/// a peer that had read past them would skip those changes for good. So `sync.changes` answers the mark at `next`
/// (`nextMark`), the target keeps it with its cursor (`sync.apply` `cursorMark`, `sync.cursor` `mark`), and the next
/// read from there sends it back (`sinceMark`): another record at that position shows the roll back, and the source
/// takes a new incarnation before anything is read (its peers then read its whole feed again).
///
/// The roll back also puts back, at the positions they had, the records that a change the replica lost had moved on
/// past the reader's cursor: the reader passed those positions while they were empty and never read the records there
/// (seed 13226495568987508509: an entry edited, read up to a cursor between its old and new positions, the edit lost to
/// a roll back). No record at the cursor tells that; the write that moved the record does: it was made before the
/// read, so the mark names the replica's newest write then (its number, and a digest of its stamp), and a replica that
/// has not made that write now, or made it under another stamp, was rolled back past it.
enum FeedMark {
    /// Letters and digits, at most this many (32 for the record's digest, then `w`, the write number in hex, `s` and
    /// 12 hex digits of the stamp's digest: 62 at most).
    static let maxLength = 64

    /// The first 16 bytes of the SHA-256 of `body`, as 32 lowercase hex digits.
    static func of(body: String) -> String {
        String(PhotoBlobs.hash(Data(body.utf8)).prefix(32))
    }

    /// The mark a reader takes at `seq`: the digest of the record there (none when the position holds none), and this
    /// replica's newest write of its own (none before its first); nil when there is neither.
    static func at(_ seq: Int, in db: Database) throws -> String? {
        let record = try digest(at: seq, in: db)
        let newest = try Row.fetchOne(db.cachedStatement(sql: "SELECT write, stamp FROM sync_own_writes ORDER BY write DESC LIMIT 1"))
        let write = newest.map { row -> String in "w" + String(row["write"] as Int64, radix: 16) + "s" + stampDigest(row["stamp"]) }
        guard record != nil || write != nil else { return nil }
        return (record ?? "") + (write ?? "")
    }

    /// The digest of the record at `seq`; nil when the position holds none.
    static func digest(at seq: Int, in db: Database) throws -> String? {
        guard seq > 0 else { return nil }
        return try String.fetchOne(db.cachedStatement(sql: "SELECT body FROM sync_records WHERE seq = ?"), arguments: [seq]).map(of(body:))
    }

    static func stampDigest(_ stamp: String) -> String {
        String(PhotoBlobs.hash(Data(stamp.utf8)).prefix(12))
    }

    /// A mark's parts: the record's digest and the newest write's number and stamp digest, each nil when the mark holds
    /// none (a mark of an earlier release holds the digest only).
    static func parts(_ mark: String) -> (record: Substring?, write: (number: Int64, stamp: Substring)?) {
        guard let w = mark.firstIndex(of: "w") else { return (mark[...], nil) }
        let record = w == mark.startIndex ? nil : mark[..<w]
        let rest = mark[mark.index(after: w)...]
        guard let s = rest.firstIndex(of: "s"), let number = Int64(rest[..<s], radix: 16), number > 0 else { return (record, nil) }
        return (record, (number, rest[rest.index(after: s)...]))
    }

    /// Why `mark`, the mark a reader took at `since`, shows this replica was rolled back; nil when the record there is
    /// the one it took (or the position holds none now), and the newest write it names is this replica's (or is older
    /// than the stamps it keeps, `SyncSeen.kept`).
    /// With the why, the number of the write it lost when the mark names one (`SyncSeen.takeIncarnation`).
    static func rolledBack(since: Int, mark: String, in db: Database) throws -> (why: String, lost: Int64?)? {
        let (record, write) = parts(mark)
        if let record, let current = try digest(at: since, in: db), current != record {
            return ("a peer read this replica's feed up to position \(since), and the change there now is another "
                + "(rolled back with its data folder and changed since: its feed positions were given twice)", nil)
        }
        guard let write else { return nil }
        if let stamp = try SyncSeen.ownStamp(of: write.number, in: db) {
            guard stampDigest(stamp) != write.stamp else { return nil }
            return ("a peer read this replica's feed when its newest write was \(write.number), and its own write \(write.number) now is another "
                + "(rolled back with its data folder and written since: its write numbers were used twice)", write.number)
        }
        let newest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(write) FROM sync_own_writes")) ?? 0
        guard newest < write.number else { return nil } // older than the stamps kept
        return ("a peer read this replica's feed when its newest write was \(write.number), and it has made \(newest) "
            + "(rolled back with its data folder: a snapshot, or an older copy)", write.number)
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
