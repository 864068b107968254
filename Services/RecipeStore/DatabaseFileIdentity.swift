import Foundation
import RecipeProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The database file and its write-ahead log as the store opened them. A data folder removed or replaced while the
/// storage runs (`rm -rf` of the wrong folder, a volume mounted over it) leaves SQLite writing into files no path
/// names any more: each write was acknowledged, and all of them were gone at the next start. The writer checks
/// before every commit that the files at the paths are still the ones it writes (two `stat` calls), and refuses
/// the write otherwise.
struct DatabaseFileIdentity: Sendable {
    struct FileID: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    let path: String
    let database: FileID?
    let log: FileID?

    /// The files at `path` and beside it now.
    init(path: String) {
        self.path = path
        database = Self.id(path)
        log = Self.id(path + "-wal")
    }

    static func id(_ path: String) -> FileID? {
        (try? look(path).get()) ?? nil
    }

    /// The file at `path`: nil when there is none, or the system's error when it cannot be looked at (a folder
    /// whose permissions were changed).
    static func look(_ path: String) -> Result<FileID?, POSIXError> {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return .success(nil) }
            return .failure(POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
        }
        return .success(FileID(device: UInt64(status.st_dev), inode: UInt64(status.st_ino)))
    }

    /// What is wrong, when the files at the paths are no longer the ones the store opened; nil while they are.
    func problem() -> String? {
        guard let database else { return nil }
        let databaseNow = Self.look(path)
        let logNow: Result<FileID?, POSIXError> = log == nil ? .success(nil) : Self.look(path + "-wal")
        let databaseChanged = databaseNow != .success(database)
        guard databaseChanged || logNow != .success(log) else { return nil }
        let file = databaseChanged ? RecipeVault.databaseFileName : "\(RecipeVault.databaseFileName)'s log (\(RecipeVault.databaseFileName)-wal)"
        let folder = (path as NSString).deletingLastPathComponent
        switch databaseChanged ? databaseNow : logNow {
        case .failure(let error):
            // Not gone, perhaps: out of sight (the folder's permissions changed under it). Refused all the same, as
            // the storage could not open it again either.
            return "\(file) can no longer be looked at in recipe-storage's data folder (\(folder)): "
                + "\(String(cString: strerror(error.code.rawValue)).lowercased()), so it could not be opened at its next start"
        case .success(let now):
            let what = now == nil ? "was removed from" : "was replaced in"
            return "\(file) \(what) recipe-storage's data folder (\(folder)) while it ran, and a write now would be gone at its next start"
        }
    }

    /// A write the writer did not commit because `problem()` said something.
    struct Moved: Error, CustomStringConvertible {
        let problem: String
        var description: String { problem }
    }

    /// The reply to a request that failed so.
    static func refusal(_ problem: String, op: String) -> ServiceError {
        ServiceError(.storageDamaged, "\(op) was not done: \(problem); nothing of this request was kept. "
            + "Stop recipe-storage, put its data folder back as it was (or restore a backup into it) and start it again")
    }
}
