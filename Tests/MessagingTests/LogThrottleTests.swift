import Testing
@testable import Messaging

@Suite("Lines strangers can cause: a few a window go out, the rest are counted and the count said with the next")
struct LogThrottleTests {
    let start = ContinuousClock.now

    @Test("within a window the first lines go out and the rest are left out; the next window's first line says how many were")
    func window() {
        var throttle = LogThrottle(linesPerWindow: 3, window: .seconds(60))
        let first = (0..<10).map { throttle.admit(at: start + .seconds($0)) }
        #expect(first == [0, 0, 0, nil, nil, nil, nil, nil, nil, nil])
        #expect(throttle.admit(at: start + .seconds(59)) == nil, "still the first window")
        #expect(throttle.admit(at: start + .seconds(60)) == 8, "a new window: out, with the eight left out before it")
        #expect(throttle.admit(at: start + .seconds(61)) == 0, "the count starts again once said")
        #expect(throttle.admit(at: start + .seconds(62)) == 0)
        #expect(throttle.admit(at: start + .seconds(63)) == nil)
    }

    @Test("lines fewer than the window's share all go out, however long it runs")
    func slowLinesAllGoOut() {
        var throttle = LogThrottle(linesPerWindow: 2, window: .seconds(10))
        #expect((0..<50).allSatisfy { throttle.admit(at: start + .seconds($0 * 5)) == 0 })
    }

    @Test("metadata names the left-out lines only when there were some")
    func metadata() {
        #expect(LogThrottle.metadata(leftOut: 0).isEmpty)
        #expect(LogThrottle.metadata(leftOut: 4_812)["more like it not logged"] == "4812")
    }

    @Test("shared across threads: of many lines at once exactly the window's share go out")
    func shared() async {
        let throttle = SharedLogThrottle(linesPerWindow: 10, window: .seconds(3_600))
        let admitted = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<500).count { _ in throttle.admit() != nil } }
            }
            return await group.reduce(0, +)
        }
        #expect(admitted == 10)
    }
}
