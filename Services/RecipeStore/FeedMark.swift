import Foundation
import GRDB
import RecipeProtocol

/// What a replica's change feed holds at one position, as a reader keeps it beside its cursor: a digest of the record
/// there.
///
/// A position is given once (every change takes the next one; a record changed again moves on and leaves its old
/// position empty), so in one history the record at a position never becomes another. A replica rolled back with its
/// whole folder (a file-system or machine snapshot) gives the positions it lost again, to its next changes — also to
/// changes that are no writes of its own (records it applied from a peer), which `SyncSeen`'s writes cannot show — and
/// a peer that had read past them would skip those changes for good. So `sync.changes` answers the digest at `next`
/// (`nextMark`), the target keeps it with its cursor (`sync.apply` `cursorMark`, `sync.cursor` `mark`), and the next
/// read from there sends it back (`sinceMark`): another record at that position shows the roll back, and the source
/// takes a new incarnation before anything is read (its peers then read its whole feed again).
enum FeedMark {
    /// Letters and digits, at most this many.
    static let maxLength = 64

    /// The first 16 bytes of the SHA-256 of `body`, as 32 lowercase hex digits.
    static func of(body: String) -> String {
        String(PhotoBlobs.hash(Data(body.utf8)).prefix(32))
    }

    /// The digest of the record at `seq`; nil when the position holds none.
    static func at(_ seq: Int, in db: Database) throws -> String? {
        guard seq > 0 else { return nil }
        return try String.fetchOne(db.cachedStatement(sql: "SELECT body FROM sync_records WHERE seq = ?"), arguments: [seq]).map(of(body:))
    }

    /// Why `mark`, the digest a reader took at `since`, shows this replica was rolled back; nil when the record there is
    /// the one it took, or the position holds none now.
    static func rolledBack(since: Int, mark: String, in db: Database) throws -> String? {
        guard let current = try at(since, in: db), current != mark else { return nil }
        return "a peer read this replica's feed up to position \(since), and the change there now is another "
            + "(rolled back with its data folder and changed since: its feed positions were given twice)"
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
