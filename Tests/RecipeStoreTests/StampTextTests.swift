import Foundation
import RecipeProtocol
@testable import RecipeStore
import TestRandom
import TestThreads
import Testing

/// Stamps are written and read on every write and every merge, so both have a fast path: these hold them to
/// the plain versions they replaced (`String(format:)` to write, `split` and `Int64(_:)` to read), on random
/// stamps and on text no replica makes but a peer may send.
@Suite("Stamp text: written and read as before", .onOwnThread)
struct StampTextTests {
    /// The reading `StampOrder.parts` had before its fast path.
    static func reference(_ stamp: String) -> (wall: Int64, counter: Int64, replica: Substring)? {
        let pieces = stamp.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3, let wall = Int64(pieces[0]), let counter = Int64(pieces[1]) else { return nil }
        return (wall, counter, pieces[2])
    }

    static func expectSameParts(_ stamp: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let fast = StampOrder.parts(stamp)
        let slow = reference(stamp)
        #expect(fast?.wall == slow?.wall && fast?.counter == slow?.counter && fast?.replica == slow?.replica,
                "\(stamp.debugDescription): \(String(describing: fast)) against \(String(describing: slow))", sourceLocation: sourceLocation)
    }

    @Test("a stamp is written as String(format: \"%016lld.%09lld.%@\") writes it")
    func writesAsFormatDid() {
        var random = SplitMix(seed: 0x57A_3B)
        let replica = UUID().uuidString.lowercased()
        var walls: [Int64] = [0, 1, 9, 10, SyncState.maxWall, SyncState.maxWall + 1, .max, 1_764_000_000_000]
        var counters: [Int64] = [0, 1, 999_999_999, 1_000_000_000, .max]
        for _ in 0..<500 {
            walls.append(Int64(bitPattern: random.next()) & .max >> (random.next() % 63))
            counters.append(Int64(bitPattern: random.next()) & .max >> (random.next() % 63))
        }
        for (wall, counter) in zip(walls, counters + counters.reversed()) {
            #expect(SyncState.stamp(wall: wall, counter: counter, replica: replica)
                    == String(format: "%016lld.%09lld.%@", wall, counter, replica))
        }
        // Never made (the clock is clamped), but still written the same way.
        #expect(SyncState.stamp(wall: -5, counter: 3, replica: "r") == String(format: "%016lld.%09lld.%@", Int64(-5), Int64(3), "r"))
    }

    @Test("stamps as replicas make them read back to their parts, as before")
    func readsMadeStamps() {
        var random = SplitMix(seed: 0xD07)
        for _ in 0..<2_000 {
            let stamp = SyncState.stamp(wall: Int64(random.next() % 10_000_000_000_000_000), counter: Int64(random.next() % 1_000_000_000),
                                        replica: UUID().uuidString.lowercased())
            Self.expectSameParts(stamp)
            #expect(StampOrder.parts(stamp) != nil)
        }
    }

    @Test("text no replica makes reads as the plain split read it: signs, overflow, empty parts, extra dots, non-ASCII")
    func readsOddTextAsBefore() {
        let odd = [
            "", ".", "..", "...", "1.2", "1.2.", ".1.r", "1..r", "+1.+2.r", "-1.-2.r", "+.1.r", "-.1.r", "1.2.r.s.t",
            "9223372036854775807.1.r", "9223372036854775808.1.r", "-9223372036854775808.0.r", "999999999999999999.1.r",
            "0999999999999999999.1.r", "00000000000000000000000001.1.r", "1e3.1.r", " 1.2.r", "1 .2.r", "1.2 .r",
            "١٢.3.r", "1.٣.r", "1.2.ré", "é.1.r", "1.\u{301}2.r", "1\u{301}.2.r", "1.2\u{301}.r", "\u{600}1.2.r",
            "1\u{600}.2.r", "1.\u{600}2.r", "1.2.\u{301}r", "1\r\n.2.r", "0x1.2.r", "1_000.2.r", "１.2.r",
        ]
        for text in odd { Self.expectSameParts(text) }
        var random = SplitMix(seed: 0x0DD)
        let alphabet: [String] = ["0", "1", "9", ".", "-", "+", "r", "é", "\u{301}", "\u{600}", "\u{200D}", " ", "٣"]
        for _ in 0..<5_000 {
            let text = (0..<Int(random.next() % 24)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }.joined()
            Self.expectSameParts(text)
        }
    }
}
