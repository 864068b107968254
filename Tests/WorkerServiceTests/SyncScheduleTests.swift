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

    @Test("any sequence of events: never a pair started while it runs, every wish ends in a run")
    func randomSequences() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var schedule = SyncSchedule(pairs: pairs, interval: .seconds(10), now: .zero)
            var running = Set(schedule.start())
            var now = Duration.zero
            for _ in 0..<60 {
                let event: SyncSchedule.Event
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: event = .notice
                case 1:
                    now += .seconds(Int.random(in: 0...7, using: &generator))
                    event = .tick(now: now)
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
            var rounds = 0
            while let pair = running.first, rounds < 10 {
                running.remove(pair)
                running.formUnion(schedule.handle(.finished(pair)))
                rounds += 1
            }
            #expect(running.isEmpty && schedule.wanted.isEmpty)
        }
    }
}
