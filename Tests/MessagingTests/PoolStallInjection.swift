import Foundation
import Testing

/// A check on the suite itself, off unless `RECIPES_POOL_STALLS` is set (to how many stalls; 6 when it is not a
/// number): it holds every thread of Swift's shared pool (one per core) — the pool every test's own task runs on — for
/// 25 s at a time, over and over, while the rest of the suite runs beside it. A loaded machine does the same to a run
/// (a CI run once waited 48 s at its start). A test that fails under it bounds how soon its own task gets a thread,
/// not what it means to test: its bound should be measured where the pool plays no part, or be far above any stall.
///
///     RECIPES_POOL_STALLS=10 swift test --skip-build
@Suite("The suite under stalls of the shared pool",
       .enabled(if: ProcessInfo.processInfo.environment["RECIPES_POOL_STALLS"] != nil))
struct PoolStallInjection {
    static let stalls = ProcessInfo.processInfo.environment["RECIPES_POOL_STALLS"].flatMap { Int($0) } ?? 6

    @Test("every pool thread held for 25 s, then let go for 15 s, over and over",
          arguments: Array(1...ProcessInfo.processInfo.activeProcessorCount))
    func stall(_ thread: Int) async throws {
        for _ in 0..<min(max(Self.stalls, 1), 40) {
            usleep(25_000_000) // deliberately blocks the pool thread this runs on
            try await Task.sleep(for: .seconds(15))
        }
    }
}
