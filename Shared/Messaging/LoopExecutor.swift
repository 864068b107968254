import Synchronization
import ZeroMQ

/// The task executor of a server's I/O thread: handler tasks start here, so a
/// handler's synchronous work runs on the I/O thread without a thread hand-off,
/// and a handler that awaits something leaves the loop free until it resumes.
///
/// Handlers must not block: slow work belongs behind an `await` (GRDB's async
/// access, a file thread), which lets the loop go on serving.
final class LoopExecutor: TaskExecutor {
    private let jobs = Mutex<[UnownedJob]>([])
    private let wakeup: Wakeup

    init(wakeup: Wakeup) {
        self.wakeup = wakeup
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let wasEmpty = jobs.withLock { jobs in
            jobs.append(job)
            return jobs.count == 1
        }
        if wasEmpty { wakeup.signal() }
    }

    /// Runs every queued job, including those the jobs queue; on the I/O thread only.
    func runPending() {
        while true {
            let batch = jobs.withLock { jobs in
                defer { jobs.removeAll(keepingCapacity: true) }
                return jobs
            }
            if batch.isEmpty { return }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
