/// A counting semaphore: at most `limit` pieces of work at once, the rest waiting first come, first served.
/// The worker's imports (however many batch jobs run, at most `--concurrency` URLs are fetched and read at
/// once) and a server's replies of megabytes (at most two made at once, so many asking at once cannot add up).
public actor Slots {
    private let limit: Int
    private var taken = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// At most `limit` (at least 1) at once.
    public init(limit: Int) { self.limit = max(1, limit) }

    /// Runs `work` once a slot is free, and frees the slot after.
    public func withSlot<T: Sendable>(_ work: @Sendable () async -> T) async -> T {
        await take()
        let result = await work()
        give()
        return result
    }

    private func take() async {
        if taken < limit {
            taken += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func give() {
        if waiting.isEmpty {
            taken -= 1
        } else {
            waiting.removeFirst().resume() // the slot passes straight on
        }
    }
}
