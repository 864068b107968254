import Foundation

/// A task executor whose jobs run on up to `width` threads of its own, started as work first needs them and kept
/// until `shutdown()`.
///
/// The server makes its replies of megabytes here rather than on Swift's shared pool: what else a process runs on that
/// pool (a test run's hundreds of tests, a busy worker's imports) then never holds a large reply up, and a large reply
/// never holds up the pool. `ServerLoop` lets at most `width` such replies be made at once, so none waits for a thread.
final class ThreadPoolExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: every field but `name` and `width` is only touched with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var threads = 0
    private var idle = 0
    private var stopping = false
    private let name: String
    private let width: Int

    init(name: String, width: Int) {
        precondition(width > 0, "a pool needs a thread")
        self.name = name
        self.width = width
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        // A thread more only when more jobs wait than threads are free to take them (a thread woken but not yet
        // running counts as free until it has taken one): most of the time one or none runs.
        let start = jobs.count > idle && threads < width
        if start { threads += 1 }
        condition.signal()
        condition.unlock()
        if start { Thread.start(named: name) { [self] in runJobs() } }
    }

    /// Lets the threads finish the jobs there are and exit; jobs that come later start a thread of their own again,
    /// one at a time, so a request still running when its server stopped still finishes.
    func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            idle += 1
            while jobs.isEmpty && !stopping { condition.wait() }
            idle -= 1
            guard !jobs.isEmpty else {
                threads -= 1
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
