import Logging
import Synchronization

/// Keeps the lines that strangers' clients can cause — a refused key, a client cut off for not reading — from filling
/// the log: of one kind, at most `linesPerWindow` lines go out in each `window`; past them lines are counted instead,
/// and the count goes out with the next line let through. Without it, a stranger making a fresh key for each
/// connection wrote a line per connection, as fast as it could connect.
struct LogThrottle {
    /// Lines of this kind let through in one window.
    let linesPerWindow: Int
    /// How long a window lasts; the count of lines let through starts again with the next.
    let window: Duration
    private var windowStart: ContinuousClock.Instant?
    private var logged = 0
    private var leftOut = 0
    /// What the lines left out counted, added up (`admit(adding:at:)`).
    private var sums: [String: Int] = [:]

    init(linesPerWindow: Int = 10, window: Duration = .seconds(60)) {
        precondition(linesPerWindow > 0, "a throttle lets at least one line through")
        self.linesPerWindow = linesPerWindow
        self.window = window
    }

    /// Whether a line at `now` goes out: `nil` when it is left out (and counted), else how many like it were left out
    /// since the last one that went out (to be said with it).
    mutating func admit(at now: ContinuousClock.Instant = .now) -> Int? {
        if let start = windowStart, now - start < window {
            guard logged < linesPerWindow else {
                leftOut += 1
                return nil
            }
        } else {
            windowStart = now
            logged = 0
        }
        logged += 1
        defer { leftOut = 0 }
        return leftOut
    }

    /// For lines that count something (connections shut, say): adds `counts` to what was counted since the last
    /// line went out and says whether a line at `now` goes out: `nil` when it is left out (its counts kept for the
    /// next), else the sums since the last line, by label, with how many lines were left out.
    mutating func admit(adding counts: [String: Int], at now: ContinuousClock.Instant = .now) -> Logger.Metadata? {
        sums.merge(counts, uniquingKeysWith: +)
        guard let leftOut = admit(at: now) else { return nil }
        defer { sums = [:] }
        return sums.mapValues { "\($0)" }.merging(Self.metadata(leftOut: leftOut)) { $1 }
    }

    /// Metadata for a line let through after `leftOut` like it were left out: nothing when none were.
    static func metadata(leftOut: Int) -> Logger.Metadata {
        leftOut > 0 ? ["more like it not logged": "\(leftOut)"] : [:]
    }
}

/// `LogThrottle`s by kind for lines made on several threads, each kind its own window: the lines of requests that
/// failed, say, by the code the client was told (a full disk refuses every write, and a batch import or a stranger
/// sends thousands).
final class LogThrottles: Sendable {
    private let throttles: Mutex<[String: LogThrottle]>
    private let linesPerWindow: Int
    private let window: Duration

    init(linesPerWindow: Int = 10, window: Duration = .seconds(60)) {
        throttles = Mutex([:])
        self.linesPerWindow = linesPerWindow
        self.window = window
    }

    /// As `LogThrottle.admit(at:)`, for lines of `kind` (a handful of kinds: each is kept for good).
    func admit(_ kind: String, at now: ContinuousClock.Instant = .now) -> Int? {
        throttles.withLock { throttles in
            throttles[kind, default: LogThrottle(linesPerWindow: linesPerWindow, window: window)].admit(at: now)
        }
    }
}

/// The refusals of clients an authenticator logs, from whichever thread it runs on: each key (or address) at most
/// once a minute, so a client retrying does not flood the log, and past that a `LogThrottle`, so neither do strangers
/// making a new key for each try.
final class RefusalLog: Sendable {
    private struct State {
        var lastLogged: [String: ContinuousClock.Instant] = [:]
        var throttle: LogThrottle
    }

    /// How long a client's refusals go unlogged after one that was.
    static let perClient = Duration.seconds(60)
    /// The clients remembered at once; past them the memory starts again.
    static let clientsRemembered = 1_000

    private let state: Mutex<State>

    init(linesPerWindow: Int = 10, window: Duration = .seconds(60)) {
        state = Mutex(State(throttle: LogThrottle(linesPerWindow: linesPerWindow, window: window)))
    }

    /// Whether `client`'s refusal at `now` is logged: `nil` when not, else how many lines the throttle left out since
    /// the last one that went out (as `LogThrottle.admit(at:)`).
    func admit(_ client: String, at now: ContinuousClock.Instant = .now) -> Int? {
        state.withLock { state in
            if let last = state.lastLogged[client], now - last < Self.perClient { return nil }
            if state.lastLogged.count >= Self.clientsRemembered { state.lastLogged.removeAll() }
            state.lastLogged[client] = now
            return state.throttle.admit(at: now)
        }
    }
}
