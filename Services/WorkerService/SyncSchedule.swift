/// When each replica pair syncs, decided as a value: no I/O, no clock of its own, no tasks.
/// The watch loop feeds it what happened and starts the pairs it names; tests feed it events.
///
/// The rules: every pair runs once at the start; a change notice (from either side of any pair) or
/// the interval passing since the last round asks every pair to run; a pair already running keeps
/// the wish and runs once more right after it finishes (never twice at once, never a queue of runs).
/// A pair whose run failed waits before it runs again, longer after each failure in a row (5 s, 10 s, 20 s… at most
/// a minute, or the interval): a replica whose disk is full, or that is down, is not sent the same page again on
/// every change the other side announces, and one that is back is synced within a minute. A run that succeeds
/// (`recipes sync` runs every pair at once, whatever the wait) ends the wait.
struct SyncSchedule: Equatable {
    enum Event: Equatable {
        /// A storage announced a change.
        case notice
        /// Time passed: `now` is on the caller's clock, as a duration since any fixed point.
        case tick(now: Duration)
        /// A pair's run ended successfully.
        case finished(String)
        /// A pair's run ended in a failure, at `now`.
        case failed(String, now: Duration)
        /// A run of the pair that the schedule did not start (`recipes sync`) succeeded: any wait after failures ends.
        case recovered(String)
    }

    let pairs: [String]
    let interval: Duration
    private(set) var wanted: Set<String> = []
    private(set) var running: Set<String> = []
    private(set) var lastRound: Duration
    /// The latest time an event told.
    private(set) var now: Duration
    /// Failures in a row of each pair, and when each that failed may run again.
    private(set) var failures: [String: Int] = [:]
    private(set) var retryAt: [String: Duration] = [:]

    /// The first wait after a failure, and the longest.
    static let firstBackoff: Duration = .seconds(5)
    static let maxBackoff: Duration = .seconds(60)

    /// A schedule for `pairs` whose first round starts now: `start()` names them all.
    init(pairs: [String], interval: Duration, now: Duration) {
        self.pairs = pairs
        self.interval = interval
        self.lastRound = now
        self.now = now
        self.wanted = Set(pairs)
    }

    /// The wait after `count` failures in a row.
    func backoff(after count: Int) -> Duration {
        let longest = min(Self.maxBackoff, max(interval, Self.firstBackoff))
        var wait = Self.firstBackoff
        for _ in 1..<max(1, count) where wait < longest { wait = wait * 2 }
        return min(wait, longest)
    }

    /// When the interval next asks for a round (the loop may sleep until then, or a notice).
    var nextRound: Duration { lastRound + interval }

    /// The pairs to start now.
    mutating func start() -> [String] {
        let ready = pairs.filter { wanted.contains($0) && !running.contains($0) && retryAt[$0].map { $0 <= now } ?? true }
        for pair in ready {
            wanted.remove(pair)
            running.insert(pair)
        }
        return ready
    }

    /// Takes in what happened and returns the pairs to start now.
    mutating func handle(_ event: Event) -> [String] {
        switch event {
        case .notice:
            wanted.formUnion(pairs)
        case .tick(let now):
            self.now = max(self.now, now)
            // A pair that waited out its failure and still wants to run starts now, whatever the interval says.
            if now >= nextRound {
                lastRound = now
                wanted.formUnion(pairs)
            }
        case .finished(let pair):
            running.remove(pair)
            failures[pair] = nil
            retryAt[pair] = nil
        case .recovered(let pair):
            failures[pair] = nil
            retryAt[pair] = nil
        case .failed(let pair, let now):
            self.now = max(self.now, now)
            running.remove(pair)
            let count = failures[pair, default: 0] + 1
            failures[pair] = count
            retryAt[pair] = self.now + backoff(after: count)
        }
        return start()
    }
}
