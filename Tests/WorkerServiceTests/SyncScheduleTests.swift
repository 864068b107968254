import TestThreads
import Testing
@testable import WorkerService

@Suite("When replica pairs sync (the schedule, without I/O)", .onOwnThread)
struct SyncScheduleTests {
    let pairs = ["tcp://a:5555", "tcp://b:5555"]

    @Test("every pair runs once at the start, and nothing more until something happens")
    func firstRound() {
        var schedule = SyncSchedule(pairs: pairs, interval: .seconds(60), now: .zero)
        #expect(schedule.start() == pairs)
        #expect(schedule.start() == [])
        #expect(schedule.handle(.tick(now: .seconds(59))) == [])
        #expect(schedule.running == Set(pairs))
    }

    @Test("a notice during a run makes that pair run once more right after it, never twice at once")
    func noticeDuringRun() {
        var schedule = SyncSchedule(pairs: pairs, interval: .seconds(60), now: .zero)
        _ = schedule.start()
        #expect(schedule.handle(.notice) == [], "both are running")
        #expect(schedule.handle(.notice) == [], "a second notice adds no second run")
        #expect(schedule.handle(.finished(pairs[0])) == [pairs[0]], "runs again at once")
        #expect(schedule.handle(.finished(pairs[0])) == [], "one run for any number of notices")
        #expect(schedule.handle(.finished(pairs[1])) == [pairs[1]])
        #expect(schedule.handle(.finished(pairs[1])) == [])
        #expect(schedule.running == [] && schedule.wanted == [])
    }

    @Test("a notice when idle starts every pair at once")
    func noticeWhenIdle() {
        var schedule = SyncSchedule(pairs: pairs, interval: .seconds(60), now: .zero)
        _ = schedule.start()
        _ = schedule.handle(.finished(pairs[0]))
        _ = schedule.handle(.finished(pairs[1]))
        #expect(schedule.handle(.notice) == pairs)
    }

    @Test("the interval asks for a round measured from the last one; a pair down does not hold up the other")
    func interval() {
        var schedule = SyncSchedule(pairs: pairs, interval: .seconds(30), now: .zero)
        _ = schedule.start()
        _ = schedule.handle(.finished(pairs[0])) // pair 1 is still running (its replica is down, each call timing out)
        #expect(schedule.handle(.tick(now: .seconds(29))) == [])
        #expect(schedule.handle(.tick(now: .seconds(30))) == [pairs[0]], "the free pair runs; the busy one keeps the wish")
        #expect(schedule.nextRound == .seconds(60))
        #expect(schedule.handle(.finished(pairs[1])) == [pairs[1]])
        #expect(schedule.handle(.tick(now: .seconds(45))) == [])
    }

    @Test("a pair whose run failed waits 5 s, then 10 s, 20 s… (at most a minute, or the interval) before notices run it again; the other pair is not held up; a run that succeeds ends the wait")
    func failedPairWaits() {
        var schedule = SyncSchedule(pairs: pairs, interval: .seconds(3600), now: .zero)
        _ = schedule.start()
        _ = schedule.handle(.finished(pairs[1]))
        // Pair 0's replica has a full disk: each run fails.
        #expect(schedule.handle(.failed(pairs[0], now: .seconds(1))) == [])
        #expect(schedule.handle(.notice) == [pairs[1]], "the other pair runs at once; the failed one waits")
        _ = schedule.handle(.finished(pairs[1]))
        #expect(schedule.handle(.tick(now: .seconds(5))) == [], "5 s after the failure, not before")
        #expect(schedule.handle(.tick(now: .seconds(6))) == [pairs[0]], "the notice's wish is kept, and runs once the wait is over")
        #expect(schedule.handle(.failed(pairs[0], now: .seconds(7))) == [])
        #expect(schedule.handle(.notice) == [pairs[1]])
        #expect(schedule.handle(.tick(now: .seconds(16))) == [])
        #expect(schedule.handle(.tick(now: .seconds(17))) == [pairs[0]], "10 s after the second failure")
        _ = schedule.handle(.finished(pairs[1]))
        var now = Duration.seconds(17)
        for expected in [20, 40, 60, 60] {
            _ = schedule.handle(.failed(pairs[0], now: now))
            _ = schedule.handle(.notice)
            _ = schedule.handle(.finished(pairs[1]))
            #expect(schedule.retryAt[pairs[0]] == now + .seconds(expected), "\(schedule.failures[pairs[0]] ?? 0) failures")
            now += .seconds(expected)
            #expect(schedule.handle(.tick(now: now)) == [pairs[0]])
        }
        // `recipes sync` ran it and it succeeded: the wait ends, and the schedule's own runs are as they were.
        #expect(schedule.handle(.failed(pairs[0], now: now)) == [])
        #expect(schedule.handle(.recovered(pairs[0])) == [], "nothing was wished for meanwhile")
        #expect(schedule.handle(.notice) == pairs, "no wait any more")
        _ = schedule.handle(.finished(pairs[1]))
        // Room again: a run that succeeds ends the wait, and the next notice runs it at once.
        #expect(schedule.handle(.finished(pairs[0])) == [])
        #expect(schedule.handle(.notice) == pairs)
        #expect(schedule.failures.isEmpty && schedule.retryAt.isEmpty)
    }

    @Test("the wait after failures is never longer than the interval, which asks for a run anyway")
    func backoffWithinInterval() {
        let schedule = SyncSchedule(pairs: pairs, interval: .seconds(30), now: .zero)
        #expect((1...10).map { schedule.backoff(after: $0) } == [5, 10, 20, 30, 30, 30, 30, 30, 30, 30].map { Duration.seconds($0) })
        let short = SyncSchedule(pairs: pairs, interval: .seconds(1), now: .zero)
        #expect(short.backoff(after: 3) == .seconds(5), "a wait of at least the first one")
    }

    @Test("any sequence of events: never a pair started while it runs, every wish ends in a run")
    func randomSequences() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var schedule = SyncSchedule(pairs: pairs, interval: .seconds(10), now: .zero)
            var running = Set(schedule.start())
            var now = Duration.zero
            for _ in 0..<60 {
                let event: SyncSchedule.Event
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: event = .notice
                case 1:
                    now += .seconds(Int.random(in: 0...7, using: &generator))
                    event = .tick(now: now)
                case 2:
                    guard let pair = running.randomElement(using: &generator) else { continue }
                    running.remove(pair)
                    event = .failed(pair, now: now)
                default:
                    guard let pair = running.randomElement(using: &generator) else { continue }
                    running.remove(pair)
                    event = .finished(pair)
                }
                for pair in schedule.handle(event) {
                    #expect(!running.contains(pair), "\(pair) started while running")
                    running.insert(pair)
                }
                #expect(schedule.running == running)
            }
            // Let every run finish: whatever was wished for runs, then all is quiet.
            // (Time passes too: a pair waiting after a failure runs once its wait is over.)
            var rounds = 0
            while rounds < 20 && !(running.isEmpty && schedule.wanted.isEmpty) {
                if let pair = running.first {
                    running.remove(pair)
                    running.formUnion(schedule.handle(.finished(pair)))
                } else {
                    now += .seconds(10)
                    running.formUnion(schedule.handle(.tick(now: now)))
                }
                rounds += 1
            }
            #expect(running.isEmpty && schedule.wanted.isEmpty)
        }
    }
}
