import Foundation
import Synchronization

/// Paths for the folders and files a test makes in the temporary folder, removed when the test process exits.
///
/// Tests that start services hand them a data folder and cannot always remove it themselves (a process killed
/// with -9, a test that fails half-way, a folder whose owner outlives the test's scope). Every path taken here
/// is removed at exit instead, so a run of the suite leaves nothing behind in the temporary folder.
/// `RECIPES_KEEP_TEST_FILES=1` keeps them, to look at after a failure.
public enum Scratch {
    private static let taken = Mutex<[URL]>([])
    private static let registered: Bool = {
        atexit { Scratch.removeAll() }
        return true
    }()

    /// A fresh path `<temporary folder>/<prefix>-<UUID><suffix>`; nothing is created there.
    public static func url(_ prefix: String, suffix: String = "") -> URL {
        _ = registered
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)\(suffix)")
        taken.withLock { $0.append(url) }
        return url
    }

    /// `url(prefix, suffix:)` as a file-system path.
    public static func path(_ prefix: String, suffix: String = "") -> String { url(prefix, suffix: suffix).path }

    /// An `ipc://` endpoint whose socket file is removed at exit (the short name keeps it under the 107-byte limit).
    public static func ipcEndpoint(_ prefix: String = "rv") -> String {
        _ = registered
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8)).ipc")
        taken.withLock { $0.append(url) }
        return "ipc://" + url.path
    }

    private static func removeAll() {
        if ProcessInfo.processInfo.environment["RECIPES_KEEP_TEST_FILES"] == "1" { return }
        for url in taken.withLock({ $0 }) { try? FileManager.default.removeItem(at: url) }
    }
}
