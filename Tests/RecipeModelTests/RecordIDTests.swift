import Foundation
@testable import RecipeModel
import TestThreads
import Testing

@Suite("Record ids: version-7 UUIDs that sort by creation time", .onOwnThread)
struct RecordIDTests {
    @Test("version 7, the RFC variant, the creation millisecond in the first 48 bits, and random bits that differ")
    func layout() {
        let instant = Date(timeIntervalSince1970: 1_795_000_000.123)
        var seen = Set<UUID>()
        for _ in 0..<2_000 {
            let id = UUID.timeOrdered(now: instant)
            let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 7)
            #expect(bytes[8] >> 6 == 0b10)
            let milliseconds = bytes[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(milliseconds == 1_795_000_000_123)
            seen.insert(id)
        }
        #expect(seen.count == 2_000) // 74 random bits: no repeats within one millisecond
    }

    @Test("ids made later sort after earlier ones, as text too (what the database orders by)")
    func ordering() {
        // Instants a whole number of milliseconds apart (0.4 ms into each, clear of rounding); within one
        // millisecond the order is the random bits'.
        var milliseconds: Int64 = 1_700_000_000_000
        func instant() -> Date { Date(timeIntervalSince1970: (Double(milliseconds) + 0.4) / 1_000) }
        var previous = UUID.timeOrdered(now: instant()).uuidString
        for step in 0..<1_000 {
            milliseconds += Int64(step % 7 + 1)
            let next = UUID.timeOrdered(now: instant()).uuidString
            #expect(previous < next, "\(previous) then \(next)")
            previous = next
        }
    }

    @Test("random ids: version 4, the RFC variant, no repeats")
    func random() {
        let ids = (0..<2_000).map { _ in UUID.random() }
        for id in ids {
            let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4 && bytes[8] >> 6 == 0b10)
        }
        #expect(Set(ids).count == ids.count)
    }

    @Test("read back by UUID(uuidString:) unchanged")
    func roundTrip() {
        let id = UUID.timeOrdered()
        #expect(UUID(uuidString: id.uuidString) == id)
    }

    @Test("short ids: ids made in the same minute show apart; other ids show their start")
    func shortText() {
        let now = Date()
        let sameMinute = (0..<1_000).map { _ in UUID.timeOrdered(now: now) }
        #expect(Set(sameMinute.map { $0.uuidString.prefix(8) }).count == 1, "their first 8 hex digits are the time")
        #expect(Set(sameMinute.map(\.shortText)).count == sameMinute.count)
        for id in sameMinute { #expect(id.shortText == id.uuidString.suffix(8).lowercased()) }
        // A fixed id (the starters': "5A3C0001-0000-4000-8000-000000000000") and a random one show their start.
        let starters = (1...8).map { UUID(uuidString: String(format: "5A3C%04X-0000-4000-8000-000000000000", $0))! }
        #expect(starters.map(\.shortText) == (1...8).map { String(format: "5a3c%04x", $0) })
        let random = UUID.random()
        #expect(random.shortText == random.uuidString.prefix(8).lowercased())
    }
}
