/// A counting semaphore for imports: however many batch jobs run, at most `limit`
/// URLs are fetched and read at once (`recipe-worker --concurrency`).
actor ImportSlots {
    private let limit: Int
    private var taken = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { self.limit = max(1, limit) }

    /// Runs `work` once a slot is free, and frees the slot after.
    func withSlot<T: Sendable>(_ work: @Sendable () async -> T) async -> T {
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
