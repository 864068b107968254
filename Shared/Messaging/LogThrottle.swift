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

    /// Metadata for a line let through after `leftOut` like it were left out: nothing when none were.
    static func metadata(leftOut: Int) -> Logger.Metadata {
        leftOut > 0 ? ["more like it not logged": "\(leftOut)"] : [:]
    }
}

/// A `LogThrottle` for lines made on several threads.
final class SharedLogThrottle: Sendable {
    private let throttle: Mutex<LogThrottle>

    init(linesPerWindow: Int = 10, window: Duration = .seconds(60)) {
        throttle = Mutex(LogThrottle(linesPerWindow: linesPerWindow, window: window))
    }

    /// As `LogThrottle.admit(at:)`.
    func admit(at now: ContinuousClock.Instant = .now) -> Int? {
        throttle.withLock { $0.admit(at: now) }
    }
}
