import Foundation
import GRDB
import GRDBSQLite
import RecipeProtocol
#if canImport(Glibc)
import Glibc
#endif

/// A bound on how long one read a client asked for may run on its connection.
///
/// Some reads cost what the client's text makes them cost: a search for many one-letter words merges the
/// index entries of nearly every word for each of them (480 such words took 6 s at 30,000 recipes), and
/// nothing about the request's size tells that in advance. SQLite calls a progress handler every few
/// thousand steps of its virtual machine; the one installed here stops the statement (`SQLITE_INTERRUPT`)
/// once the read has used the limit in processor time, so a reader connection is never held for more work
/// than that and the client gets an answer that says why. Processor time of the reading thread, not time on
/// the clock: six can-makes at once on two cores each took three times their own work on the clock, and one
/// in ten was stopped though none was costly.
enum QueryTimeLimit {
    /// How many SQLite virtual-machine steps pass between two looks at the clock (a few microseconds of work).
    static let stepsBetweenChecks: Int32 = 2_000

    /// Runs `body` on `db`, stopping its statements once they have used `limit` of this thread's processor time; a stopped run throws `Exceeded`.
    /// Errors of `body` other than the interruption pass through unchanged.
    static func run<T>(_ limit: Duration, on db: Database, _ body: () throws -> T) throws -> T {
        let deadline = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        deadline.initialize(to: threadProcessorNanoseconds() + UInt64(limit / .nanoseconds(1)))
        defer { deadline.deallocate() }
        let connection = db.sqliteConnection
        sqlite3_progress_handler(connection, stepsBetweenChecks, { context in
            guard let context else { return 0 }
            return threadProcessorNanoseconds() >= context.assumingMemoryBound(to: UInt64.self).pointee ? 1 : 0
        }, UnsafeMutableRawPointer(deadline))
        // The connection goes back to its pool for other reads: the handler must not outlive this call.
        defer { sqlite3_progress_handler(connection, 0, nil, nil) }
        do {
            return try body()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT && threadProcessorNanoseconds() >= deadline.pointee {
            throw Exceeded(limit: limit)
        }
    }

    /// A read stopped at its time limit.
    struct Exceeded: Error {
        let limit: Duration
    }
}

/// The processor time the calling thread has used, in nanoseconds (a free function: SQLite's C callback cannot
/// capture anything).
private func threadProcessorNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
