import Foundation
import RecipeProtocol
#if canImport(Glibc)
import Glibc
#endif

/// One `recipe-storage` to a data folder: the running one holds `recipe-storage.lock` there locked (`flock`), and a
/// second one started on the same folder refuses to start, naming the first.
///
/// Two storages on one folder each keep part of the folder's state in memory and would undo each other's work: one
/// collects photo files it finds no row for while the other has just written a photo and not yet committed its row
/// (the photo the client was told is stored is gone), or photos a replica sent ahead of their records; their snapshot
/// copies and lost-photo lists do not see each other's. SQLite alone keeps the database sound; the folder needs this.
///
/// The system lets go of the lock when the process ends, however it ends (kill -9, a crash, a power cut), so a lock
/// file left behind never keeps a storage from starting. A folder whose file system has no locks (some network or
/// FUSE mounts) is used without one, and the service says so in its log.
public final class DataFolderLock: Sendable {
    /// The descriptor holding the lock; -1 when the file system takes no locks.
    private let descriptor: Int32
    /// Set when the lock could not be taken because the file system does not lock files: for the service's log.
    public let unlockedNote: String?

    /// Creates `folder` when it is missing and takes its lock, or throws `DataFolderInUse` naming the storage that holds it.
    public init(folder: URL) throws {
        // Made for this storage's user alone: it holds every recipe, and other users of the machine have no need of it.
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = folder.appendingPathComponent(RecipeVault.storageLockFileName).path
        // Never through a link: the file is truncated and written once locked, and must be this folder's own.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else {
            if errno == ELOOP { throw DataFolderLockIsLink(path: path) }
            throw PhotoStorageError.system("cannot open \(path)")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = Self.holder(readingFrom: descriptor)
            if code == EWOULDBLOCK {
                close(descriptor)
                throw DataFolderInUse(folder: folder, holder: holder)
            }
            if [ENOLCK, EOPNOTSUPP, ENOSYS, EINVAL].contains(code) {
                self.descriptor = -1
                self.unlockedNote = "its file system does not lock files (\(String(cString: strerror(code)))), so nothing keeps a second recipe-storage from starting on \(folder.path); make sure only one runs there"
                close(descriptor)
                return
            }
            close(descriptor)
            throw PhotoStorageError.system("cannot lock \(path)", errno: code)
        }
        // Who holds it, for the words of a storage refused: the process, the machine (a container's name), since when.
        let note = "process \(getpid()) on \(Self.hostName()), since \(ISO8601DateFormatter().string(from: Date()))\n"
        _ = ftruncate(descriptor, 0)
        _ = Array(note.utf8).withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        self.descriptor = descriptor
        self.unlockedNote = nil
    }

    deinit {
        if descriptor >= 0 { close(descriptor) } // the lock goes with the descriptor
    }

    /// What the lock file says of the storage holding it ("process 7 on a1b2c3, since …"), or `nil`.
    private static func holder(readingFrom descriptor: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : String(text.prefix(200))
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "this machine" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The data folder's lock file is a symbolic link, which the lock never follows (see `DataFolderLock`).
public struct DataFolderLockIsLink: Error, CustomStringConvertible {
    public let path: String

    public var description: String {
        "\(path) is a symbolic link; recipe-storage keeps a lock file of its own there: remove the link and start it again"
    }
}

/// Another `recipe-storage` holds the data folder (see `DataFolderLock`).
public struct DataFolderInUse: Error, CustomStringConvertible {
    public let folder: URL
    /// What the lock file says of the storage holding it, when it says anything.
    public let holder: String?

    public var description: String {
        "another recipe-storage is using the data folder \(folder.path)\(holder.map { " (\($0))" } ?? ""); two on one folder would remove each other's photos. Stop that one first, or give this one a folder of its own with --data or RECIPES_DATA"
    }
}
