import Synchronization
import ZeroMQ

/// A task executor whose jobs run on the server's I/O thread, between polls.
///
/// A request's handler starts there the moment the request is read and, when it does not
/// wait for anything, has its reply on the socket before the thread polls again: no thread
/// hand-off at all. A handler that waits (a database read) comes back through the wake-up
/// pipe, as replies did before. Bodies too large to decode in passing go to a thread of their own
/// (`ServerLoop`), so a large body never holds up the socket.
final class LoopExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    // @unchecked: the state is behind the mutex; the jobs are run only by the thread that owns the loop.
    private struct State {
        var jobs: [UnownedJob] = []
        /// The loop has ended: jobs of requests still running then finish on `fallback`, made when the first comes.
        var closed = false
        var fallback: ThreadExecutor?
    }

    private let state = Mutex(State())
    private let wakeup: Wakeup
    private let name: String

    init(wakeup: Wakeup, name: String) {
        self.wakeup = wakeup
        self.name = name
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (fallback, wasEmpty) = state.withLock { state -> (ThreadExecutor?, Bool) in
            if state.closed { return (fallbackExecutor(&state), false) }
            state.jobs.append(job)
            return (nil, state.jobs.count == 1)
        }
        if let fallback {
            fallback.enqueueUnowned(job)
        } else if wasEmpty {
            wakeup.signal() // a no-op on the loop's own thread, which runs its jobs before it polls
        }
    }

    private func fallbackExecutor(_ state: inout State) -> ThreadExecutor {
        if let fallback = state.fallback { return fallback }
        let fallback = ThreadExecutor(name: name)
        state.fallback = fallback
        return fallback
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Runs the queued jobs and those they queue in turn, for at most `rounds` rounds.
    /// Returns `true` when jobs are still waiting (the loop then polls without blocking).
    func runJobs(rounds: Int = 8) -> Bool {
        var batch: [UnownedJob] = []
        for _ in 0..<rounds {
            state.withLock { swap(&batch, &$0.jobs) }
            if batch.isEmpty { return false }
            for job in batch {
                job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
            }
            batch.removeAll(keepingCapacity: true)
        }
        return state.withLock { !$0.jobs.isEmpty }
    }

    /// The loop is ending: what is queued, and every later job, runs on a thread of its own
    /// (made only if a request was still running; it stays for the rest of the process).
    func close() {
        let (fallback, left) = state.withLock { state -> (ThreadExecutor?, [UnownedJob]) in
            state.closed = true
            defer { state.jobs = [] }
            return state.jobs.isEmpty ? (nil, []) : (fallbackExecutor(&state), state.jobs)
        }
        for job in left { fallback?.enqueueUnowned(job) }
    }
}
