import Foundation

/// Runs `body` on a thread of its own, so blocking socket calls never hold a
/// thread of Swift's cooperative pool (which the other tests share).
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// `count` random-looking bytes (SplitMix64, a fresh seed each call): fast enough
/// that making megabytes does not tie up the threads the other tests need.
func randomBytes(_ count: Int) -> Data {
    var state = UInt64.random(in: .min ... .max)
    var data = Data(count: count)
    data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
        var index = 0
        while index < count {
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            mixed ^= mixed >> 31
            for shift in stride(from: 0, to: 64, by: 8) where index < count {
                raw[index] = UInt8(truncatingIfNeeded: mixed >> UInt64(shift))
                index += 1
            }
        }
    }
    return data
}

/// A fresh `ipc://` endpoint in the temporary folder.
func temporaryIPCEndpoint() -> String {
    "ipc://" + FileManager.default.temporaryDirectory.appendingPathComponent("rv-\(UUID().uuidString.prefix(8)).ipc").path
}

/// How many file descriptors this process has open.
func openFileDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}
