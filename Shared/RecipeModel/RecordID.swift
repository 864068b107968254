import Foundation

extension UUID {
    /// The 8 hex digits (lower case) that stand for this id where a person reads and types it: the last 8 of a
    /// time-ordered id (version 7: its first 8 are the time, the same for every id made within a minute), the first
    /// 8 of any other (random, or a sample's or a migrated recipe's fixed id, whose ends may be alike).
    public var shortText: String {
        let text = uuidString
        let isTimeOrdered = text.utf8[text.utf8.index(text.utf8.startIndex, offsetBy: 14)] == UInt8(ascii: "7")
        return (isTimeOrdered ? String(text.suffix(8)) : String(text.prefix(8))).lowercased()
    }

    /// A new id for a stored record: a version-7 UUID (RFC 9562) — 48 bits of Unix time in milliseconds,
    /// then 74 random bits.
    ///
    /// Ids made this way sort by creation time, so the rows and index entries of a new recipe, its lines and
    /// its sync record go to the end of each B-tree instead of a random page of it: a create then changes a
    /// handful of pages rather than one per line (storage-bench: about 97 pages written per create with random
    /// ids at 120k recipes). Any UUID is still accepted from clients; this only makes ours cheap to store.
    public static func timeOrdered(now: Date = Date()) -> UUID {
        var generator = SystemRandomNumberGenerator()
        let milliseconds = UInt64(max(0, (now.timeIntervalSince1970 * 1_000).rounded(.down))) & 0xFFFF_FFFF_FFFF
        let random: UInt64 = generator.next()
        return UUID(high: milliseconds << 16 | (random & 0x0FFF) | 0x7000, low: generator.next()) // version 7
    }

    /// A random version-4 UUID, drawn as two 64-bit values from the system generator (two `getrandom`
    /// calls; Foundation's `UUID()` opens, reads and closes `/dev/urandom` for each one, three system calls).
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let high: UInt64 = generator.next()
        return UUID(high: (high & ~0xF000) | 0x4000, low: generator.next()) // version 4
    }

    /// The UUID of these 128 bits, most significant first, with the RFC variant bits set in `low`
    /// (`high` carries the version in its bits 12–15).
    private init(high: UInt64, low: UInt64) {
        let low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        self = withUnsafeBytes(of: high.bigEndian) { h in
            withUnsafeBytes(of: low.bigEndian) { l in
                UUID(uuid: (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7]))
            }
        }
    }
}
