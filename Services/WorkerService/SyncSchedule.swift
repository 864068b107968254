/// When each replica pair syncs, decided as a value: no I/O, no clock of its own, no tasks.
/// The watch loop feeds it what happened and starts the pairs it names; tests feed it events.
///
/// The rules: every pair runs once at the start; a change notice (from either side of any pair) or
/// the interval passing since the last round asks every pair to run; a pair already running keeps
/// the wish and runs once more right after it finishes (never twice at once, never a queue of runs).
struct SyncSchedule: Equatable {
    enum Event: Equatable {
        /// A storage announced a change.
        case notice
        /// Time passed: `now` is on the caller's clock, as a duration since any fixed point.
        case tick(now: Duration)
        /// A pair's run ended (successfully or not).
        case finished(String)
    }

    let pairs: [String]
    let interval: Duration
    private(set) var wanted: Set<String> = []
    private(set) var running: Set<String> = []
    private(set) var lastRound: Duration

    /// A schedule for `pairs` whose first round starts now: `start()` names them all.
    init(pairs: [String], interval: Duration, now: Duration) {
        self.pairs = pairs
        self.interval = interval
        self.lastRound = now
        self.wanted = Set(pairs)
    }

    /// When the interval next asks for a round (the loop may sleep until then, or a notice).
    var nextRound: Duration { lastRound + interval }

    /// The pairs to start now.
    mutating func start() -> [String] {
        let ready = pairs.filter { wanted.contains($0) && !running.contains($0) }
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
            guard now >= nextRound else { return [] }
            lastRound = now
            wanted.formUnion(pairs)
        case .finished(let pair):
            running.remove(pair)
        }
        return start()
    }
}
