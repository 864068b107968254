import Foundation
import TestRandom
import TestScratch

/// `count` random-looking bytes (SplitMix64, a fresh seed each call): fast enough
/// that making megabytes does not tie up the threads the other tests need.
func randomBytes(_ count: Int) -> Data {
    var random = SplitMix(seed: .random(in: .min ... .max))
    return Data(random.bytes(count))
}

/// A fresh `ipc://` endpoint in the temporary folder.
func temporaryIPCEndpoint() -> String {
    Scratch.ipcEndpoint()
}

/// How many file descriptors this process has open.
func openFileDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}
