import GRDB
import Synchronization

/// Group commit: writes that arrive while another transaction is committing are committed together.
///
/// Each write of a batch of several runs in a savepoint of its own (a write alone, straight in the transaction),
/// with its own pinned time and its own change capture, so it succeeds or fails alone exactly as if it were a
/// transaction by itself; all of a batch are acknowledged
/// once their one `COMMIT` (and its fsync) is done, so an acknowledged write is still durable. One writer
/// alone never waits for company: a batch is whatever was queued when the previous one finished.
final class WriteBatcher: Sendable {
    /// How one write ended in the batch's transaction.
    private enum Outcome {
        /// Its changes are in the transaction.
        case written
        /// It threw: its changes are undone (its savepoint rolled back), or, when it ran alone, the transaction must be.
        case refused
        /// SQLite ended the whole transaction itself (a full disk, an I/O error).
        case aborted
    }

    private struct Pending: Sendable {
        /// Runs the write in the open transaction: `alone`, straight in it (the batch is this write only: a
        /// savepoint would only cost its statements and a copy of every page it changes); else in a savepoint.
        let run: @Sendable (Database, _ alone: Bool) -> Outcome
        /// Reports the outcome: `nil` once the batch committed (the write's own result stands), else why the batch failed.
        let finish: @Sendable ((any Error)?) -> Void
    }

    private struct State {
        var queue: [Pending] = []
        var draining = false
    }

    /// The most writes committed together (a bound on how long the first of them waits).
    static let maxBatch = 64

    private let pool: DatabasePool
    private let state = Mutex(State())

    /// The files the writer writes, checked before each commit.
    let files: DatabaseFileIdentity

    init(pool: DatabasePool, files: DatabaseFileIdentity) {
        self.pool = pool
        self.files = files
    }

    /// Runs `body` in a transaction shared with the writes queued beside it and returns once it is committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let slot = Slot<T>()
            let pending = Pending(run: { db, alone in
                if alone {
                    slot.outcome = Result { try body(db) }
                } else {
                    do {
                        try db.inSavepoint {
                            let outcome = Result { try body(db) }
                            slot.outcome = outcome
                            if case .success = outcome { return .commit }
                            return .rollback
                        }
                    } catch {
                        slot.outcome = .failure(error)
                    }
                }
                guard db.isInsideTransaction else { return .aborted }
                if case .success? = slot.outcome { return .written }
                return .refused
            }, finish: { batchError in
                if let batchError {
                    // The write that made the batch fail says its own error; the others say why they were not stored.
                    if case .failure(let own)? = slot.outcome { continuation.resume(throwing: own) } else { continuation.resume(throwing: batchError) }
                } else {
                    continuation.resume(with: slot.outcome ?? .failure(CancellationError()))
                }
            })
            let start = state.withLock { state -> Bool in
                state.queue.append(pending)
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            if start { commitNextBatch() }
        }
    }

    /// Queues one batch on the writer's own queue (no task in between: the write starts on the writer's thread
    /// straight from the request's, one thread wake-up fewer a write). Each batch is a block of its own, so other
    /// writes queued on the pool take their turn between batches.
    private func commitNextBatch() {
        pool.asyncWriteWithoutTransaction { db in
            let batch = self.state.withLock { state -> [Pending] in
                let batch = Array(state.queue.prefix(Self.maxBatch))
                state.queue.removeFirst(batch.count)
                if batch.isEmpty { state.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            do {
                let files = self.files
                try db.inTransaction {
                    if batch.count == 1 {
                        switch batch[0].run(db, true) {
                        case .written:
                            if let problem = files.problem() { throw DatabaseFileIdentity.Moved(problem: problem) }
                            return .commit
                        case .refused: return .rollback
                        case .aborted: throw BatchAborted()
                        }
                    }
                    for pending in batch where pending.run(db, false) == .aborted {
                        // SQLite rolled the whole transaction back (a full disk, an I/O error): nothing of the batch stands.
                        throw BatchAborted()
                    }
                    if let problem = files.problem() { throw DatabaseFileIdentity.Moved(problem: problem) }
                    return .commit
                }
                for pending in batch { pending.finish(nil) }
            } catch {
                for pending in batch { pending.finish(error) }
            }
            self.commitNextBatch()
        }
    }

    private struct BatchAborted: Error, CustomStringConvertible {
        var description: String { "the database ended the transaction after an error; nothing of it was stored" }
    }
}

/// One write's outcome, set on the writer's queue and read after its transaction ended.
private final class Slot<T: Sendable>: @unchecked Sendable {
    // @unchecked: written inside `pool.write`, read only after it returned (which orders the two).
    var outcome: Result<T, any Error>?
}
