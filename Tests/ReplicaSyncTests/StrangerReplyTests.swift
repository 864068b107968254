import RecipeProtocol
import ReplicaSync
import Testing

/// What another storage answers is any JSON its types allow: numbers anywhere in `Int`'s range. The fuzz target
/// `sync-peer` syncs against such answers; these are the two places its first finding went through.
@Suite("A replica's answers at the ends of Int")
struct StrangerReplyTests {
    @Test("a frame reference names a frame only when it is one of the message's", arguments: [
        (Int.min, nil), (-1, nil), (0, nil), (1, 0), (3, 2), (4, nil), (Int.max, nil),
    ] as [(Int, Int?)])
    func frameReference(frame: Int, index: Int?) {
        #expect(FrameReference(frame: frame).index(among: 3) == index)
        #expect(FrameReference(frame: frame).index(among: 0) == nil)
    }

    @Test("counts a replica reports add up without trapping: at Int.max (or Int.min) they stay there")
    func countsSaturate() {
        var big = PullReport()
        big.changed = .max
        big.conflicts = .max
        big.photoBytes = .max
        var one = PullReport()
        one.changed = 1
        one.conflicts = 1
        one.photoBytes = 1
        let sum = big + one
        #expect(sum.changed == .max && sum.conflicts == .max && sum.photoBytes == .max)
        var low = PullReport()
        low.changed = .min
        #expect((low + low).changed == .min)
        #expect(2.addingSaturated(3) == 5)
        #expect(Int.max.addingSaturated(-1) == .max - 1)
    }
}
